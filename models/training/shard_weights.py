"""Move a trained LM between machines within the device tool's limits (files of at most 16 MiB):

  python3 shard_weights.py split --ckpt WORK/lm/best.pt --out OUT [--max-mib 15]   # fp16 shards lm-weights.K.pt
  python3 shard_weights.py join --shards OUT --ckpt WORK/lm-gpu/best.pt            # a checkpoint export_lm.py reads
"""
import argparse, glob, os
import torch


def split(ckpt, out, max_mib):
    ck = torch.load(ckpt, map_location='cpu')
    os.makedirs(out, exist_ok=True)
    meta = {'cfg': ck['cfg'], 'state': {k: v for k, v in ck['state'].items() if k != 'history'}, 'history': ck['state'].get('history', [])}
    shards, cur, size = [], {}, 0
    for k, v in ck['model'].items():
        t = v.detach().to(torch.float16) if v.is_floating_point() else v.detach()
        n = t.numel() * t.element_size()
        if cur and size + n > max_mib * 2 ** 20:
            shards.append(cur)
            cur, size = {}, 0
        cur[k] = t
        size += n
    if cur:
        shards.append(cur)
    for old in glob.glob(os.path.join(out, 'lm-weights.*.pt')):
        os.remove(old)
    for i, sh in enumerate(shards):
        torch.save({'part': i, 'parts': len(shards), 'meta': meta if i == 0 else None, 'tensors': sh}, os.path.join(out, f'lm-weights.{i}.pt'))
    print(f'shard_weights: {len(shards)} shards in {out}')


def join(src, ckpt):
    files = sorted(glob.glob(os.path.join(src, 'lm-weights.*.pt')), key=lambda p: int(p.rsplit('.', 2)[1]))
    if not files:
        raise SystemExit(f'shard_weights: no lm-weights.*.pt in {src}')
    parts = [torch.load(f, map_location='cpu') for f in files]
    if parts[0]['parts'] != len(parts) or sorted(p['part'] for p in parts) != list(range(len(parts))):
        raise SystemExit(f"shard_weights: {len(parts)} of {parts[0]['parts']} shards in {src}")
    meta = parts[0]['meta']
    model = {k: v.float() if v.is_floating_point() else v for p in parts for k, v in p['tensors'].items()}
    state = dict(meta['state'], history=meta['history'])
    os.makedirs(os.path.dirname(os.path.abspath(ckpt)), exist_ok=True)
    torch.save({'model': model, 'state': state, 'cfg': meta['cfg']}, ckpt)
    print(f"shard_weights: {ckpt} (step {state['step']}, best val {state['best']:.3f})")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument('verb', choices=('split', 'join'))
    ap.add_argument('--ckpt', required=True)
    ap.add_argument('--out', help='split: folder receiving the shards')
    ap.add_argument('--shards', help='join: folder holding the shards')
    ap.add_argument('--max-mib', type=float, default=15)
    args = ap.parse_args(argv)
    if args.verb == 'split':
        split(args.ckpt, args.out, args.max_mib)
    else:
        join(args.shards, args.ckpt)


if __name__ == '__main__':
    main()
