"""Byte-level BPE (GPT-2 pre-tokenisation) trainer and encoder in pure Python.

Writes a Hugging Face tokenizers-format tokenizer.json that transformers.js loads with
tokenizer_config.json {"tokenizer_class": "GPT2Tokenizer"}. The encoder here must give the same
ids as the Node loader (test/engine/models checks this on fixtures).
"""
import argparse, collections, json, os, sys
import regex

PAT = regex.compile(r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""")
EOT = '<|endoftext|>'


def bytes_to_unicode():
    bs = list(range(ord('!'), ord('~') + 1)) + list(range(ord('¡'), ord('¬') + 1)) + list(range(ord('®'), ord('ÿ') + 1))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, map(chr, cs)))


B2U = bytes_to_unicode()
U2B = {v: k for k, v in B2U.items()}


def pretokens(text):
    for m in PAT.finditer(text):
        yield ''.join(B2U[b] for b in m.group(0).encode('utf-8'))


def train(texts, vocab_size, min_freq=2):
    words = collections.Counter()
    for t in texts:
        words.update(pretokens(t))
    # word symbols as lists; pair statistics with an index of which words hold each pair
    wlist = [(list(w), c) for w, c in words.items() if len(w) > 1]
    pairs = collections.Counter()
    where = collections.defaultdict(set)
    for i, (sym, c) in enumerate(wlist):
        for a, b in zip(sym, sym[1:]):
            pairs[a, b] += c
            where[a, b].add(i)
    vocab = [B2U[b] for b in range(256)]
    merges = []
    target = vocab_size - 1  # room for <|endoftext|>
    import heapq
    heap = [(-c, p) for p, c in pairs.items()]
    heapq.heapify(heap)
    while len(vocab) < target and heap:
        negc, p = heapq.heappop(heap)
        c = pairs.get(p, 0)
        if c != -negc:
            if c > 0:
                heapq.heappush(heap, (-c, p))
            continue
        if c < min_freq:
            break
        a, b = p
        new = a + b
        merges.append(p)
        vocab.append(new)
        changed = set()
        for i in list(where[p]):
            sym, wc = wlist[i]
            j = 0
            out = []
            while j < len(sym):
                if j < len(sym) - 1 and sym[j] == a and sym[j + 1] == b:
                    out.append(new)
                    j += 2
                else:
                    out.append(sym[j])
                    j += 1
            if len(out) == len(sym):
                continue
            for x, y in zip(sym, sym[1:]):
                pairs[x, y] -= wc
                changed.add((x, y))
            for x, y in zip(out, out[1:]):
                pairs[x, y] += wc
                where[x, y].add(i)
                changed.add((x, y))
            wlist[i] = (out, wc)
        pairs.pop(p, None)
        where.pop(p, None)
        for q in changed:
            cq = pairs.get(q, 0)
            if cq > 0 and q != p:
                heapq.heappush(heap, (-cq, q))
    vocab.append(EOT)
    return vocab, merges


class Tokenizer:
    def __init__(self, vocab, merges):
        self.vocab = {t: i for i, t in enumerate(vocab)}
        self.inv = vocab
        self.ranks = {tuple(m): i for i, m in enumerate(merges)}
        self.cache = {}
        self.eot = self.vocab[EOT]

    @classmethod
    def load(cls, path):
        j = json.load(open(path))
        vocab = [None] * (max(j['model']['vocab'].values()) + 1)
        for t, i in j['model']['vocab'].items():
            vocab[i] = t
        for t in j['added_tokens']:
            vocab[t['id']] = t['content']
        return cls(vocab, [m.split(' ') for m in j['model']['merges']])

    def bpe(self, w):
        if w in self.cache:
            return self.cache[w]
        sym = list(w)
        while len(sym) > 1:
            best, bi = None, -1
            for i in range(len(sym) - 1):
                r = self.ranks.get((sym[i], sym[i + 1]))
                if r is not None and (best is None or r < best):
                    best, bi = r, i
            if best is None:
                break
            a, b = sym[bi], sym[bi + 1]
            out, i = [], 0
            while i < len(sym):
                if i < len(sym) - 1 and sym[i] == a and sym[i + 1] == b:
                    out.append(a + b)
                    i += 2
                else:
                    out.append(sym[i])
                    i += 1
            sym = out
        ids = [self.vocab[s] for s in sym]
        if len(self.cache) < 2_000_000:
            self.cache[w] = ids
        return ids

    def encode(self, text):
        ids = []
        parts = text.split(EOT)
        for k, part in enumerate(parts):
            if k:
                ids.append(self.eot)
            for w in pretokens(part):
                ids.extend(self.bpe(w))
        return ids

    def decode(self, ids):
        out = bytearray()
        res = []
        for i in ids:
            t = self.inv[i]
            if t == EOT:
                res.append(out.decode('utf-8', errors='replace'))
                res.append(EOT)
                out = bytearray()
            else:
                out.extend(U2B[ch] for ch in t)
        res.append(out.decode('utf-8', errors='replace'))
        return ''.join(res)


def save(vocab, merges, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    eot_id = len(vocab) - 1
    tok = {
        'version': '1.0', 'truncation': None, 'padding': None,
        'added_tokens': [{'id': eot_id, 'content': EOT, 'single_word': False, 'lstrip': False,
                          'rstrip': False, 'normalized': False, 'special': True}],
        'normalizer': None,
        'pre_tokenizer': {'type': 'ByteLevel', 'add_prefix_space': False, 'trim_offsets': True, 'use_regex': True},
        'post_processor': {'type': 'ByteLevel', 'add_prefix_space': True, 'trim_offsets': False, 'use_regex': True},
        'decoder': {'type': 'ByteLevel', 'add_prefix_space': True, 'trim_offsets': True, 'use_regex': True},
        'model': {'type': 'BPE', 'dropout': None, 'unk_token': None, 'continuing_subword_prefix': '',
                  'end_of_word_suffix': '', 'fuse_unk': False, 'byte_fallback': False,
                  'vocab': {t: i for i, t in enumerate(vocab)},
                  'merges': [a + ' ' + b for a, b in merges]},
    }
    json.dump(tok, open(os.path.join(out_dir, 'tokenizer.json'), 'w'), ensure_ascii=False)
    cfg = {'tokenizer_class': 'GPT2Tokenizer', 'model_max_length': 1024, 'bos_token': EOT, 'eos_token': EOT,
           'unk_token': EOT, 'pad_token': EOT, 'add_prefix_space': False, 'clean_up_tokenization_spaces': False}
    json.dump(cfg, open(os.path.join(out_dir, 'tokenizer_config.json'), 'w'), indent=1)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument('--work', required=True)
    ap.add_argument('--vocab-size', type=int, default=8192)
    ap.add_argument('--sample-mb', type=float, default=8)
    args = ap.parse_args(argv)
    import random, time
    t0 = time.time()
    docs = [json.loads(l) for l in open(os.path.join(args.work, 'corpus', 'train.jsonl'))]
    random.Random(0).shuffle(docs)
    sample, n = [], 0
    for d in docs:
        if n > args.sample_mb * 1e6:
            break
        sample.append(d['text'])
        n += len(d['text'])
    vocab, merges = train(sample, args.vocab_size)
    save(vocab, merges, os.path.join(args.work, 'tokenizer'))
    print(f'bpe: {len(vocab)} tokens, {len(merges)} merges from {n / 1e6:.1f} MB in {time.time() - t0:.0f}s')


if __name__ == '__main__':
    main()
