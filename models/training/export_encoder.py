"""Export the trained encoder: OUT/{config.json,tokenizer*.json,onnx/model.onnx} (BERT layout:
inputs input_ids, attention_mask; output last_hidden_state; mean pooling + L2 norm downstream)."""
import argparse, json, os, shutil
import torch
from gpt import GPT
from onnx_half import halve_initializers, round_module_to_half
from train_encoder import Encoder, pool


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument('--work', required=True)
    ap.add_argument('--ckpt', default=None, help='default WORK/encoder/encoder.pt')
    ap.add_argument('--out', required=True)
    ap.add_argument('--max-length', type=int, default=256)
    args = ap.parse_args(argv)
    ck = torch.load(args.ckpt or os.path.join(args.work, 'encoder', 'encoder.pt'))
    c = ck['cfg']
    gpt = GPT(c['vocab'], c['n_positions'], c['d'], c['n_layer'], c['n_head'], causal=False)
    gpt.load_state_dict(ck['model'])
    gpt.eval()
    round_module_to_half(gpt)
    model = Encoder(gpt)
    os.makedirs(os.path.join(args.out, 'onnx'), exist_ok=True)
    path = os.path.join(args.out, 'onnx', 'model.onnx')
    ids = torch.randint(0, c['vocab'], (2, 7))
    mask = torch.ones(2, 7, dtype=torch.long)
    mask[1, 5:] = 0
    with torch.no_grad():
        torch.onnx.export(model, (ids, mask), path, input_names=['input_ids', 'attention_mask'],
                          output_names=['last_hidden_state'], opset_version=14, do_constant_folding=False,
                          dynamic_axes={'input_ids': {0: 'batch_size', 1: 'sequence_length'},
                                        'attention_mask': {0: 'batch_size', 1: 'sequence_length'},
                                        'last_hidden_state': {0: 'batch_size', 1: 'sequence_length'}})
    halve_initializers(path)
    eos = c['vocab'] - 1
    cfg = {'model_type': 'bert', 'architectures': ['BertModel'], 'vocab_size': c['vocab'], 'hidden_size': c['d'],
           'num_hidden_layers': c['n_layer'], 'num_attention_heads': c['n_head'], 'intermediate_size': 4 * c['d'],
           'max_position_embeddings': c['n_positions'], 'hidden_act': 'gelu', 'layer_norm_eps': 1e-5,
           'pad_token_id': eos, 'type_vocab_size': 1,
           'coderag': {'pooling': 'mean', 'normalize': True, 'max_length': args.max_length, 'pre_layer_norm': True,
                       'results': ck.get('results', {})}}
    json.dump(cfg, open(os.path.join(args.out, 'config.json'), 'w'), indent=1)
    for f in ('tokenizer.json', 'tokenizer_config.json'):
        shutil.copy(os.path.join(args.work, 'tokenizer', f), os.path.join(args.out, f))
    print(f'export: {path} {os.path.getsize(path) / 1e6:.1f} MB')


if __name__ == '__main__':
    main()
