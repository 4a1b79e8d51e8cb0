"""Read a shipped ONNX decoder (export_lm.py's layout) back into a GPT module: the warm start
from the model in models/coderag-lm when its checkpoint is not on this machine."""
import json, os
import numpy as np
import onnx
import torch
from onnx import numpy_helper
from gpt import GPT


def load_gpt_from_onnx(model_dir):
    """GPT with the weights of MODEL_DIR/onnx/decoder_model_merged.onnx (float16 initialisers widened)."""
    cfg = json.load(open(os.path.join(model_dir, 'config.json')))
    gpt = GPT(cfg['vocab_size'], cfg['n_positions'], cfg['n_embd'], cfg['n_layer'], cfg['n_head'])
    m = onnx.load(os.path.join(model_dir, 'onnx', 'decoder_model_merged.onnx'))
    want = gpt.state_dict()
    got = {}
    for init in m.graph.initializer:
        name = init.name
        if name.endswith('__fp16'):
            name = name[:-len('__fp16')]
        if not name.startswith('gpt.'):
            continue
        key = name[len('gpt.'):]
        if key in want:
            got[key] = torch.from_numpy(numpy_helper.to_array(init).astype(np.float32).copy())
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
