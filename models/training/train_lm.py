"""Train the causal code LM under a wall-clock budget, checkpointing as it goes.

The learning rate follows warm-up + cosine decay over the *time* budget, so a run stopped by
--minutes ends annealed. Checkpoints: WORK/lm/last.pt (every --ckpt-minutes) and best.pt (by
validation loss on held-out files). Resume with --resume (same --out).

  --device cpu|cuda|auto   cuda: bf16 autocast (fp16 with a gradient scaler where bf16 is not
                           supported), batches moved to the GPU; cpu: bf16 autocast where the CPU has native bf16 (--bf16 -1) or --bf16 1
  --size tiny|small|medium|large   presets for --layers/--d/--heads (small = the shipped 4x192)
  --init-onnx DIR          warm start from a shipped model folder (models/coderag-lm)
"""
import argparse, json, math, os, time
import numpy as np
import torch
from gpt import GPT


def cpu_has_native_bf16():
    """Whether this CPU computes bf16 matmuls natively (AMX-BF16 or AVX512-BF16); Linux only, else False."""
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                if line.startswith('flags'):
                    flags = set(line.split(':', 1)[1].split())
                    return bool(flags & {'amx_bf16', 'avx512_bf16'})
    except OSError:
        pass
    return False


SIZES = {'tiny': (1, 32, 2), 'small': (4, 192, 4), 'medium': (6, 256, 8), 'large': (8, 384, 8)}


def add_by_lang(tot, loss, lang):
    """Adds per-token losses to tot[language] = [sum, count]; lang holds each token's language (0 Python, 1 Java)."""
    for l in (0, 1):
        m = lang == l
        tot[l][0] += float(loss[m].sum())
        tot[l][1] += int(m.sum())


def evaluate(model, val, lang, T, max_tokens, device='cpu'):
    """Mean loss (nats/token) per language over T-token windows of the held-out tokens: every
    window when max_tokens covers them all, else max_tokens // T windows spread evenly over the
    split (so both languages are sampled)."""
    model.eval()
    nwin = (len(val) - 1) // T
    take = min(nwin, max(1, max_tokens // T))
    starts = (np.linspace(0, nwin - 1, take).astype(np.int64) * T) if take < nwin else np.arange(nwin) * T
    tot = {0: [0.0, 0], 1: [0.0, 0]}
    with torch.no_grad():
        for k in range(0, len(starts), 8):
            st = starts[k:k + 8]
            x = torch.from_numpy(np.stack([val[i:i + T] for i in st]).astype(np.int64)).to(device)
            y = torch.from_numpy(np.stack([val[i + 1:i + T + 1] for i in st]).astype(np.int64)).to(device)
            logits = model(x).float()
            loss = torch.nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1), reduction='none').cpu()
            add_by_lang(tot, loss, torch.from_numpy(np.stack([lang[i + 1:i + T + 1] for i in st]).astype(np.int64)).view(-1))
    model.train()
    allsum = tot[0][0] + tot[1][0]
    alln = tot[0][1] + tot[1][1]
    return {'loss': allsum / max(alln, 1), 'python': tot[0][0] / max(tot[0][1], 1),
            'java': tot[1][0] / max(tot[1][1], 1), 'tokens': alln}


def load_rag(work, split, T):
    """rag_examples.py's examples of a split cut to T tokens: (inputs, targets with -100 where no
    loss, lang); only examples with targets within the first T positions; None when there are none."""
    path = os.path.join(work, 'tokens', f'rag_{split}.npz')
    if not os.path.exists(path):
        return None
    d = np.load(path)
    keep = d['start'] < min(T, d['x'].shape[1] - 1) - 8
    if not keep.any():
        return None
    x = d['x'][keep].astype(np.int64)
    y = x[:, 1:].copy()
    pos = np.arange(1, x.shape[1])[None, :]
    y[(pos < d['start'][keep][:, None]) | (pos >= d['length'][keep][:, None])] = -100
    return x[:, :T], y[:, :T], d['lang'][keep]


