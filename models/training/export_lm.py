"""Export a trained LM checkpoint to the transformers.js layout: OUT/{config.json,tokenizer*.json,onnx/decoder_model_merged.onnx}."""
import argparse, json, os, shutil
import numpy as np
import onnx
import torch
from gpt import GPT, export_decoder
from onnx_half import halve_initializers, round_module_to_half


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument('--work', required=True)
    ap.add_argument('--ckpt', default=None, help='default WORK/lm/best.pt')
    ap.add_argument('--out', required=True)
    args = ap.parse_args(argv)
    ck = torch.load(args.ckpt or os.path.join(args.work, 'lm', 'best.pt'), map_location='cpu')
    c = ck['cfg']
    model = GPT(c['vocab'], c['n_positions'], c['d'], c['n_layer'], c['n_head'])
    model.load_state_dict(ck['model'])
    model.eval()
    round_module_to_half(model)
    os.makedirs(os.path.join(args.out, 'onnx'), exist_ok=True)
    path = os.path.join(args.out, 'onnx', 'decoder_model_merged.onnx')
    export_decoder(model, path)
    halve_initializers(path)
    eos = c['vocab'] - 1
    cfg = {'model_type': 'gpt2', 'architectures': ['GPT2LMHeadModel'], 'vocab_size': c['vocab'],
           'n_positions': c['n_positions'], 'n_ctx': c['n_positions'], 'n_embd': c['d'], 'n_layer': c['n_layer'],
           'n_head': c['n_head'], 'n_inner': 4 * c['d'], 'activation_function': 'gelu', 'layer_norm_epsilon': 1e-5,
           'bos_token_id': eos, 'eos_token_id': eos, 'pad_token_id': eos, 'use_cache': True, 'tie_word_embeddings': True,
           'coderag': {'positions_from_attention_mask': True, 'training_step': ck['state']['step'],
                       'training_tokens': ck['state']['tokens'], 'best_val_loss': ck['state']['best']}}
    json.dump(cfg, open(os.path.join(args.out, 'config.json'), 'w'), indent=1)
    for f in ('tokenizer.json', 'tokenizer_config.json'):
        shutil.copy(os.path.join(args.work, 'tokenizer', f), os.path.join(args.out, f))
    # reference logits for the Node parity check
    ids = torch.tensor([[5, 17, 300, 42, 1000, 7]]) % c['vocab']
    with torch.no_grad():
        ref = model(ids)[0, -1]
    json.dump({'input_ids': ids[0].tolist(), 'last_logits_head': ref[:8].tolist(),
               'argmax': int(ref.argmax())}, open(os.path.join(args.work, 'lm_reference.json'), 'w'))
    print(f'export: {path} {os.path.getsize(path) / 1e6:.1f} MB, step {ck["state"]["step"]}, best val {ck["state"]["best"]:.3f}')


if __name__ == '__main__':
    main()
