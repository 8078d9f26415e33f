"""The Python reference pipeline of issue 25's learned similarity: pixels -> L2-normalised 1280-d vector.

Pillow decode (first frame, EXIF orientation, embedded ICC profile converted to sRGB, alpha flattened on
white) -> optional trim of uniform margins -> resize to the model's input by one of RESIZE_MODES ->
x = (v - mean) / std per model.json -> onnxruntime (CPU, 1 intra-op and 1 inter-op thread) -> L2 normalise.

The model is the one scripts/install-model.sh installs (`.build-tools/models/efficientnet-lite0/`,
model.onnx + model.json); `--model-dir` / $VSEARCH_MODEL_DIR override it (bench/work/model/ holds a copy
converted by the same scripts/model/convert_efficientnet_lite0.py; the sha256 is checked against the manifest).
Used by similarity_experiments.py, fit_projection.py and embed_peer.py; bench/.venv (onnxruntime 1.23.2,
the version of the C library the Swift side loads) runs them.
"""
import hashlib
import io
import json
import os

import numpy as np
from PIL import Image, ImageChops, ImageOps

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
MODEL_DIRS = [os.environ.get("VSEARCH_MODEL_DIR", ""), os.path.join(ROOT, ".build-tools", "models", "efficientnet-lite0"),
              os.path.join(HERE, "work", "model")]
RESIZE_MODES = {
    "squash": "the whole picture resized to 224x224 (aspect not kept)",
    "crop224": "shorter side to 224, centre crop 224x224",
    "crop256": "shorter side to 256, centre crop 224x224 (ImageNet's evaluation recipe)",
    "pad": "longer side to 224, padded to a square with white (the background the catalogs flatten on)",
}


def find_model_dir(explicit=None):
    for d in ([explicit] if explicit else []) + MODEL_DIRS:
        if d and os.path.exists(os.path.join(d, "model.json")):
            return d
    raise SystemExit("no model: run scripts/install-model.sh (or set --model-dir / $VSEARCH_MODEL_DIR)")


class Model:
    def __init__(self, model_dir=None, threads=1):
        import onnxruntime as ort
        self.dir = find_model_dir(model_dir)
        self.manifest = json.load(open(os.path.join(self.dir, "model.json")))
        path = os.path.join(self.dir, self.manifest.get("file", "model.onnx"))
        data = open(path, "rb").read()
        self.sha256 = hashlib.sha256(data).hexdigest()
        if self.manifest.get("sha256") and self.manifest["sha256"] != self.sha256:
            raise SystemExit(f"{path}: sha256 {self.sha256} is not the manifest's {self.manifest['sha256']}")
        inp = self.manifest["input"]
        self.size = (int(inp["width"]), int(inp["height"]))
        norm = self.manifest["normalization"]
        self.mean = np.array(norm["mean"], np.float32).reshape(1, 1, 3)
        self.inv_std = (1.0 / np.array(norm["std"], np.float32)).reshape(1, 1, 3)
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        self.session = ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
        self.input_name = inp.get("name", "input")
        self.output_name = self.manifest["output"].get("name", "embedding")
        self.dimension = int(self.manifest["output"]["dimension"])
        self.ort_version = ort.__version__

    def tensor(self, rgb):
        """A 224x224 RGB PIL image -> float32 [3, H, W]."""
        a = np.asarray(rgb, dtype=np.float32)
        return ((a - self.mean) * self.inv_std).transpose(2, 0, 1)

    def run(self, tensors):
        """[N, 3, H, W] -> raw [N, D] float32 (not normalised)."""
        return self.session.run([self.output_name], {self.input_name: np.ascontiguousarray(tensors, np.float32)})[0]

    def embed(self, images, mode="pad", trim=False, batch=16, flip_average=False):
        """PIL RGB images -> L2-normalised [N, D]."""
        out = []
        for i in range(0, len(images), batch):
            ts = [self.tensor(prepare(im, self.size, mode, trim)) for im in images[i:i + batch]]
            v = self.run(np.stack(ts))
            if flip_average:
                v = v + self.run(np.stack([t[:, :, ::-1] for t in ts]))
            out.append(v)
        return l2n(np.concatenate(out))


def l2n(v):
    v = np.asarray(v, np.float32)
    return v / np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-12)