def evaluate_rag(model, rag, device='cpu'):
    """Mean loss (nats/token) per language on the tokens after the fragments of the held-out rag examples."""
    x, y, lang = rag
    model.eval()
    tot = {0: [0.0, 0], 1: [0.0, 0]}
    with torch.no_grad():
        for k in range(0, len(x), 8):
            xb = torch.from_numpy(x[k:k + 8]).to(device)
            yb = torch.from_numpy(y[k:k + 8]).to(device)
            logits = model(xb).float()
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.size(-1)), yb.reshape(-1), reduction='none').cpu()
            # Each target token takes its example's language; tokens without loss (-100) take none.
            lg = torch.from_numpy(lang[k:k + 8].astype(np.int64))[:, None].repeat(1, yb.size(1))
            lg[yb.cpu() == -100] = -1
            add_by_lang(tot, loss, lg.view(-1))
    model.train()
    return {'python': tot[0][0] / tot[0][1] if tot[0][1] else float('nan'), 'java': tot[1][0] / tot[1][1] if tot[1][1] else float('nan')}


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument('--work', required=True)
    ap.add_argument('--out', default=None, help='default WORK/lm')
    ap.add_argument('--minutes', type=float, default=60)
    ap.add_argument('--max-steps', type=int, default=10 ** 9)
    ap.add_argument('--size', default=None, choices=sorted(SIZES), help='preset layers/d/heads (overrides them)')
    ap.add_argument('--layers', type=int, default=4)
    ap.add_argument('--d', type=int, default=192)
    ap.add_argument('--heads', type=int, default=4)
    ap.add_argument('--device', default='cpu', choices=('cpu', 'cuda', 'auto'))
    ap.add_argument('--ctx', type=int, default=512)
    ap.add_argument('--batch', type=int, default=4)
    ap.add_argument('--lr', type=float, default=2e-3)
    ap.add_argument('--warmup', type=int, default=50)
    ap.add_argument('--ckpt-minutes', type=float, default=1)
    ap.add_argument('--eval-minutes', type=float, default=10)
    ap.add_argument('--eval-tokens', type=int, default=65536)
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--resume', action='store_true')
    ap.add_argument('--init', default=None, help='start from this checkpoint\'s weights (a warm restart: new optimiser, new schedule)')
    ap.add_argument('--init-onnx', default=None, help='start from a shipped model folder\'s ONNX weights (a warm restart)')
    ap.add_argument('--bf16', type=int, default=-1,
                    help='CPU: bf16 autocast for matmuls, 1 on, 0 off, -1 (default) on where the CPU has native bf16 '
                         '(AMX-BF16 or AVX512-BF16: about 2x faster there; without them about 15x slower than fp32)')
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--rag-frac', type=float, default=0.0,
                    help='share of each batch drawn from WORK/tokens/rag_train.npz (rag_examples.py: code after retrieved definitions; loss after them only)')
    ap.add_argument('--py-frac', type=float, default=0.5, help='share of each batch drawn from Python windows (the rest Java); -1: uniform over tokens')
    args = ap.parse_args(argv)
    if args.size:
        args.layers, args.d, args.heads = SIZES[args.size]
    device = ('cuda' if torch.cuda.is_available() else 'cpu') if args.device == 'auto' else args.device
    if device == 'cuda' and not torch.cuda.is_available():
        raise SystemExit('train_lm: --device cuda but torch sees no CUDA device (torch.cuda.is_available() is False)')
    amp_dtype = torch.bfloat16
    if device == 'cuda' and not torch.cuda.is_bf16_supported():
        amp_dtype = torch.float16
    use_amp = device == 'cuda' or (cpu_has_native_bf16() if args.bf16 < 0 else bool(args.bf16))
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    out = args.out or os.path.join(args.work, 'lm')
    os.makedirs(out, exist_ok=True)
    train = np.load(os.path.join(args.work, 'tokens', 'train.npy'))
    train_lang_path = os.path.join(args.work, 'tokens', 'train_lang.npy')
    starts_by_lang = None
    if args.py_frac >= 0 and os.path.exists(train_lang_path):
        tl = np.load(train_lang_path, mmap_mode='r')[:len(train) - args.ctx - 1]
        starts_by_lang = [np.flatnonzero(tl == l).astype(np.int64) for l in (0, 1)]
        if min(len(a) for a in starts_by_lang) == 0:
            starts_by_lang = None
    val = np.load(os.path.join(args.work, 'tokens', 'val.npy'))
    val_lang = np.load(os.path.join(args.work, 'tokens', 'val_lang.npy'))
    vocab = len(json.load(open(os.path.join(args.work, 'tokenizer', 'tokenizer.json')))['model']['vocab'])
    model = GPT(vocab, args.ctx, args.d, args.layers, args.heads)
    if args.init_onnx:
        from onnx_weights import load_gpt_from_onnx
        model, init_info = load_gpt_from_onnx(args.init_onnx)
        if model.cfg['vocab'] != vocab:
            raise SystemExit(f"train_lm: {args.init_onnx} has {model.cfg['vocab']} tokens, the corpus tokenizer {vocab}")
        args.layers, args.d, args.heads, args.ctx = model.cfg['n_layer'], model.cfg['d'], model.cfg['n_head'], model.cfg['n_positions']
    rag_train = load_rag(args.work, 'train', args.ctx) if args.rag_frac > 0 else None
    rag_val = load_rag(args.work, 'val', args.ctx) if args.rag_frac > 0 else None
    if args.rag_frac > 0 and rag_train is None:
        raise SystemExit(f'train_lm: --rag-frac needs examples with targets within {args.ctx} tokens in WORK/tokens/rag_train.npz (run rag_examples.py with --ctx {args.ctx})')
    model.to(device)
    nparams = sum(p.numel() for p in model.parameters())
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{'params': decay, 'weight_decay': 0.1}, {'params': no_decay, 'weight_decay': 0.0}],
                            lr=args.lr, betas=(0.9, 0.95))
    state = {'step': 0, 'elapsed': 0.0, 'tokens': 0, 'best': float('inf'), 'history': []}
    if args.init:
        ck = torch.load(args.init, map_location=device)
        model.load_state_dict(ck['model'])
        state['init'] = {'path': args.init, 'step': ck['state']['step'], 'tokens': ck['state']['tokens'], 'minutes': ck['state']['elapsed'] / 60}
    if args.init_onnx:
        state['init'] = init_info
    scaler = torch.cuda.amp.GradScaler() if device == 'cuda' and amp_dtype == torch.float16 else None
    if args.resume and os.path.exists(os.path.join(out, 'last.pt')):
        ck = torch.load(os.path.join(out, 'last.pt'), map_location=device)
        model.load_state_dict(ck['model'])
        opt.load_state_dict(ck['opt'])
        state = ck['state']
    budget = args.minutes * 60
    rng = np.random.default_rng(args.seed + state['step'])
    log = open(os.path.join(out, 'train.log'), 'a')

    def say(msg):
        print(msg, flush=True)
        log.write(msg + '\n')
        log.flush()

    def save(name):
        torch.save({'model': model.state_dict(), 'opt': opt.state_dict(), 'state': state, 'cfg': model.cfg,
                    'args': vars(args)}, os.path.join(out, name + '.tmp'))
        os.replace(os.path.join(out, name + '.tmp'), os.path.join(out, name))

    say(f'lm: {nparams / 1e6:.2f}M params ({args.layers}x{args.d}, {args.heads} heads), {len(train) / 1e6:.1f}M train tokens, '
        f'budget {args.minutes} min, device {device}' + (f', {amp_dtype} autocast'.replace('torch.', '') if use_amp else ', fp32') + (f", from {state['init']['path']}" if state.get('init') else '')
        + (f", resumed at step {state['step']}" if state['step'] else ''))
    if rag_val is not None and state['step'] == 0:
        r0 = evaluate_rag(model, rag_val, device)
        say(f"start rag (held-out repositories, tokens after the fragments): py {r0['python']:.3f} java {r0['java']:.3f}")
    t_start = time.time() - state['elapsed']
    last_ck = last_ev = time.time()
    T, B = args.ctx, args.batch
    loss_ema = None
    model.train()
    while True:
        elapsed = time.time() - t_start
        if elapsed >= budget or state['step'] >= args.max_steps:
            break
        frac = elapsed / budget
        lr = args.lr * min(1.0, (state['step'] + 1) / args.warmup) * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac)))
        for g in opt.param_groups:
            g['lr'] = lr
        if starts_by_lang is not None:
            npy = int(rng.binomial(B, args.py_frac))
            ix = np.concatenate([rng.choice(starts_by_lang[0], npy), rng.choice(starts_by_lang[1], B - npy)])
        else:
            ix = rng.integers(0, len(train) - T - 1, B)
        xs = np.stack([train[i:i + T] for i in ix]).astype(np.int64)
        ys = np.stack([train[i + 1:i + T + 1] for i in ix]).astype(np.int64)
        if rag_train is not None:
            nrag = int(rng.binomial(B, args.rag_frac))
            if nrag:
                j = rng.integers(0, len(rag_train[0]), nrag)
                xs[:nrag], ys[:nrag] = rag_train[0][j, :T], rag_train[1][j, :T]
        x = torch.from_numpy(xs).to(device, non_blocking=True)
        y = torch.from_numpy(ys).to(device, non_blocking=True)
        with torch.autocast(device, dtype=amp_dtype, enabled=use_amp):
            loss = model(x, y)
        opt.zero_grad(set_to_none=True)
        if scaler:
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            scaler.step(opt)
            scaler.update()
        else:
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
        state['step'] += 1
        state['tokens'] += B * T
        state['elapsed'] = time.time() - t_start
        loss_ema = float(loss) if loss_ema is None else 0.98 * loss_ema + 0.02 * float(loss)
        if state['step'] % 50 == 0:
            say(f"step {state['step']} train {loss_ema:.3f} lr {lr:.2e} tok {state['tokens'] / 1e6:.2f}M "
                f"{state['tokens'] / max(state['elapsed'], 1):.0f} tok/s {state['elapsed'] / 60:.1f} min")
        if time.time() - last_ev > args.eval_minutes * 60:
            ev = evaluate(model, val, val_lang, T, args.eval_tokens, device)
            state['history'].append({'step': state['step'], 'minutes': state['elapsed'] / 60, 'train': loss_ema, **ev})
            if rag_val is not None:
                ev['rag'] = evaluate_rag(model, tuple(a[:200] for a in rag_val), device)
            say(f"eval step {state['step']}: val {ev['loss']:.3f} (py {ev['python']:.3f} java {ev['java']:.3f})"
                + (f" rag py {ev['rag']['python']:.3f} java {ev['rag']['java']:.3f}" if 'rag' in ev else ''))
            if ev['loss'] < state['best']:
                state['best'] = ev['loss']
                save('best.pt')
            last_ev = time.time()
        if time.time() - last_ck > args.ckpt_minutes * 60:
            save('last.pt')
            last_ck = time.time()
    ev = evaluate(model, val, val_lang, T, args.eval_tokens, device)
    if rag_val is not None:
        ev['rag'] = evaluate_rag(model, rag_val, device)
        say(f"final rag (held-out repositories, tokens after the fragments): py {ev['rag']['python']:.3f} java {ev['rag']['java']:.3f}")
    state['history'].append({'step': state['step'], 'minutes': state['elapsed'] / 60, 'train': loss_ema, **ev})
    say(f"final step {state['step']}: val {ev['loss']:.3f} (py {ev['python']:.3f} java {ev['java']:.3f})")
    if ev['loss'] <= state['best']:
        state['best'] = ev['loss']
        save('best.pt')
    save('last.pt')
    say('done')


if __name__ == '__main__':
    main()
