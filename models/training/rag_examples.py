"""Retrieval-augmented training examples for the causal LM.

The product shows the model definitions from other files of the repository above the code at the
cursor (the line prompt's comment block; Rambo's commented fragments in body mode). A model trained
only on plain files has never seen that layout and barely uses it. Each example here is a cut of a
corpus file whose next lines use names defined in other files of the same repository, preceded by
the heads of those definitions (and of some that are not used, as retrieval's misses are), laid out
in one of the two prompt forms. The loss counts only the tokens after the fragments (the file's
header, its code before the cut and the continuation), so the model learns to continue code with the
fragments in view, not to write fragments.

  /usr/bin/python3 rag_examples.py --work .work [--per-split train=12000,val=600] [--ctx 512] [--frag-share 0.4]

Output: WORK/tokens/rag_{split}.npz with `x` (N x ctx+1 uint16, end-of-text padded), `start` (first
position whose token is a target) and `length` (tokens before the padding), per example; and
`lang` (0 Python, 1 Java). Needs WORK/corpus/{train,val}.jsonl and WORK/tokenizer/tokenizer.json.
"""
import argparse, json, os, re, time
from collections import defaultdict
from multiprocessing import Pool
import numpy as np
from bpe import Tokenizer

PY_DEF = re.compile(r'^([ \t]*)(?:async[ \t]+)?def[ \t]+([A-Za-z_]\w*)[ \t]*\(')
PY_CLASS = re.compile(r'^([ \t]*)class[ \t]+([A-Za-z_]\w*)')
PY_GLOBAL = re.compile(r'^([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?=(?!=)')
JAVA_TYPE = re.compile(r'^[ \t]*(?:(?:public|protected|private|static|final|abstract|sealed|strictfp)[ \t]+)*(?:class|interface|enum|record|@interface)[ \t]+([A-Za-z_]\w*)')
JAVA_METHOD = re.compile(r'^[ \t]*(?:(?:public|protected|private|static|final|abstract|synchronized|native|default|strictfp)[ \t]+)*(?:<[^>;=]+>[ \t]+)?[\w$.<>\[\],? ]+[ \t]+([a-zA-Z_]\w*)[ \t]*\([^;]*$')
JAVA_FIELD = re.compile(r'^[ \t]*(?:(?:public|protected|private|static|final|volatile|transient)[ \t]+)+[\w$.<>\[\],? ]+[ \t]+([a-zA-Z_]\w*)[ \t]*(?:=|;)')
NOT_JAVA_METHOD = {'return', 'new', 'else', 'throw', 'if', 'for', 'while', 'switch', 'catch', 'synchronized', 'try', 'do', 'case'}
IDENT = re.compile(r'[A-Za-z_]\w*')
KEYWORDS = set('''False None True and as assert async await break class continue def del elif else except finally for from global
if import in is lambda nonlocal not or pass raise return try while with yield self cls abstract boolean byte char double enum extends
final float implements instanceof int interface long native package private protected public short static super switch synchronized
this throws transient void volatile null true false var String Object List Map Override'''.split())


def definitions(lang, text):
    """(name, first line, head text) of the file's definitions: functions, methods, classes, globals / fields."""
    lines = text.split('\n')
    out = []
    for i, line in enumerate(lines):
        if lang == 'python':
            m = PY_DEF.match(line) or PY_CLASS.match(line)
            if m:
                out.append((m.group(2), i, '\n'.join(lines[i:i + 6])))
                continue
            m = PY_GLOBAL.match(line)
            if m and not m.group(1).startswith('_'):
                out.append((m.group(1), i, line))
        else:
            m = JAVA_TYPE.match(line)
            if m:
                out.append((m.group(1), i, '\n'.join(lines[i:i + 6])))
                continue
            m = JAVA_METHOD.match(line)
            if m and m.group(1) not in NOT_JAVA_METHOD and not line.lstrip().split(' ', 1)[0] in NOT_JAVA_METHOD:
                out.append((m.group(1), i, '\n'.join(lines[i:i + 6])))
                continue
            m = JAVA_FIELD.match(line)
            if m:
                out.append((m.group(1), i, line))
    return out


