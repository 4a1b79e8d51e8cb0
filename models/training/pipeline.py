"""The whole training pipeline in one process: corpus -> BPE tokenizer -> token ids -> causal LM ->
ONNX export -> contrastive encoder (+ TF-IDF comparison) -> ONNX export -> Node test fixtures.

  /usr/bin/python3 pipeline.py --work .work --models .. [--lm-minutes 90] [--enc-minutes 25]
  /usr/bin/python3 pipeline.py --smoke --work /tmp/x --models /tmp/x/models   # tiny, seconds
  --from STAGE resumes (stages: corpus tokenizer encode lm lm2 export-lm encoder export-encoder fixtures)
"""
import argparse, json, os, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402

STAGES = ['corpus', 'tokenizer', 'encode', 'lm', 'lm2', 'export-lm', 'encoder', 'export-encoder', 'fixtures']


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--work', required=True)
    ap.add_argument('--models', required=True, help='folder receiving coderag-lm/ and coderag-encoder/')
    ap.add_argument('--fixtures', default=None, help='tokenizer parity fixture path (default: none)')
    ap.add_argument('--lm-minutes', type=float, default=90)
    ap.add_argument('--lm2-minutes', type=float, default=85, help='a warm restart of the LM from its best checkpoint (lr 1e-3, batch 8); 0: none')
    ap.add_argument('--enc-minutes', type=float, default=25)
    ap.add_argument('--from', dest='start', default='corpus', choices=STAGES)
    ap.add_argument('--to', dest='stop', default='fixtures', choices=STAGES)
    ap.add_argument('--smoke', action='store_true', help='tiny corpus and models, a few steps')
    args = ap.parse_args()
    torch.set_num_threads(2)
    import corpus, bpe, encode_corpus, train_lm, export_lm, train_encoder, export_encoder, make_fixtures
    w = ['--work', args.work]
    lm2 = os.path.join(args.work, 'lm2', 'best.pt')
    s = args.smoke
    plan = {
        'corpus': lambda: corpus.main(w + (['--max-python-files', '40', '--max-java-mb', '0.4', '--max-sympy-mb', '0', '--val-frac', '0.2'] if s else [])),
        'tokenizer': lambda: bpe.main(w + (['--vocab-size', '600', '--sample-mb', '0.3'] if s else [])),
        'encode': lambda: encode_corpus.main(w + (['--procs', '1'] if s else [])),
        'lm': lambda: train_lm.main(w + (['--max-steps', '3', '--layers', '1', '--d', '32', '--heads', '2', '--ctx', '64', '--batch', '2',
                                          '--eval-tokens', '512'] if s else ['--minutes', str(args.lm_minutes)])),
        'lm2': lambda: (not s and args.lm2_minutes > 0) and train_lm.main(w + ['--init', os.path.join(args.work, 'lm', 'best.pt'), '--out', os.path.join(args.work, 'lm2'),
                                                                         '--minutes', str(args.lm2_minutes), '--lr', '1e-3', '--batch', '8', '--warmup', '100']),
        'export-lm': lambda: export_lm.main(w + ['--out', os.path.join(args.models, 'coderag-lm')] + (['--ckpt', lm2] if os.path.exists(lm2) else [])),
        'encoder': lambda: train_encoder.main(w + (['--max-steps', '2', '--batch', '4', '--layers', '1', '--max-files', '10',
                                                    '--skip-baseline', '--max-len', '64', '--eval-max-files', '3'] if s else
                                                   ['--minutes', str(args.enc_minutes)] + (['--init', lm2] if os.path.exists(lm2) else []))),
        'export-encoder': lambda: export_encoder.main(w + ['--out', os.path.join(args.models, 'coderag-encoder')] + (['--max-length', '64'] if s else [])),
        'fixtures': lambda: args.fixtures and make_fixtures.main(['--tokenizer', os.path.join(args.models, 'coderag-lm', 'tokenizer.json'), '--out', args.fixtures]),
    }
    for st in STAGES[STAGES.index(args.start):STAGES.index(args.stop) + 1]:
        t0 = time.time()
        print(f'== {st}', flush=True)
        plan[st]()
        print(f'== {st} done in {time.time() - t0:.0f}s', flush=True)


if __name__ == '__main__':
    main()
