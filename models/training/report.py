"""Collect the figures the model cards quote into models/training/results.json: corpus and token
counts, the LM's loss on *all* held-out validation files (per language), its training history, the
encoder's retrieval scores against TF-IDF, and the shipped file sizes."""
import argparse, json, os, time
import numpy as np
import torch
from gpt import GPT
from train_lm import evaluate


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument('--work', required=True)
    ap.add_argument('--models', required=True)
    ap.add_argument('--out', default=os.path.join(os.path.dirname(os.path.abspath(__file__)), 'results.json'))
    ap.add_argument('--skip-lm-eval', action='store_true')
    args = ap.parse_args(argv)
    torch.set_num_threads(2)
    w = args.work
    res = {'corpus': json.load(open(os.path.join(w, 'corpus', 'stats.json'))),
           'tokens': json.load(open(os.path.join(w, 'tokens', 'stats.json')))}
    # The shipped LM: the warm restart's best checkpoint when there is one.
    lm2 = os.path.join(w, 'lm2', 'best.pt')
    ck = torch.load(lm2 if os.path.exists(lm2) else os.path.join(w, 'lm', 'best.pt'))
    c = ck['cfg']
    lm = {'config': c, 'params': None, 'state': {k: v for k, v in ck['state'].items() if k != 'history'},
          'history': ck['state']['history'], 'args': ck['args']}
    model = GPT(c['vocab'], c['n_positions'], c['d'], c['n_layer'], c['n_head'])
    model.load_state_dict(ck['model'])
    lm['params'] = sum(p.numel() for p in model.parameters())
    cached = os.path.join(w, 'lm_full_val.json')
    if os.path.exists(cached) and json.load(open(cached)).get('step') == ck['state']['step']:
        lm['full_validation'] = json.load(open(cached))
    elif not args.skip_lm_eval:
        val = np.load(os.path.join(w, 'tokens', 'val.npy'))
        lang = np.load(os.path.join(w, 'tokens', 'val_lang.npy'))
        t0 = time.time()
        lm['full_validation'] = evaluate(model, val, lang, c['n_positions'], len(val))
        lm['full_validation']['seconds'] = time.time() - t0
        lm['full_validation']['step'] = ck['state']['step']
        json.dump(lm['full_validation'], open(cached, 'w'))
        print('lm full validation:', lm['full_validation'])
    res['lm'] = lm
    enc_path = os.path.join(w, 'encoder', 'results.json')
    if os.path.exists(enc_path):
        res['encoder'] = json.load(open(enc_path))
    sizes = {}
    for root, _, files in os.walk(args.models):
        if 'training' in root.split(os.sep):
            continue
        for f in files:
            p = os.path.join(root, f)
            sizes[os.path.relpath(p, args.models)] = os.path.getsize(p)
    res['sizes'] = sizes
    res['total_shipped_bytes'] = sum(sizes.values())
    json.dump(res, open(args.out, 'w'), indent=1)
    print(f'report: {args.out}; shipped {res["total_shipped_bytes"] / 1e6:.1f} MB')


if __name__ == '__main__':
    main()
