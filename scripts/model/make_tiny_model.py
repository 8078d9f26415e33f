#!/usr/bin/env python3
"""A tiny ONNX model, an input batch and its expected output, for checking the C edge (check_c_api.sh).

    python3 scripts/model/make_tiny_model.py OUT_DIR

Writes into OUT_DIR:
  tiny.onnx      input "pixels" float32 [batch, 3, 4, 4] -> Conv 3x3 (5 filters, pad 1, bias) -> Relu
                 -> GlobalAveragePool -> Flatten -> output "embedding" float32 [batch, 5]; opset 13, IR version 7
  input.f32      a batch of 2 inputs, raw little-endian float32 (96 values)
  expected.f32   the model's output for them, raw little-endian float32 (10 values), computed here in double
                 precision by a direct transcription of the five operators (no ONNX Runtime involved)

Standard library only: the ONNX protobuf is written with the encoder of convert_efficientnet_lite0.py. Weights and
inputs come from a fixed formula, so the files are the same on every machine. With the `onnxruntime` Python
package importable, the expected output is also compared with what it computes (a second opinion; not required).
"""

import array
import math
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import convert_efficientnet_lite0 as onnx_writer  # noqa: E402  (its protobuf encoder)

CHANNELS, HEIGHT, WIDTH, FILTERS, KERNEL, BATCH = 3, 4, 4, 5, 3, 2


def value(i, scale):
    # Deterministic, irregular values in [-scale, scale]: no two weights alike, all exactly representable.
    return float(array.array("f", [scale * math.sin(1.7 * i + 0.3)])[0])


WEIGHTS = [value(i, 0.5) for i in range(FILTERS * CHANNELS * KERNEL * KERNEL)]
BIAS = [value(1000 + i, 0.1) for i in range(FILTERS)]
INPUT = [value(2000 + i, 1.0) for i in range(BATCH * CHANNELS * HEIGHT * WIDTH)]


def model_bytes():
    w = onnx_writer
    nodes = [
        w.node_proto("Conv", ["pixels", "weight", "bias"], ["conv"], "conv",
                     [w.attr_ints("kernel_shape", [KERNEL, KERNEL]), w.attr_ints("pads", [1, 1, 1, 1])]),
        w.node_proto("Relu", ["conv"], ["relu"], "relu", []),
        w.node_proto("GlobalAveragePool", ["relu"], ["pooled"], "pool", []),
        w.node_proto("Flatten", ["pooled"], ["embedding"], "flatten", [w.attr_int("axis", 1)]),
    ]
    initializers = [
        w.tensor_proto("weight", [FILTERS, CHANNELS, KERNEL, KERNEL], WEIGHTS),
        w.tensor_proto("bias", [FILTERS], BIAS),
    ]
    graph = w.graph_proto("tiny", nodes, initializers,
                          [w.value_info("pixels", ["batch", CHANNELS, HEIGHT, WIDTH])],
                          [w.value_info("embedding", ["batch", FILTERS])])
    # ModelProto: ir_version 1, producer_name 2, graph 7, opset_import 8.
    return (w.f_int(1, w.IR_VERSION) + w.f_bytes(2, "vsearch make_tiny_model.py") + w.f_bytes(7, graph)
            + w.f_bytes(8, w.f_bytes(1, "") + w.f_int(2, w.OPSET)))


def reference(inputs, batch):
    out = []
    for n in range(batch):
        for f in range(FILTERS):
            total = 0.0
            for y in range(HEIGHT):
                for x in range(WIDTH):
                    acc = BIAS[f]
                    for c in range(CHANNELS):
                        for ky in range(KERNEL):
                            for kx in range(KERNEL):
                                iy, ix = y + ky - 1, x + kx - 1
                                if 0 <= iy < HEIGHT and 0 <= ix < WIDTH:
                                    acc += (WEIGHTS[((f * CHANNELS + c) * KERNEL + ky) * KERNEL + kx]
                                            * inputs[((n * CHANNELS + c) * HEIGHT + iy) * WIDTH + ix])
                    total += max(acc, 0.0)
            out.append(total / (HEIGHT * WIDTH))
    return out


def write_f32(path, values):
    data = array.array("f", values)
    if sys.byteorder != "little":
        data.byteswap()
    with open(path, "wb") as f:
        f.write(data.tobytes())


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    model = model_bytes()
    with open(os.path.join(out_dir, "tiny.onnx"), "wb") as f:
        f.write(model)
    expected = reference(INPUT, BATCH)
    write_f32(os.path.join(out_dir, "input.f32"), INPUT)
    write_f32(os.path.join(out_dir, "expected.f32"), expected)
    print("tiny.onnx: %d bytes; expected %s" % (len(model), " ".join("%.6f" % v for v in expected)))
    try:
        import numpy
        import onnxruntime
    except ImportError:
        print("(Python onnxruntime not importable: no second opinion)")
        return 0
    session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
    got = session.run(None, {"pixels": numpy.array(INPUT, dtype=numpy.float32).reshape(BATCH, CHANNELS, HEIGHT,
                                                                                        WIDTH)})[0]
    worst = float(numpy.max(numpy.abs(got.reshape(-1) - numpy.array(expected))))
    print("Python onnxruntime %s: %s; largest difference from the reference %.3g"
          % (onnxruntime.__version__, " ".join("%.6f" % v for v in got.reshape(-1)), worst))
    if worst > 1e-5:
        print("make_tiny_model.py: Python onnxruntime disagrees with the reference", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