def load_rgb(path, draft=None):
    """Decode as a user would: first frame, EXIF orientation, ICC -> sRGB, alpha flattened on white.
    draft=(w, h): JPEG shrink-on-load (libjpeg DCT scaling) to the smallest scale still >= (w, h)."""
    im = Image.open(path)
    if draft and im.format == "JPEG":
        im.draft("RGB", draft)
    icc = im.info.get("icc_profile")
    im = ImageOps.exif_transpose(im)
    if icc:
        try:
            from PIL import ImageCms
            src = ImageCms.ImageCmsProfile(io.BytesIO(icc))
            im = ImageCms.profileToProfile(im.convert("RGB") if im.mode not in ("RGB", "RGBA") else im, src,
                                           ImageCms.createProfile("sRGB"), outputMode=im.mode if im.mode in ("RGB", "RGBA") else "RGB")
        except Exception:
            pass
    if im.mode in ("P", "PA", "LA", "L", "I", "I;16") or "transparency" in im.info:
        im = im.convert("RGBA")
    if im.mode == "RGBA":
        bg = Image.new("RGB", im.size, (255, 255, 255))
        bg.paste(im, mask=im.getchannel("A"))
        return bg
    return im.convert("RGB")


def trim_margins(im, tolerance=16, min_keep=0.2):
    """Crop uniform margins: pixels within `tolerance` (max channel difference) of the border colour (the
    median of the four corners) are background. Keeps the picture when the object would be < min_keep of a side."""
    w, h = im.size
    corners = [im.getpixel((0, 0)), im.getpixel((w - 1, 0)), im.getpixel((0, h - 1)), im.getpixel((w - 1, h - 1))]
    bg = tuple(int(np.median([c[i] for c in corners])) for i in range(3))
    diff = ImageChops.difference(im, Image.new("RGB", im.size, bg)).convert("L")
    box = diff.point(lambda v: 255 if v > tolerance else 0).getbbox()
    if not box:
        return im
    x0, y0, x1, y1 = box
    if (x1 - x0) < min_keep * w or (y1 - y0) < min_keep * h:
        return im
    return im.crop(box)


def prepare(im, size=(224, 224), mode="pad", trim=False, resample=Image.BILINEAR):
    """RGB PIL image -> size RGB PIL image by `mode` (RESIZE_MODES)."""
    if trim:
        im = trim_margins(im)
    W, H = size
    w, h = im.size
    if mode == "squash":
        return im.resize((W, H), resample, reducing_gap=None)
    if mode in ("crop224", "crop256"):
        short = W if mode == "crop224" else round(W * 256 / 224)
        s = short / min(w, h)
        nw, nh = max(W, round(w * s)), max(H, round(h * s))
        r = im.resize((nw, nh), resample)
        x, y = (nw - W) // 2, (nh - H) // 2
        return r.crop((x, y, x + W, y + H))
    if mode == "pad":
        s = W / max(w, h)
        nw, nh = max(1, round(w * s)), max(1, round(h * s))
        r = im.resize((nw, nh), resample)
        out = Image.new("RGB", (W, H), (255, 255, 255))
        out.paste(r, ((W - nw) // 2, (H - nh) // 2))
        return out
    raise ValueError(mode)


# ---------------------------------------------------------------- storage of the vectors
def to_fp16(v):
    return l2n(v.astype(np.float16).astype(np.float32))


def to_int8(v):
    """Per-vector symmetric int8 (max |x| -> 127); cosine does not need the scale (re-normalised)."""
    s = 127.0 / np.maximum(np.abs(v).max(axis=1, keepdims=True), 1e-12)
    return l2n(np.clip(np.round(v * s), -127, 127))


class Projection:
    """x -> normalise(W (x - mean)): PCA fitted on vectors (optionally whitened)."""

    def __init__(self, vectors, k, whiten=False):
        x = np.asarray(vectors, np.float64)
        self.mean = x.mean(axis=0)
        _, s, vt = np.linalg.svd(x - self.mean, full_matrices=False)
        if k > vt.shape[0]:
            raise ValueError(f"{k} components from {vt.shape[0]} vectors")
        w = vt[:k]
        if whiten:
            w = w / (s[:k, None] / np.sqrt(len(x) - 1) + 1e-6)
        self.matrix = w.astype(np.float32)
        self.mean = self.mean.astype(np.float32)
        self.k = k
        self.explained = float((s[:k] ** 2).sum() / (s ** 2).sum())

    def __call__(self, v):
        return l2n((np.asarray(v, np.float32) - self.mean) @ self.matrix.T)
