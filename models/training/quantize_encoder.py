"""Graph variants of the shipped encoder for CPU inference, measured by eval_encoder.ts:
  float32: the float16-stored weights written back as float32 initializers (no Cast nodes);
  int8:    ONNX Runtime's dynamic quantisation of the float32 graph (int8 MatMul weights,
           activations quantised per run).
Needs the onnxruntime Python package (for onnxruntime.quantization) and a recent onnx.
The shipped models/coderag-encoder/onnx/model.onnx is the int8 graph made with --per-channel 1
from export_encoder.py's float16-stored graph (git history: the graph before issue 21):
  python3 quantize_encoder.py --model EXPORTED.onnx --out-dir DIR --per-channel 1
  cp DIR/model_int8.onnx ../coderag-encoder/onnx/model.onnx
Check it with encoder_task.py + eval_encoder.ts (the card's held-out task).
"""
import argparse, os
import numpy as np
import onnx
from onnx import numpy_helper, TensorProto


def unhalve(model):
    """Replace each (float16 initializer -> Cast to float) pair by one float32 initializer."""
    g = model.graph
    inits = {i.name: i for i in g.initializer}
    drop_nodes, new_inits, used = [], [], set()
    for n in g.node:
        if n.op_type == 'Cast' and len(n.input) == 1 and n.input[0] in inits:
            src = inits[n.input[0]]
            if src.data_type == TensorProto.FLOAT16:
                arr = numpy_helper.to_array(src).astype(np.float32)
                new_inits.append(numpy_helper.from_array(arr, n.output[0]))
                drop_nodes.append(n)
                used.add(src.name)
    keep = [i for i in g.initializer if i.name not in used] + new_inits
    del g.initializer[:]
    g.initializer.extend(keep)
    nodes = [n for n in g.node if n not in drop_nodes]
    del g.node[:]
    g.node.extend(nodes)
    onnx.checker.check_model(model)
    return model


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument('--model', required=True)
    ap.add_argument('--out-dir', required=True)
    ap.add_argument('--per-channel', type=int, default=0)
    args = ap.parse_args(argv)
    os.makedirs(args.out_dir, exist_ok=True)
    f32 = os.path.join(args.out_dir, 'model_fp32.onnx')
    raw = os.path.join(args.out_dir, 'model_unfolded.onnx')
    onnx.save(unhalve(onnx.load(args.model)), raw)
    # The export kept Transpose nodes on the weights (no constant folding): fold them with ONNX
    # Runtime's basic level, so that each MatMul reads an initializer the quantiser can replace.
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    so.optimized_model_filepath = f32
    ort.InferenceSession(raw, so, providers=['CPUExecutionProvider'])
    os.remove(raw)
    from onnxruntime.quantization import quantize_dynamic, QuantType
    q8 = os.path.join(args.out_dir, 'model_int8.onnx')
    quantize_dynamic(f32, q8, weight_type=QuantType.QInt8, per_channel=bool(args.per_channel), op_types_to_quantize=['MatMul'])
    for p in (f32, q8):
        print(p, os.path.getsize(p))


if __name__ == '__main__':
    main()
