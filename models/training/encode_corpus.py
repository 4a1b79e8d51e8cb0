"""Tokenise the corpus with the trained BPE: WORK/tokens/{train,val}.npy (uint16, files joined by <|endoftext|>)."""
import argparse, json, os, time
from multiprocessing import Pool
import numpy as np
from bpe import Tokenizer

TOK = None


def init(path):
    global TOK
    TOK = Tokenizer.load(path)


def enc(line):
    d = json.loads(line)
    return d['lang'], TOK.encode(d['text']) + [TOK.eot]


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument('--work', required=True)
    ap.add_argument('--procs', type=int, default=2)
    args = ap.parse_args(argv)
    os.makedirs(os.path.join(args.work, 'tokens'), exist_ok=True)
    stats = {}
    t0 = time.time()
    with Pool(args.procs, initializer=init, initargs=(os.path.join(args.work, 'tokenizer', 'tokenizer.json'),)) as pool:
        for split in ('train', 'val'):
            lines = open(os.path.join(args.work, 'corpus', split + '.jsonl')).readlines()
            res = pool.map(enc, lines, chunksize=8)
            arr = np.array([i for _, ids in res for i in ids], dtype=np.uint16)
            lang = np.array([0 if l == 'python' else 1 for l, ids in res for _ in ids], dtype=np.uint8)
            np.save(os.path.join(args.work, 'tokens', split + '.npy'), arr)
            np.save(os.path.join(args.work, 'tokens', split + '_lang.npy'), lang)
            stats[split] = {'tokens': int(arr.size), 'python_tokens': int((lang == 0).sum()), 'java_tokens': int((lang == 1).sum())}
    json.dump(stats, open(os.path.join(args.work, 'tokens', 'stats.json'), 'w'), indent=1)
    print('tokens:', stats, f'{time.time() - t0:.0f}s')


if __name__ == '__main__':
    main()
