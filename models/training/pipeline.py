"""The whole training pipeline in one process: corpus -> BPE tokenizer -> token ids -> causal LM ->
ONNX export -> contrastive encoder (+ TF-IDF comparison) -> ONNX export -> Node test fixtures.

  /usr/bin/python3 pipeline.py --work .work --models .. [--lm-minutes 90] [--enc-minutes 25]
      [--debian .work/debian] [--dev-repos DIR ...] [--tokenizer-from ../coderag-lm]
      [--lm-init-onnx ../coderag-lm] [--lm-size small|medium|large] [--device cpu|cuda|auto]
  /usr/bin/python3 pipeline.py --smoke --work /tmp/x --models /tmp/x/models   # tiny, seconds
  --from STAGE resumes (stages: corpus tokenizer encode rag lm lm2 export-lm encoder export-encoder fixtures)
"""
import argparse, json, os, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402

STAGES = ['corpus', 'tokenizer', 'encode', 'rag', 'lm', 'lm2', 'export-lm', 'encoder', 'export-encoder', 'fixtures']


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--work', required=True)
    ap.add_argument('--models', required=True, help='folder receiving coderag-lm/ and coderag-encoder/')
    ap.add_argument('--fixtures', default=None, help='tokenizer parity fixture path (default: none)')
    ap.add_argument('--lm-minutes', type=float, default=90)
    ap.add_argument('--lm2-minutes', type=float, default=0, help='a warm restart of the LM from its best checkpoint (batch 8; lr 2e-4 after a warm start, else 1e-3); 0: none')
    ap.add_argument('--lm2-rag-frac', type=float, default=0.3, help='the retrieval-augmented share of the warm restart\'s batches (0 without the rag stage)')
    ap.add_argument('--lm-rag-frac', type=float, default=0.5, help='share of each LM batch from the retrieval-augmented examples (rag stage); 0: plain windows only')
    ap.add_argument('--enc-minutes', type=float, default=25)
    ap.add_argument('--from', dest='start', default='corpus', choices=STAGES)
    ap.add_argument('--to', dest='stop', default='fixtures', choices=STAGES)
    ap.add_argument('--smoke', action='store_true', help='tiny corpus and models, a few steps')
    ap.add_argument('--debian', default=None, help='folder filled by fetch_debian.sh (default WORK/debian when it exists)')
    ap.add_argument('--dev-repos', nargs='*', default=[], help='checked-out dev repositories whose near-copies the corpus drops')
    ap.add_argument('--tokenizer-from', default=None, help='copy this model folder\'s tokenizer instead of training one (keeps a warm start and the encoder compatible)')
    ap.add_argument('--lm-init-onnx', default=None, help='warm-start the LM from this shipped model folder')
    ap.add_argument('--lm-size', default=None, help='train_lm.py --size preset (ignored with --lm-init-onnx)')
    ap.add_argument('--device', default='cpu', choices=('cpu', 'cuda', 'auto'))
    args = ap.parse_args()
    torch.set_num_threads(2)
    import corpus, bpe, encode_corpus, rag_examples, train_lm, export_lm, train_encoder, export_encoder, make_fixtures
    import shutil
    w = ['--work', args.work]
    debian = args.debian or os.path.join(args.work, 'debian')
    corpus_args = (['--debian', debian] if os.path.isdir(debian) else []) + (['--dev-repos'] + args.dev_repos if args.dev_repos else [])

    def tokenizer():
        if not args.tokenizer_from:
            return bpe.main(w + (['--vocab-size', '600', '--sample-mb', '0.3'] if s else []))
        os.makedirs(os.path.join(args.work, 'tokenizer'), exist_ok=True)
        for f in ('tokenizer.json', 'tokenizer_config.json'):
            shutil.copy(os.path.join(args.tokenizer_from, f), os.path.join(args.work, 'tokenizer', f))
    # A warm start (the shipped model on the corpus) as the shipped model's last run was trained:
    # batch 8 x 512, lr 4e-4, 30 warm-up steps, 60% Python windows, half of each batch
    # retrieval-augmented examples (rag_examples.py); batch 8 is also the fastest per token, with
    # bf16 autocast on a CPU with native bf16 and fp32 without (train_lm.py's --bf16 -1 picks).
    rag = ['--rag-frac', str(args.lm_rag_frac)] if args.lm_rag_frac > 0 else []
    lm_args = ['--device', args.device] + rag + (['--init-onnx', args.lm_init_onnx, '--batch', '8', '--lr', '4e-4', '--warmup', '30', '--py-frac', '0.6'] if args.lm_init_onnx else
                                                  ['--size', args.lm_size] if args.lm_size else [])
    # The restart of a warm start as the shipped model's second run: lr 2e-4, 20 warm-up steps, 30%
    # retrieval-augmented (its held-out loss still fell at the end of the first run).
    rag2 = ['--rag-frac', str(args.lm2_rag_frac)] if args.lm_rag_frac > 0 and args.lm2_rag_frac > 0 else []
    lm2_args = (['--lr', '2e-4', '--warmup', '20', '--py-frac', '0.6'] if args.lm_init_onnx else ['--lr', '1e-3', '--warmup', '100']) + rag2
    lm2 = os.path.join(args.work, 'lm2', 'best.pt')
    lm1 = os.path.join(args.work, 'lm', 'best.pt')

    def final_lm():
        # The LM the export and the encoder use: the warm restart's when it ran this time, else the first run's.
        return lm2 if args.lm2_minutes > 0 and os.path.exists(lm2) else lm1
    s = args.smoke
    plan = {
        'corpus': lambda: corpus.main(w + corpus_args + (['--max-python-files', '40', '--max-java-mb', '0.4', '--val-frac', '0.2'] if s else [])),
        'tokenizer': tokenizer,
        'encode': lambda: encode_corpus.main(w + (['--procs', '1'] if s else [])),
        'rag': lambda: args.lm_rag_frac > 0 and rag_examples.main(w + (['--per-split', 'train=40,val=8', '--ctx', '128', '--frag-share', '0.6', '--procs', '1'] if s else [])),
        'lm': lambda: train_lm.main(w + (['--max-steps', '3', '--layers', '1', '--d', '32', '--heads', '2', '--ctx', '128', '--batch', '2',
                                          '--eval-tokens', '512', '--device', args.device] + rag if s else ['--minutes', str(args.lm_minutes)] + lm_args)),
        'lm2': lambda: (not s and args.lm2_minutes > 0) and train_lm.main(w + ['--init', os.path.join(args.work, 'lm', 'best.pt'), '--out', os.path.join(args.work, 'lm2'),
                                                                         '--minutes', str(args.lm2_minutes), '--batch', '8', '--device', args.device] + lm2_args),
        'export-lm': lambda: export_lm.main(w + ['--out', os.path.join(args.models, 'coderag-lm')] + ['--ckpt', final_lm()]),
        'encoder': lambda: train_encoder.main(w + (['--max-steps', '2', '--batch', '4', '--layers', '1', '--max-files', '10',
                                                    '--skip-baseline', '--max-len', '64', '--eval-max-files', '3'] if s else
                                                   ['--minutes', str(args.enc_minutes)] + (['--init', final_lm()] if os.path.exists(final_lm()) else []))),
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
