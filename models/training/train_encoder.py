"""Train the code encoder contrastively (in-batch negatives), evaluate it against TF-IDF, export ONNX.

Initialised from the causal LM's weights (embeddings + blocks), attention made bidirectional,
mean pooling + L2 normalisation. Pairs come from pairs.py (call context -> definition stub,
signature/docstring -> body) over training files; the evaluation uses held-out files only.
"""
import argparse, collections, json, math, os, random, re, shutil, time
import numpy as np
import torch
import torch.nn.functional as F
from bpe import Tokenizer
from gpt import GPT
from pairs import definitions, call_pairs, doc_pairs
from onnx_half import halve_initializers, round_module_to_half

WORD = re.compile(r'\b\w\w+\b')


class Encoder(torch.nn.Module):
    def __init__(self, gpt):
        super().__init__()
        self.gpt = gpt

    def forward(self, input_ids, attention_mask):
        h, _ = self.gpt.hidden(input_ids, attention_mask)
        return h


def pool(h, mask):
    m = mask.unsqueeze(-1).to(h.dtype)
    v = (h * m).sum(1) / m.sum(1).clamp(min=1)
    return F.normalize(v, dim=-1)


def warmup_cosine(opt, base_lr, step, frac, warmup=30):
    """Sets the learning rate for this step: linear warm-up, then cosine over the time budget (frac of it used)."""
    lr = base_lr * min(1.0, (step + 1) / warmup) * (0.5 * (1 + math.cos(math.pi * frac)))
    for g in opt.param_groups:
        g['lr'] = lr
    return lr


def batchify(seqs, pad):
    L = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), L), pad, dtype=torch.long)
    mask = torch.zeros((len(seqs), L), dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, :len(s)] = torch.tensor(s)
        mask[i, :len(s)] = 1
    return ids, mask


def embed(model, tok, texts, max_len, bs=32, keep='head'):
    out = []
    model.eval()
    with torch.no_grad():
        for i in range(0, len(texts), bs):
            seqs = [tok.encode(t) or [tok.eot] for t in texts[i:i + bs]]
            seqs = [s[-max_len:] if keep == 'tail' else s[:max_len] for s in seqs]
            ids, mask = batchify(seqs, tok.eot)
            out.append(pool(model(ids, mask), mask))
    model.train()
    return torch.cat(out)


def tfidf_scores(queries, docs):
    def toks(t):
        return collections.Counter(w.lower() for w in WORD.findall(t))
    dt = [toks(d) for d in docs]
    df = collections.Counter(w for c in dt for w in c)
    N = len(docs)
    idf = {w: math.log((1 + N) / (1 + n)) + 1 for w, n in df.items()}

    def vec(c):
        v = {w: n * idf.get(w, 0.0) for w, n in c.items() if w in idf}
        norm = math.sqrt(sum(x * x for x in v.values())) or 1.0
        return {w: x / norm for w, x in v.items()}
    dv = [vec(c) for c in dt]
    inv = collections.defaultdict(list)
    for j, v in enumerate(dv):
        for w, x in v.items():
            inv[w].append((j, x))
    S = np.zeros((len(queries), N), dtype=np.float32)
    for i, q in enumerate(queries):
        for w, x in vec(toks(q)).items():
            for j, y in inv[w]:
                S[i, j] += x * y
    return S


def rank_metrics(S, gold, k=10):
    mrr = rec = r1 = 0.0
    for i, g in enumerate(gold):
        order = np.argsort(-S[i], kind='stable')[:k]
        hits = np.nonzero(order == g)[0]
        if len(hits):
            mrr += 1.0 / (hits[0] + 1)
            rec += 1
            r1 += hits[0] == 0
    n = len(gold)
    return {'mrr@10': mrr / n, 'recall@10': rec / n, 'recall@1': r1 / n, 'queries': n}


def eval_task(work, seed=1, max_files=10 ** 9):
    """Held-out task: every definition in the validation files is a candidate; queries are call contexts."""
    rng = random.Random(seed)
    pool_docs, queries, gold = [], [], []
    for n, line in enumerate(open(os.path.join(work, 'corpus', 'val.jsonl'))):
        if n >= max_files:
            break
        d = json.loads(line)
        defs = definitions(d['text'], d['lang'])
        base = len(pool_docs)
        pool_docs += [x['stub'] for x in defs]
        for q, k in call_pairs(d['text'], d['lang'], defs, rng, max_per_file=12):
            queries.append(q)
            gold.append(base + k)
    return pool_docs, queries, gold


