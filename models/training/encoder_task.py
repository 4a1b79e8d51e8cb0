"""Write the encoder card's held-out retrieval task as JSON, without torch, so that an exported
graph can be scored by the product's own loader (eval_encoder.ts). Same task as
train_encoder.eval_task: every definition stub of the validation files is a candidate, queries
are call contexts (at most 12 per file, seed 1), the gold answer is the callee's stub.

  /usr/bin/python3 corpus.py --work W --src-zip /usr/lib/jvm/openjdk-17/lib/src.zip
  /usr/bin/python3 encoder_task.py --work W --out W/encoder_task.json
"""
import argparse, json, os, random
from pairs import definitions, call_pairs


def build(work, seed=1):
    rng = random.Random(seed)
    docs, queries, gold = [], [], []
    for line in open(os.path.join(work, 'corpus', 'val.jsonl')):
        d = json.loads(line)
        defs = definitions(d['text'], d['lang'])
        base = len(docs)
        docs += [x['stub'] for x in defs]
        for q, k in call_pairs(d['text'], d['lang'], defs, rng, max_per_file=12):
            queries.append(q)
            gold.append(base + k)
    return {'docs': docs, 'queries': queries, 'gold': gold}


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument('--work', required=True)
    ap.add_argument('--out', required=True)
    args = ap.parse_args(argv)
    task = build(args.work)
    json.dump(task, open(args.out, 'w'))
    print(json.dumps({'candidates': len(task['docs']), 'queries': len(task['queries'])}))


if __name__ == '__main__':
    main()
