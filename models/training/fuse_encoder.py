"""Two changes to the shipped encoder's int8 graph that make ONNX Runtime embed faster on the CPU
without changing what it computes (issue 21; figures in models/coderag-encoder/README.md):

  - a second output `sentence_embedding` [B, D]: the mean of last_hidden_state over the attention
    mask, which the product's loader (OnnxEncoder) fetches instead of last_hidden_state, so the
    [B, S, D] hidden states are neither copied out of the runtime nor summed in JavaScript;
  - the last residual sum (the input of the final layer norm) becomes a graph output that nothing
    fetches: ONNX Runtime then keeps that Add and its LayerNormalization apart instead of fusing
    them into SkipLayerNormalization, whose CPU kernel took about five times as long as the
    LayerNormalization kernel (onnxruntime-node 1.30's profile of this graph).

A graph rebuilt from the fused operators throughout (MultiHeadAttention, SkipLayerNormalization)
was slower than either, so the rest of the graph stays as quantize_encoder.py wrote it.
Needs only the onnx package:
  /usr/bin/python3 fuse_encoder.py --model ../coderag-encoder/onnx/model.onnx --out OUT.onnx
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

POOLED = 'sentence_embedding'
# The last residual sum, as a graph output nothing fetches (see above).
RESIDUAL = 'final_residual'


def final_norm_input(graph):
    """The tensor the final layer norm (ln_f) reads: the last residual sum."""
    for n in graph.node:
        if n.op_type == 'ReduceMean' and n.name.startswith('/ln_f/'):
            return n.input[0]
    raise SystemExit('no /ln_f/ReduceMean node: not the exported encoder graph (export_encoder.py)')


def rewrite(model):
    g = model.graph
    names = {o.name for o in g.output}
    if POOLED in names:
        raise SystemExit(f'the graph already has {POOLED}')
    if 'last_hidden_state' not in names:
        raise SystemExit('the graph has no last_hidden_state output')
    dim = None
    for o in g.output:
        if o.name == 'last_hidden_state':
            dims = o.type.tensor_type.shape.dim
            dim = dims[2].dim_value if len(dims) == 3 and dims[2].dim_value else None
    residual = final_norm_input(g)
    for n in g.node:
        for i, name in enumerate(n.input):
            if name == residual:
                n.input[i] = RESIDUAL
        for i, name in enumerate(n.output):
            if name == residual:
                n.output[i] = RESIDUAL
    g.output.append(helper.make_tensor_value_info(RESIDUAL, TensorProto.FLOAT, ['batch', 'sequence', dim if dim else 'hidden']))
    g.initializer.extend([
        numpy_helper.from_array(np.array([1], dtype=np.int64), 'pool_axes_1'),
        numpy_helper.from_array(np.array([2], dtype=np.int64), 'pool_axes_2'),
    ])
    g.node.extend([
        helper.make_node('Cast', ['attention_mask'], ['pool_mask'], name='/pool/Cast', to=TensorProto.FLOAT),
        helper.make_node('Unsqueeze', ['pool_mask', 'pool_axes_2'], ['pool_mask_3d'], name='/pool/Unsqueeze'),
        helper.make_node('Mul', ['last_hidden_state', 'pool_mask_3d'], ['pool_masked'], name='/pool/Mul'),
        helper.make_node('ReduceSum', ['pool_masked', 'pool_axes_1'], ['pool_sum'], name='/pool/ReduceSum', keepdims=0),
        helper.make_node('ReduceSum', ['pool_mask', 'pool_axes_1'], ['pool_count'], name='/pool/Count', keepdims=1),
        helper.make_node('Div', ['pool_sum', 'pool_count'], [POOLED], name='/pool/Div'),
    ])
    g.output.append(helper.make_tensor_value_info(POOLED, TensorProto.FLOAT, ['batch', dim if dim else 'hidden']))
    onnx.checker.check_model(model)
    return model


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument('--model', required=True, help='the int8 graph of quantize_encoder.py (or any export_encoder.py graph)')
    ap.add_argument('--out', required=True)
    args = ap.parse_args(argv)
    model = rewrite(onnx.load(args.model))
    onnx.save(model, args.out)
    print(f'{args.out}: outputs {[o.name for o in model.graph.output]}')


if __name__ == '__main__':
    main()