def evaluate(model, tok, work, max_len, task=None):
    docs, queries, gold = task or eval_task(work)
    D = embed(model, tok, docs, max_len)
    Q = embed(model, tok, queries, max_len, keep='tail')
    return rank_metrics((Q @ D.t()).numpy(), gold), len(docs)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument('--work', required=True)
    ap.add_argument('--init', default=None, help='LM checkpoint (default WORK/lm/best.pt)')
    ap.add_argument('--out', default=None, help='default WORK/encoder')
    ap.add_argument('--minutes', type=float, default=20)
    ap.add_argument('--max-steps', type=int, default=10 ** 9)
    ap.add_argument('--layers', type=int, default=4)
    ap.add_argument('--batch', type=int, default=32)
    ap.add_argument('--train-len', type=int, default=128)
    ap.add_argument('--max-len', type=int, default=256)
    ap.add_argument('--lr', type=float, default=5e-4)
    ap.add_argument('--temp', type=float, default=0.05)
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--max-files', type=int, default=10 ** 9)
    ap.add_argument('--skip-baseline', action='store_true')
    ap.add_argument('--bf16', type=int, default=1)
    ap.add_argument('--eval-max-files', type=int, default=10 ** 9)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    out = args.out or os.path.join(args.work, 'encoder')
    os.makedirs(out, exist_ok=True)
    tok = Tokenizer.load(os.path.join(args.work, 'tokenizer', 'tokenizer.json'))
    ck = torch.load(args.init or os.path.join(args.work, 'lm', 'best.pt'))
    c = ck['cfg']
    lm = GPT(c['vocab'], c['n_positions'], c['d'], c['n_layer'], c['n_head'])
    lm.load_state_dict(ck['model'])
    gpt = GPT(c['vocab'], c['n_positions'], c['d'], args.layers, c['n_head'], causal=False)
    sd = {k: v for k, v in lm.state_dict().items() if not k.startswith('blocks.') or int(k.split('.')[1]) < args.layers}
    gpt.load_state_dict(sd)
    model = Encoder(gpt)
    args.train_len = min(args.train_len, c['n_positions'])
    args.max_len = min(args.max_len, c['n_positions'])
    log = open(os.path.join(out, 'train.log'), 'a')

    def say(msg):
        print(msg, flush=True)
        log.write(msg + '\n')
        log.flush()

    t0 = time.time()
    rng = random.Random(0)
    pairs = []
    for n, line in enumerate(open(os.path.join(args.work, 'corpus', 'train.jsonl'))):
        if n >= args.max_files:
            break
        d = json.loads(line)
        defs = definitions(d['text'], d['lang'])
        for q, k in call_pairs(d['text'], d['lang'], defs, rng):
            pairs.append((q, defs[k]['stub'], ('call', n, k)))
        for q, t in doc_pairs(defs, rng):
            pairs.append((q, t, ('doc', n, len(pairs))))
    rng.shuffle(pairs)
    enc_pairs = []
    for q, t, key in pairs:
        qi, ti = tok.encode(q)[-args.train_len:], tok.encode(t)[:args.train_len]
        if qi and ti:
            enc_pairs.append((qi, ti, key))
    ncall = sum(1 for p in enc_pairs if p[2][0] == 'call')
    say(f'encoder: {len(enc_pairs)} pairs ({ncall} call->definition, {len(enc_pairs) - ncall} doc->body) in {time.time() - t0:.0f}s')
    task = eval_task(args.work, max_files=args.eval_max_files)
    docs, queries, gold = task
    tf = rank_metrics(tfidf_scores(queries, docs), gold)
    say(f'task: {len(queries)} queries, {len(docs)} candidates; tfidf {json.dumps(tf)}')
    results = {'task': {'queries': len(queries), 'candidates': len(docs)}, 'tfidf': tf}
    if not args.skip_baseline:
        base, _ = evaluate(model, tok, args.work, args.max_len, task)
        results['lm_init_meanpool'] = base
        say(f'lm-init encoder (no contrastive training) {json.dumps(base)}')

    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    budget = args.minutes * 60
    t_start = time.time()
    step, i, ema = 0, 0, None
    model.train()
    while time.time() - t_start < budget and step < args.max_steps:
        lr = warmup_cosine(opt, args.lr, step, (time.time() - t_start) / budget)
        batch, seen = [], set()
        while len(batch) < args.batch:
            if i >= len(enc_pairs):
                i = 0
                rng.shuffle(enc_pairs)
            p = enc_pairs[i]
            i += 1
            if p[2] in seen:
                continue
            seen.add(p[2])
            batch.append(p)
        qi, qm = batchify([p[0] for p in batch], tok.eot)
        ti, tm = batchify([p[1] for p in batch], tok.eot)
        with torch.autocast('cpu', dtype=torch.bfloat16, enabled=bool(args.bf16)):
            hq, ht = model(qi, qm), model(ti, tm)
        q = pool(hq.float(), qm)
        t = pool(ht.float(), tm)
        logits = q @ t.t() / args.temp
        labels = torch.arange(len(batch))
        loss = (F.cross_entropy(logits, labels) + F.cross_entropy(logits.t(), labels)) / 2
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        ema = float(loss) if ema is None else 0.95 * ema + 0.05 * float(loss)
        if step % 20 == 0:
            say(f'step {step} loss {ema:.3f} lr {lr:.2e} {(time.time() - t_start) / 60:.1f} min')
    minutes = (time.time() - t_start) / 60
    round_module_to_half(model)
    enc, _ = evaluate(model, tok, args.work, args.max_len, task)
    results.update({'encoder': enc, 'steps': step, 'minutes': minutes, 'batch': args.batch, 'pairs': len(enc_pairs),
                    'call_pairs': ncall, 'layers': args.layers})
    say(f'encoder after {step} steps ({minutes:.1f} min): {json.dumps(enc)}')
    torch.save({'model': gpt.state_dict(), 'cfg': {**c, 'n_layer': args.layers}, 'results': results},
               os.path.join(out, 'encoder.pt'))
    json.dump(results, open(os.path.join(out, 'results.json'), 'w'), indent=1)


if __name__ == '__main__':
    main()