def comment(lang):
    return '#' if lang == 'python' else '//'


def block_form(lang, frags):
    """The line prompt's layout (fitPromptBudget.snippetBlock): headed snippets in a string / comment block."""
    c = comment(lang)
    body = '\n'.join(f'{c} {p}\n{t.rstrip()}\n' for p, t in frags)
    return f"'''\n{body}'''\n" if lang == 'python' else f'/*\n{body}*/\n'


def rambo_form(lang, frags):
    """Rambo's layout (bodyPrompt.ts): each fragment headed and commented, then the instruction."""
    c = comment(lang)
    parts = [f'{c} Here are some relevant code fragments from other files of the repo:\n']
    for p, t in frags:
        body = '\n'.join(f'{c} {l}' for l in t.rstrip().split('\n'))
        parts.append(f'{c} the below code fragment can be found in:\n{c} {p}\n{body}\n')
    parts.append(f'{c} Based on above, complete the method body of the class\n')
    return ''.join(parts)


TOK = None


def init(path):
    global TOK
    TOK = Tokenizer.load(path)


def build(job):
    """One example's token ids, or None: job = (lang, path, text, cut line, fragments, form, ctx)."""
    lang, path, text, cut, frags, form, ctx, frag_share = job
    lines = text.split('\n')
    T = ctx + 1
    header = TOK.encode(f'{comment(lang)} {path}\n')
    cont = TOK.encode('\n'.join(lines[cut:cut + 60]) + '\n')[:T]
    # The fragments take at most frag_share of the window, dropped from the first (farthest from the
    # cursor); where not even the last fits, the fragments shrink to their first lines.
    render = block_form if form == 'block' else rambo_form
    frag_ids = []
    for shown in (frags, [(p, t.split('\n', 1)[0]) for p, t in frags]):
        while shown:
            frag_ids = TOK.encode(render(lang, shown))
            if len(frag_ids) <= int(frag_share * T):
                break
            shown = shown[1:]
            frag_ids = []
        if frag_ids:
            break
    if not frag_ids:
        return None
    room = T - len(frag_ids) - len(header)
    keep_cont = min(len(cont), max(min(96, room // 2), room // 3))
    pre_room = room - keep_cont
    # The code before the cut, its tail cut at a line boundary (as keepTail does).
    pre_lines = lines[:cut]
    pre_ids = []
    lo = len(pre_lines)
    while lo > 0:
        trial = TOK.encode('\n'.join(pre_lines[lo - 1:cut]) + '\n')
        if len(trial) > pre_room:
            break
        pre_ids = trial
        lo -= 1
    if len(pre_ids) < min(32, T // 8):
        return None
    ids = frag_ids + header + pre_ids + cont
    ids = ids[:T]
    start = len(frag_ids)
    n = len(ids)
    ids = ids + [TOK.eot] * (T - n)
    return lang, ids, start, n


def jobs_for(rows, rng, count, ctx, frag_share):
    """Sample (file, cut, fragments, form) jobs: the next lines use a name defined in another file of the repository."""
    by_repo = defaultdict(list)
    for r in rows:
        by_repo[(r['repo'], r['lang'])].append(r)
    repos = [(k, v) for k, v in by_repo.items() if len(v) >= 3]
    index = {}
    for (repo, lang), files in repos:
        defs = defaultdict(list)
        for fi, r in enumerate(files):
            for name, line, head in definitions(lang, r['text']):
                defs[name].append((fi, head))
        index[(repo, lang)] = defs
    # Half the examples in each language; repositories within a language by their size.
    pools = {}
    for lang in ('python', 'java'):
        ids = [i for i, (k, _) in enumerate(repos) if k[1] == lang]
        w = np.array([sum(min(len(r['text']), 200_000) for r in repos[i][1]) for i in ids], dtype=np.float64)
        if ids:
            pools[lang] = (ids, w / w.sum())
    want = {lang: count // len(pools) for lang in pools}
    out = []
    tries = 0
    while any(want.values()) and tries < count * 60:
        tries += 1
        open_langs = [l for l in want if want[l]]
        lang = open_langs[int(rng.integers(len(open_langs)))]
        ids, w = pools[lang]
        (repo, lang), files = repos[ids[rng.choice(len(ids), p=w)]]
        fi = int(rng.integers(len(files)))
        r = files[fi]
        lines = r['text'].split('\n')
        if len(lines) < 20:
            continue
        cut = int(rng.integers(8, len(lines) - 2))
        if not lines[cut].strip():
            continue
        # Names the next lines use that the code just before does not show (copying them needs the
        # fragments), defined in few files of the repository (a distinctive definition, not `get`).
        near = set(IDENT.findall('\n'.join(lines[cut:cut + 4]))) - KEYWORDS - set(IDENT.findall('\n'.join(lines[max(0, cut - 40):cut])))
        defs = index[(repo, lang)]
        relevant = []
        for name in sorted(near):
            if len(name) < 3 or len({h[0] for h in defs.get(name, ())}) > 5:
                continue
            hits = [h for h in defs.get(name, ()) if h[0] != fi]
            if hits:
                h = hits[int(rng.integers(len(hits)))]
                relevant.append((files[h[0]]['path'].split('/', 1)[-1], h[1]))
        if not relevant:
            continue
        rng.shuffle(relevant)
        relevant = relevant[:3]
        names = list(defs)
        distract = []
        for _ in range(int(rng.integers(0, 4))):
            hits = defs[names[int(rng.integers(len(names)))]]
            h = hits[int(rng.integers(len(hits)))]
            if h[0] != fi:
                distract.append((files[h[0]]['path'].split('/', 1)[-1], h[1]))
        frags = list(dict.fromkeys(distract + relevant)) if rng.random() < 0.7 else list(dict.fromkeys(relevant + distract))
        if rng.random() < 0.3:
            rng.shuffle(frags)
        form = 'block' if rng.random() < 0.5 else 'rambo'
        out.append((lang, r['path'].split('/', 1)[-1], r['text'], cut, frags, form, ctx, frag_share))
        want[lang] -= 1
    return out


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument('--work', required=True)
    ap.add_argument('--per-split', default='train=12000,val=600')
    ap.add_argument('--ctx', type=int, default=512)
    ap.add_argument('--frag-share', type=float, default=0.4, help='the fragments take at most this share of an example')
    ap.add_argument('--procs', type=int, default=2)
    ap.add_argument('--seed', type=int, default=0)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    t0 = time.time()
    tok = os.path.join(args.work, 'tokenizer', 'tokenizer.json')
    for spec in args.per_split.split(','):
        split, n = spec.split('=')
        rows = [json.loads(l) for l in open(os.path.join(args.work, 'corpus', split + '.jsonl'))]
        jobs = jobs_for(rows, rng, int(n) * 11 // 10, args.ctx, args.frag_share)
        with Pool(args.procs, initializer=init, initargs=(tok,)) as pool:
            res = [x for x in pool.map(build, jobs, chunksize=16) if x is not None][:int(n)]
        x = np.array([ids for _, ids, _, _ in res], dtype=np.uint16).reshape(len(res), args.ctx + 1)
        np.savez(os.path.join(args.work, 'tokens', f'rag_{split}.npz'), x=x,
                 start=np.array([s for _, _, s, _ in res], dtype=np.int32),
                 length=np.array([k for _, _, _, k in res], dtype=np.int32),
                 lang=np.array([0 if l == 'python' else 1 for l, _, _, _ in res], dtype=np.uint8))
        langs = [l for l, _, _, _ in res]
        print(f"rag {split}: {len(res)} examples ({langs.count('python')} Python, {langs.count('java')} Java), "
              f"{sum(k - s for _, _, s, k in res) / 1e6:.2f}M target tokens, {time.time() - t0:.0f}s", flush=True)


if __name__ == '__main__':
    main()
