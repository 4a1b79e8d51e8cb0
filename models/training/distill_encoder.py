"""A shallower encoder distilled from the shipped one (issue 21: the dense path's throughput).

On this 2-core CPU an item's embedding time is mostly per token and per layer (int8 MatMuls are a
third of it; LayerNorm, GELU, softmax and the heads' reshapes the rest), so the only large saving
that keeps items whole is fewer layers. The student keeps the teacher's tokenizer, embeddings,
width and final LayerNorm and starts from some of its blocks (--blocks, default 0,2); it is
trained to give the teacher's vectors:
  loss = (1 - cos(student, teacher)) for queries and for definitions
       + KL(teacher || student) of the in-batch query -> definition similarities (temperature 0.05),
so that both the vectors and their ranking carry over. Texts are mined from the training corpus
as train_encoder.py mines them (call context -> definition stub, signature + docstring -> body);
half the definitions get the knowledge base's `// path` / `# path` first line, as the product's
items have. Lengths as the product embeds: queries keep their last 256 tokens, definitions their
first 256.

  /usr/bin/python3 distill_encoder.py --work W --teacher EXPORTED.onnx --out W/encoder-distilled \
      [--layers 2] [--blocks 0,2] [--minutes 20]
writes OUT/encoder.pt in train_encoder.py's format (export_encoder.py --ckpt OUT/encoder.pt exports
it) and OUT/results.json with teacher and student on the held-out task (train_encoder.eval_task).
The teacher is export_encoder.py's float16-stored graph; its weights are read by name (onnx_weights.onnx_gpt_state).
"""
import argparse, json, os, random, time
import torch
import torch.nn.functional as F
from bpe import Tokenizer
from gpt import GPT
from onnx_weights import onnx_gpt_state, onnx_int8_gpt_state
from pairs import definitions, call_pairs, doc_pairs
from train_encoder import Encoder, pool, batchify, evaluate, eval_task, warmup_cosine


def block_count(sd):
    """How many blocks a GPT state dict holds."""
    return 1 + max(int(k.split('.')[1]) for k in sd if k.startswith('blocks.'))


def build(sd, layers, n_head, blocks=None):
    vocab, d = sd['wte.weight'].shape
    n_pos = sd['wpe.weight'].shape[0]
    gpt = GPT(vocab, n_pos, d, layers, n_head, causal=False)
    if blocks is None:
        gpt.load_state_dict(sd)
    else:
        mine = {}
        for k, v in sd.items():
            if k.startswith('blocks.'):
                src = int(k.split('.')[1])
                if src in blocks:
                    mine['blocks.%d.%s' % (blocks.index(src), k.split('.', 2)[2])] = v
            else:
                mine[k] = v
        gpt.load_state_dict(mine)
    return gpt


