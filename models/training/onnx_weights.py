"""Read a shipped ONNX decoder (export_lm.py's layout) back into a GPT module: the warm start
from the model in models/coderag-lm when its checkpoint is not on this machine; and any exported
graph's weights as a state dict (distill_encoder.py's teacher)."""
import json, os, re
import numpy as np
import onnx
import torch
from onnx import numpy_helper
from gpt import GPT


def onnx_gpt_state(path):
    """The `gpt.*` initialisers of an exported graph (export_lm.py's or export_encoder.py's) as a
    GPT state dict, float32 (float16-stored ones widened, under their plain name)."""
    state = {}
    for init in onnx.load(path).graph.initializer:
        name = init.name
        if name.endswith('__fp16'):
            name = name[:-len('__fp16')]
        if name.startswith('gpt.'):
            state[name[len('gpt.'):]] = torch.from_numpy(numpy_helper.to_array(init).astype(np.float32).copy())
    return state


def onnx_int8_gpt_state(path):
    """onnx_gpt_state of a dynamically quantised graph (quantize_encoder.py's, as shipped): each
    int8 MatMul weight `/blocks.N/NAME/Transpose_output_0_quantized` [in, out], with its per-column
    scale and zero point, is widened back to `blocks.N.NAME.weight` [out, in] (a warm start, not the
    float weights it was quantised from: each differs by at most half a step)."""
    state = onnx_gpt_state(path)
    inits = {i.name: numpy_helper.to_array(i) for i in onnx.load(path).graph.initializer}
    for name, q in inits.items():
        m = re.fullmatch(r'/blocks\.(\d+)/(\w+)/Transpose_output_0_quantized', name)
        if not m:
            continue
        base = name[:-len('_quantized')]
        w = (q.astype(np.float32) - inits[base + '_zero_point'].astype(np.float32)) * inits[base + '_scale'].astype(np.float32)
        state[f'blocks.{m.group(1)}.{m.group(2)}.weight'] = torch.from_numpy(np.ascontiguousarray(w.T))
    return state


def load_gpt_from_onnx(model_dir):
    """GPT with the weights of MODEL_DIR/onnx/decoder_model_merged.onnx (float16 initialisers widened)."""
    cfg = json.load(open(os.path.join(model_dir, 'config.json')))
    gpt = GPT(cfg['vocab_size'], cfg['n_positions'], cfg['n_embd'], cfg['n_layer'], cfg['n_head'])
    want = gpt.state_dict()
    got = {k: v for k, v in onnx_gpt_state(os.path.join(model_dir, 'onnx', 'decoder_model_merged.onnx')).items() if k in want}
    missing = sorted(set(want) - set(got))
    if missing:
        raise ValueError(f'{model_dir}: the ONNX graph lacks {len(missing)} weights (first: {missing[0]}); not this project\'s export?')
    for k, v in got.items():
        if tuple(v.shape) != tuple(want[k].shape):
            raise ValueError(f'{model_dir}: {k} has shape {tuple(v.shape)}, expected {tuple(want[k].shape)}')
    gpt.load_state_dict(got)
    step = cfg.get('coderag', {}).get('training_step', 0)
    tokens = cfg.get('coderag', {}).get('training_tokens', 0)
    return gpt, {'path': model_dir, 'step': step, 'tokens': tokens}
