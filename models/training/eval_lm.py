"""Bits per character of a language model on the corpus's held-out split, per language.

  /usr/bin/python3 eval_lm.py --work WORK --onnx ../coderag-lm          # a shipped model folder
  /usr/bin/python3 eval_lm.py --work WORK --ckpt WORK/lm/best.pt        # a training checkpoint
Held-out tokens are scored in 512-token windows (no context across windows): every window, or
--max-tokens // 512 windows spread evenly over the split (this CPU scores ~4k tokens/s). Bits per
character = mean nats per token of the language x its held-out tokens / ln 2 / its characters.
"""
import argparse, json, math, os, sys, time
import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpt import GPT  # noqa: E402
from train_lm import evaluate  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument('--work', required=True)
    ap.add_argument('--onnx', default=None)
    ap.add_argument('--ckpt', default=None)
    ap.add_argument('--ctx', type=int, default=512)
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--json', default=None)
    ap.add_argument('--max-tokens', type=int, default=262144, help='0: every held-out token')
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    if args.onnx:
        from onnx_weights import load_gpt_from_onnx
        model, _ = load_gpt_from_onnx(args.onnx)
        label = args.onnx
    else:
        ck = torch.load(args.ckpt, map_location='cpu')
        c = ck['cfg']
        model = GPT(c['vocab'], c['n_positions'], c['d'], c['n_layer'], c['n_head'])
        model.load_state_dict(ck['model'])
        label = args.ckpt
    val = np.load(os.path.join(args.work, 'tokens', 'val.npy'))
    lang = np.load(os.path.join(args.work, 'tokens', 'val_lang.npy'))
    chars = {'python': 0, 'java': 0}
    for line in open(os.path.join(args.work, 'corpus', 'val.jsonl')):
        d = json.loads(line)
        chars[d['lang']] += len(d['text'])
    t0 = time.time()
    ev = evaluate(model, val, lang, min(args.ctx, model.cfg['n_positions']), args.max_tokens or len(val))
    ntok = {'python': int((lang[1:] == 0).sum()), 'java': int((lang[1:] == 1).sum())}
    res = {'model': label, 'seconds': round(time.time() - t0, 1), 'scored_tokens': ev['tokens']}
    for l in ('python', 'java'):
        res[l] = {'nats_per_token': round(ev[l], 4), 'chars': chars[l],
                  'bits_per_char': round(ev[l] * ntok[l] / math.log(2) / max(chars[l], 1), 4)}
    print(json.dumps(res))
    if args.json:
        json.dump(res, open(args.json, 'w'), indent=1)


if __name__ == '__main__':
    main()