def mine_texts(work, tok, max_len, rng, max_files=10 ** 9, item_len=None):
    pairs = []
    for n, line in enumerate(open(os.path.join(work, 'corpus', 'train.jsonl'))):
        if n >= max_files:
            break
        d = json.loads(line)
        defs = definitions(d['text'], d['lang'])
        mark = '// ' if d['lang'] == 'java' else '# '
        for q, k in call_pairs(d['text'], d['lang'], defs, rng):
            stub = defs[k]['stub']
            if rng.random() < 0.5:
                stub = f"{mark}{d['path']}\n{stub}"
            pairs.append((q, stub))
        for q, t in doc_pairs(defs, rng):
            pairs.append((q, t))
    rng.shuffle(pairs)
    out = []
    for q, t in pairs:
        qi, ti = tok.encode(q)[-max_len:], tok.encode(t)[:item_len or max_len]
        if qi and ti:
            out.append((qi, ti))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument('--work', required=True)
    ap.add_argument('--teacher', required=True, help="export_encoder.py's graph of the shipped encoder")
    ap.add_argument('--out', required=True)
    ap.add_argument('--layers', type=int, default=2)
    ap.add_argument('--blocks', default='0,2', help="teacher blocks the student's blocks start from")
    ap.add_argument('--heads', type=int, default=4)
    ap.add_argument('--minutes', type=float, default=20)
    ap.add_argument('--max-steps', type=int, default=10 ** 9)
    ap.add_argument('--batch', type=int, default=32)
    ap.add_argument('--max-len', type=int, default=256)
    ap.add_argument('--item-len', type=int, default=None, help="definitions' first N tokens (default --max-len; the product embeds items at config.json's item_max_length)")
    ap.add_argument('--init', default=None, help="start the student from this graph's weights instead of teacher blocks (an int8 graph is widened back: a shipped student trained further)")
    ap.add_argument('--lr', type=float, default=3e-4)
    ap.add_argument('--temp', type=float, default=0.05)
    ap.add_argument('--threads', type=int, default=2)
    ap.add_argument('--max-files', type=int, default=10 ** 9)
    ap.add_argument('--eval-max-files', type=int, default=10 ** 9)
    args = ap.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    os.makedirs(args.out, exist_ok=True)
    log = open(os.path.join(args.out, 'train.log'), 'a')

    def say(msg):
        print(msg, flush=True)
        log.write(msg + '\n')
        log.flush()

    tok = Tokenizer.load(os.path.join(args.work, 'tokenizer', 'tokenizer.json'))
    sd = onnx_gpt_state(args.teacher)
    teacher = Encoder(build(sd, block_count(sd), args.heads)).eval()
    blocks = [int(b) for b in args.blocks.split(',')][:args.layers]
    if args.init:
        init = onnx_int8_gpt_state(args.init)
        gpt = build(init, block_count(init), args.heads)
        blocks = f'init {args.init}'
    else:
        gpt = build(sd, args.layers, args.heads, blocks)
    student = Encoder(gpt)
    t0 = time.time()
    rng = random.Random(0)
    data = mine_texts(args.work, tok, args.max_len, rng, args.max_files, args.item_len)
    say(f'distill: {len(data)} query/definition pairs in {time.time() - t0:.0f}s; student {len(gpt.blocks)} blocks from teacher blocks {blocks}')
    task = eval_task(args.work, max_files=args.eval_max_files)
    results = {'task': {'queries': len(task[1]), 'candidates': len(task[0])}}
    results['teacher'], _ = evaluate(teacher, tok, args.work, args.max_len, task)
    results['student_init'], _ = evaluate(student, tok, args.work, args.max_len, task)
    say(f"teacher {json.dumps(results['teacher'])}\nstudent before {json.dumps(results['student_init'])}")
    opt = torch.optim.AdamW(student.parameters(), lr=args.lr, weight_decay=0.01)
    budget = args.minutes * 60
    t_start = time.time()
    step, i, ema = 0, 0, None
    student.train()
    while time.time() - t_start < budget and step < args.max_steps:
        lr = warmup_cosine(opt, args.lr, step, (time.time() - t_start) / budget)
        if i + args.batch > len(data):
            i = 0
            rng.shuffle(data)
        batch = data[i:i + args.batch]
        i += args.batch
        qi, qm = batchify([p[0] for p in batch], tok.eot)
        ti, tm = batchify([p[1] for p in batch], tok.eot)
        with torch.no_grad(), torch.autocast('cpu', dtype=torch.bfloat16):
            tq, tt = pool(teacher(qi, qm).float(), qm), pool(teacher(ti, tm).float(), tm)
        with torch.autocast('cpu', dtype=torch.bfloat16):
            hq, ht = student(qi, qm), student(ti, tm)
        sq, st = pool(hq.float(), qm), pool(ht.float(), tm)
        cos = (2 - (sq * tq).sum(-1).mean() - (st * tt).sum(-1).mean())
        kl = F.kl_div(F.log_softmax(sq @ st.t() / args.temp, -1), F.softmax(tq @ tt.t() / args.temp, -1), reduction='batchmean')
        loss = cos + kl
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(student.parameters(), 1.0)
        opt.step()
        step += 1
        ema = float(loss) if ema is None else 0.95 * ema + 0.05 * float(loss)
        if step % 20 == 0:
            say(f'step {step} loss {ema:.4f} (cos {float(cos):.4f} kl {float(kl):.4f}) lr {lr:.2e} {(time.time() - t_start) / 60:.1f} min')
    minutes = (time.time() - t_start) / 60
    student.eval()
    results['student'], _ = evaluate(student, tok, args.work, args.max_len, task)
    results.update({'steps': step, 'minutes': minutes, 'batch': args.batch, 'pairs': len(data), 'layers': len(gpt.blocks), 'blocks': blocks})
    say(f"student after {step} steps ({minutes:.1f} min): {json.dumps(results['student'])}")
    cfg = {'vocab': gpt.cfg['vocab'], 'n_positions': gpt.cfg['n_positions'], 'd': gpt.cfg['d'], 'n_layer': len(gpt.blocks), 'n_head': args.heads}
    torch.save({'model': gpt.state_dict(), 'cfg': cfg, 'results': results}, os.path.join(args.out, 'encoder.pt'))
    json.dump(results, open(os.path.join(args.out, 'results.json'), 'w'), indent=1)


if __name__ == '__main__':
    main()
