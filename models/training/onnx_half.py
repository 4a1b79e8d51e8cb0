"""Store large float32 initializers as float16 plus a Cast node (ONNX Runtime folds the Cast at
session start), halving the shipped file size while the graph still computes in float32."""
import numpy as np
import onnx
from onnx import helper, numpy_helper, TensorProto


def halve_initializers(path, min_elems=4096):
    m = onnx.load(path)
    g = m.graph
    keep, casts = [], []
    for init in g.initializer:
        if init.data_type == TensorProto.FLOAT and int(np.prod(init.dims)) >= min_elems:
            arr = numpy_helper.to_array(init).astype(np.float16)
            keep.append(numpy_helper.from_array(arr, init.name + '__fp16'))
            casts.append(helper.make_node('Cast', [init.name + '__fp16'], [init.name], to=TensorProto.FLOAT,
                                          name=init.name + '__cast'))
        else:
            keep.append(init)
    del g.initializer[:]
    g.initializer.extend(keep)
    nodes = list(g.node)
    del g.node[:]
    g.node.extend(casts + nodes)
    onnx.checker.check_model(m)
    onnx.save(m, path)


def round_module_to_half(module):
    """Round a torch module's large weights through float16 so references match the shipped file."""
    import torch
    with torch.no_grad():
        for p in module.parameters():
            if p.numel() >= 4096:
                p.copy_(p.half().float())
