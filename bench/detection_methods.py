#!/usr/bin/env python3
"""Issue 38, item 1: which class-agnostic object proposals, measured on the detection set's tune split.

    nice -n 10 python bench/detection_methods.py [--set bench/work/detection/set.json] [--split tune]
        [--methods plain,cam,windows,...] [--limit N] [--json OUT]

A numpy + onnxruntime prototype of every candidate, each giving scored boxes for a scene, so the chosen one can
be ported to Swift from docs/decisions.md ("Object detection"). Reads the model files scripts/install-model.sh
installs (.build-tools/models/efficientnet-lite0/: detector.onnx, model.onnx, classifier.bin) and the scenes of
bench/detection_set.py. Only the tune split is read unless --split says otherwise; never tune on the split you
report.

Measured per method and background (plain, photo): found (a ground-truth box matched one-to-one, greedily by
score, at IoU >= 0.5, among the boxes kept after the score threshold, at most --keep), the ceiling (found among
all proposals before re-scoring and threshold), extra boxes per scene, exactly one box on single-object scenes,
and time per scene on one core (proposals alone; detector.onnx alone; crops' embeddings alone).

The chosen method (docs/decisions.md, "Object detection", every constant) is `chosen`; its figures:

    nice -n 10 python bench/detection_methods.py --methods chosen --fixed     # CHOSEN_WEIGHTS and STAGE1 as fitted
    nice -n 10 python bench/detection_methods.py --methods chosen --folds     # calibration 2-fold within the split
    nice -n 10 python bench/detection_methods.py --background-cv [--with-pmax]  # photographic score, leave-one-
                                                                              # background-photograph-out

Other methods: plain+cam, cam-wsum|max|energy|local, windows, rarity, rarity-cam, plain+rarity, contrast,
contrast-raw, plain+contrast, contrast+sal, featsal, featsal-raw, photo-path-everywhere, plain-split-MODE[-E-C],
plain-tol-T[-R], plain-featsplit-S[-B] (see proposals_for).

Needs numpy, scipy, Pillow and onnxruntime (a private venv: python3 -m venv --system-site-packages /tmp/x-venv;
/tmp/x-venv/bin/pip install onnxruntime==1.23.2 Pillow).
"""

import os as _os
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    _os.environ.setdefault(_v, "1")
import argparse
import json
import math
import pickle
import os
import sys
import time

import numpy as np
import onnxruntime
from PIL import Image
from scipy import ndimage

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL_DIR = os.path.join(REPO, ".build-tools", "models", "efficientnet-lite0")
SET = os.path.join(REPO, "bench", "work", "detection", "set.json")
CLASSES, FEATURES = 1000, 1280


# ---------------------------------------------------------------------------------------------------------
# The network: detector.onnx (feature map), model.onnx (a crop's embedding), classifier.bin (W, b).

class Net:
    def __init__(self, model_dir=MODEL_DIR):
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        providers = ["CPUExecutionProvider"]
        self.detector = onnxruntime.InferenceSession(os.path.join(model_dir, "detector.onnx"), options, providers=providers)
        self.model = onnxruntime.InferenceSession(os.path.join(model_dir, "model.onnx"), options, providers=providers)
        raw = np.fromfile(os.path.join(model_dir, "classifier.bin"), dtype="<f4")
        self.W = raw[:CLASSES * FEATURES].reshape(CLASSES, FEATURES)
        self.b = raw[CLASSES * FEATURES:]
        self.timing = {"detector": 0.0, "embed": 0.0, "embeds": 0}

    @staticmethod
    def normalised(rgb):
        return ((rgb.astype(np.float32) - 127.0) / 128.0).transpose(2, 0, 1)

    def features(self, rgb):
        """detector.onnx's feature map [1280, h/32, w/32] of an RGB uint8 picture whose sides are multiples of 32."""
        start = time.perf_counter()
        (f,) = self.detector.run(["features"], {"input": self.normalised(rgb)[None]})
        self.timing["detector"] += time.perf_counter() - start
        return f[0]

    def embed(self, crops):
        """model.onnx's 1280-d outputs of RGB uint8 crops, each prepared as the project does ("pad")."""
        if not crops:
            return np.zeros((0, FEATURES), np.float32)
        batch = np.stack([self.normalised(pad224(c)) for c in crops])
        start = time.perf_counter()
        (e,) = self.model.run(["embedding"], {"input": batch})
        self.timing["embed"] += time.perf_counter() - start
        self.timing["embeds"] += len(crops)
        return e

    def probabilities(self, embeddings):
        logits = embeddings.astype(np.float64) @ self.W.T.astype(np.float64) + self.b
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        return p / p.sum(axis=1, keepdims=True)


def pad224(rgb, side=224):
    """The project's "pad" preparation (LearnedEmbedder.square): the longer side to `side` (rounded), Lanczos,
    centred at ((side - w) / 2, (side - h) / 2) on white."""
    h, w = rgb.shape[:2]
    longer = max(w, h)
    nw = max(1, min(side, int(round(w * side / longer))))
    nh = max(1, min(side, int(round(h * side / longer))))
    small = np.asarray(Image.fromarray(rgb).resize((nw, nh), Image.LANCZOS))
    out = np.full((side, side, 3), 255, np.uint8)
    x0, y0 = (side - nw) // 2, (side - nh) // 2
    out[y0:y0 + nh, x0:x0 + nw] = small
    return out


def load_rgb(path):
    image = Image.open(path)
    if image.mode in ("RGBA", "LA", "P"):
        image = image.convert("RGBA")
        white = Image.new("RGBA", image.size, (255, 255, 255, 255))
        image = Image.alpha_composite(white, image)
    return np.asarray(image.convert("RGB"))


def reduced(rgb, long_side):
    """The picture with its longer side at most `long_side` (area average), and the scale applied."""
    h, w = rgb.shape[:2]
    s = min(1.0, long_side / max(h, w))
    if s >= 1.0:
        return rgb, 1.0
    size = (max(1, int(round(w * s))), max(1, int(round(h * s))))
    return np.asarray(Image.fromarray(rgb).resize(size, Image.BOX)), s


def grid_input(rgb, long_side):
    """The picture resized (bilinear, aspect kept to the nearest 32) so both sides are multiples of 32 and the
    longer is `long_side`; returns it and the scales (sx, sy) from the original."""
    h, w = rgb.shape[:2]
    s = long_side / max(h, w)
    nw = max(64, int(round(w * s / 32.0)) * 32)
    nh = max(64, int(round(h * s / 32.0)) * 32)
    image = np.asarray(Image.fromarray(rgb).resize((nw, nh), Image.BILINEAR))
    return image, nw / w, nh / h


# ---------------------------------------------------------------------------------------------------------
# Boxes: [x, y, w, h] in the scene's pixels.

def iou(a, b):
    ix = max(0.0, min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1]))
    inter = ix * iy
    union = a[2] * a[3] + b[2] * b[3] - inter
    return inter / union if union > 0 else 0.0


def contained(a, b):
    """The share of the smaller box's area that lies in the other."""
    ix = max(0.0, min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0]))
    iy = max(0.0, min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1]))
    return ix * iy / max(1e-9, min(a[2] * a[3], b[2] * b[3]))


def nms(boxes, threshold=0.5, containment=None):
    """boxes: list of (box, score, ...) — kept in score order, each dropped if IoU > threshold with one kept
    (or, with `containment`, if more than that share of the smaller of the two lies in the other)."""
    kept = []
    for item in sorted(boxes, key=lambda t: -t[1]):
        if all(iou(item[0], k[0]) <= threshold and (containment is None or contained(item[0], k[0]) <= containment)
               for k in kept):
            kept.append(item)
    return kept


def match(detections, truths, threshold=0.5):
    """Greedy one-to-one by score: each detection (in score order) takes the unmatched truth of highest IoU >=
    threshold. Returns the list of matched flags per detection and the number of truths found."""
    used = [False] * len(truths)
    flags = []
    for box in detections:
        best, best_iou = -1, threshold
        for j, t in enumerate(truths):
            if not used[j]:
                v = iou(box, t)
                if v >= best_iou:
                    best, best_iou = j, v
        if best >= 0:
            used[best] = True
        flags.append(best >= 0)
    return flags, sum(used)


def components_boxes(mask, min_pixels=1):
    """Bounding boxes [x, y, w, h] (grid cells) and pixel counts of the 8-connected components of mask."""
    labels, n = ndimage.label(mask, structure=np.ones((3, 3), bool))
    out = []
    if n == 0:
        return out
    slices = ndimage.find_objects(labels)
    counts = np.bincount(labels.ravel(), minlength=n + 1)
    for k, sl in enumerate(slices, start=1):
        if sl is None or counts[k] < min_pixels:
            continue
        ys, xs = sl
        out.append(([xs.start, ys.start, xs.stop - xs.start, ys.stop - ys.start], int(counts[k]), labels == k))
    return out


# ---------------------------------------------------------------------------------------------------------
# Candidate 1: foreground against a uniform background (the multi-object ObjectProposal).

PLAIN = {
    "long": 320,          # the reduced picture's longer side
    "ring": 0.02,         # the border ring's width, share of the longer side (at least 1 pixel)
    "tolerance": 40,      # largest channel difference (0...255) from the background colour that is background
    "uniform": 0.90,      # share of ring pixels within the tolerance for the background to be uniform
    "close": 0.005,       # foreground pixels closer than 2 x this share of the longer side join one object
    "min_share": 0.002,   # a component's foreground pixels, share of the picture, to be kept
    "split": "none",      # touching objects: none; replace (a component whose mask, eroded by `erode`, falls
                          # into >= 2 cores of min_share each becomes one box per core, grown back inside the
                          # mask); add (those boxes besides the whole component's)
    "erode": 0.015,       # the erosion's radius, share of the longer side
    "core_share": 0.0,    # a core must also hold this share of the component's pixels
}


def plain_background(small, p=PLAIN):
    """(uniform?, background colour, per-pixel largest channel difference)."""
    h, w = small.shape[:2]
    r = max(1, int(round(p["ring"] * max(h, w))))
    ring = np.concatenate([small[:r].reshape(-1, 3), small[-r:].reshape(-1, 3),
                           small[r:-r, :r].reshape(-1, 3), small[r:-r, -r:].reshape(-1, 3)])
    colour = np.median(ring, axis=0)
    diff_ring = np.abs(ring.astype(np.int16) - colour.astype(np.int16)).max(axis=1)
    uniform = float((diff_ring <= (p.get("ring_tolerance") or p["tolerance"])).mean()) >= p["uniform"]
    diff = np.abs(small.astype(np.int16) - colour.astype(np.int16)).max(axis=2)
    return uniform, colour, diff


def dilate(mask, radius):
    """Square dilation (side 2 radius + 1) through an integral image."""
    if radius <= 0:
        return mask
    h, w = mask.shape
    ii = np.zeros((h + 1, w + 1), np.int32)
    ii[1:, 1:] = mask.astype(np.int32).cumsum(0).cumsum(1)
    y0 = np.clip(np.arange(h) - radius, 0, h)
    y1 = np.clip(np.arange(h) + radius + 1, 0, h)
    x0 = np.clip(np.arange(w) - radius, 0, w)
    x1 = np.clip(np.arange(w) + radius + 1, 0, w)
    s = ii[y1][:, x1] - ii[y0][:, x1] - ii[y1][:, x0] + ii[y0][:, x0]
    return s > 0


def plain_proposals(rgb, p=PLAIN, small_and_scale=None):
    """Boxes of foreground objects when the border is uniform, else None."""
    small, s = small_and_scale or reduced(rgb, p["long"])
    h, w = small.shape[:2]
    uniform, colour, diff = plain_background(small, p)
    if not uniform:
        return None
    mask = diff > p["tolerance"]
    radius = int(round(p["close"] * max(h, w)))
    grown = dilate(mask, radius)
    labels, n = ndimage.label(grown, structure=np.ones((3, 3), bool))
    labels = np.where(mask, labels, 0)
    boxes = []
    counts = np.bincount(labels.ravel(), minlength=n + 1)
    for k, sl in enumerate(ndimage.find_objects(labels), start=1):
        if sl is None or counts[k] < p["min_share"] * h * w:
            continue
        ys, xs = sl
        box = [xs.start / s, ys.start / s, (xs.stop - xs.start) / s, (ys.stop - ys.start) / s]
        fill = counts[k] / float((xs.stop - xs.start) * (ys.stop - ys.start))
        whole = (box, 1.0, {"source": "plain", "fill": fill, "share": counts[k] / float(h * w)})
        parts = split_component(labels[sl] == k, p, h * w) if p["split"] != "none" else []
        if len(parts) >= 2:
            for (x0, y0, x1, y1), c in parts:
                b = [(xs.start + x0) / s, (ys.start + y0) / s, (x1 - x0) / s, (y1 - y0) / s]
                boxes.append((b, 1.0, {"source": "plain", "fill": c / float((x1 - x0) * (y1 - y0)),
                                       "share": c / float(h * w), "split": True}))
            if p["split"] == "add":
                boxes.append(whole)
        else:
            boxes.append(whole)
    return boxes


def split_component(region, p, picture_pixels):
    """Touching objects: the component's mask eroded by p["erode"] x the longer side; when it falls into >= 2
    cores of at least min_share of the picture, each mask pixel goes to the nearest core (repeated 3x3 growth
    inside the mask, ties to the lower label) and each part's box [x0, y0, x1, y1] (exclusive) is returned."""
    rh, rw = region.shape
    radius = max(1, int(round(p["erode"] * p["long"])))
    padded = np.pad(region, radius + 1)
    eroded = ~dilate(~padded, radius)
    eroded = eroded[radius + 1:-radius - 1, radius + 1:-radius - 1]
    cores, n = ndimage.label(eroded, structure=np.ones((3, 3), bool))
    if n < 2:
        return []
    sizes = np.bincount(cores.ravel(), minlength=n + 1)
    need = max(p["min_share"] * picture_pixels, p["core_share"] * float(region.sum()))
    big = [k for k in range(1, n + 1) if sizes[k] >= need]
    if len(big) < 2:
        return []
    owner = np.where(np.isin(cores, big), cores, 0)
    for _ in range(4 * radius + 4):   # grow the cores back inside the mask
        grown = ndimage.grey_dilation(owner, size=(3, 3))
        owner = np.where(region & (owner == 0), grown, owner)
    parts = []
    for k in big:
        ys, xs = np.nonzero(owner == k)
        parts.append(((int(xs.min()), int(ys.min()), int(xs.max()) + 1, int(ys.max()) + 1), int(len(xs))))
    return parts


# ---------------------------------------------------------------------------------------------------------
# Candidates 2 and 3: the network's evidence (class-activation maps from detector.onnx).

CAM = {
    "long": 384,           # detector input's longer side (both sides rounded to multiples of 32)
    "top": 5,              # classes of the pooled logits used
    "objectness": "wsum",  # wsum: softmax-weighted sum of the top classes' CAMs; max: max of each CAM / its max;
                           # energy: sum of the features over channels; local: per-position max logit
    "thresholds": (0.3, 0.5, 0.7),  # relative to the map's range: (o - min) / (max - min) >= t
    "upsample": 4,         # the map is upsampled (bilinear) by this before thresholding
    "per_class": False,    # also components of each top class's CAM
}


def cam_maps(net, rgb, p):
    image, sx, sy = grid_input(rgb, p["long"])
    F = net.features(image)                                      # [1280, gh, gw]
    gh, gw = F.shape[1:]
    pooled = net.W @ F.mean(axis=(1, 2)) + net.b
    e = np.exp(pooled - pooled.max())
    prob = e / e.sum()
    top = np.argsort(-pooled)[:p["top"]]
    flat = F.reshape(FEATURES, -1)
    cams = (net.W[top] @ flat + net.b[top, None]).reshape(len(top), gh, gw)
    return F, cams, prob[top], top, (sx, sy, gh, gw)


def objectness_map(F, cams, weights, p, net=None):
    kind = p["objectness"]
    if kind == "wsum":
        return np.tensordot(weights / weights.sum(), cams, axes=1)
    if kind == "max":
        c = cams - cams.min(axis=(1, 2), keepdims=True)
        c /= np.maximum(c.max(axis=(1, 2), keepdims=True), 1e-6)
        return c.max(axis=0)
    if kind == "energy":
        return F.sum(axis=0)
    if kind == "local":
        logits = (net.W @ F.reshape(FEATURES, -1) + net.b[:, None])
        return logits.max(axis=0).reshape(F.shape[1:])
    raise ValueError(kind)


def upsampled(m, factor):
    return ndimage.zoom(m, factor, order=1, mode="nearest", grid_mode=True) if factor > 1 else m


def map_proposals(m, p, scale, source):
    """Components of the normalised map at each threshold, as scene boxes scored by their mean value."""
    sx, sy, gh, gw = scale
    up = upsampled(m, p["upsample"])
    lo, hi = float(up.min()), float(up.max())
    if hi - lo < 1e-6:
        return []
    norm = (up - lo) / (hi - lo)
    cell_x = 32.0 / p["upsample"] / sx
    cell_y = 32.0 / p["upsample"] / sy
    out = []
    for t in p["thresholds"]:
        for box, count, region in components_boxes(norm >= t):
            score = float(norm[region].mean())
            out.append(([box[0] * cell_x, box[1] * cell_y, box[2] * cell_x, box[3] * cell_y], score,
                        {"source": source, "threshold": t}))
    return out


def cam_proposals(net, rgb, p=CAM):
    F, cams, weights, top, scale = cam_maps(net, rgb, p)
    out = map_proposals(objectness_map(F, cams, weights, p, net), p, scale, "cam")
    if p["per_class"]:
        for k in range(len(top)):
            out += map_proposals(cams[k], p, scale, "cam-class")
    return out


WINDOWS = {
    "long": 384,
    "top": 5,
    "ring": 1,           # ring width in grid cells around the window
    "min_cells": 2,      # smallest window side in cells
    "keep": 12,          # windows kept after NMS (IoU 0.5)
}


def window_proposals(net, rgb, p=WINDOWS):
    """Each window's score for class c: mean of CAM_c inside minus the mean in a ring around it (integral
    images); the best class per window; NMS."""
    F, cams, weights, top, (sx, sy, gh, gw) = cam_maps(net, rgb, p)
    best = []
    for k in range(len(top)):
        c = cams[k].astype(np.float64)
        ii = np.zeros((gh + 1, gw + 1))
        ii[1:, 1:] = c.cumsum(0).cumsum(1)

        def total(y0, x0, y1, x1):
            return ii[y1, x1] - ii[y0, x1] - ii[y1, x0] + ii[y0, x0]
        for hh in range(p["min_cells"], gh + 1):
            for ww in range(p["min_cells"], gw + 1):
                y0 = np.arange(0, gh - hh + 1)[:, None]
                x0 = np.arange(0, gw - ww + 1)[None, :]
                y1, x1 = y0 + hh, x0 + ww
                inside = total(y0, x0, y1, x1)
                r = p["ring"]
                oy0, ox0 = np.maximum(y0 - r, 0), np.maximum(x0 - r, 0)
                oy1, ox1 = np.minimum(y1 + r, gh), np.minimum(x1 + r, gw)
                outer = total(oy0, ox0, oy1, ox1)
                ring_area = (oy1 - oy0) * (ox1 - ox0) - hh * ww
                ring_mean = np.where(ring_area > 0, (outer - inside) / np.maximum(ring_area, 1), inside / (hh * ww))
                score = inside / (hh * ww) - ring_mean
                for (yy, xx) in zip(*np.unravel_index(np.argsort(-score, axis=None)[:3], score.shape)):
                    best.append(([x0[0, xx] * 32.0 / sx, y0[yy, 0] * 32.0 / sy, ww * 32.0 / sx, hh * 32.0 / sy],
                                 float(score[yy, xx]), {"source": "window", "class": int(top[k])}))
    return nms(best, 0.5)[:p["keep"]]


# ---------------------------------------------------------------------------------------------------------
# Candidate 4: colour rarity (pasted or distinct objects on a photograph): a pixel whose quantised colour is rare
# in the picture is foreground; then the plain path's closing and components. Optionally gated by the CAM.

RARITY = {
    "long": 160,          # the reduced picture's longer side
    "levels": 8,          # quantisation levels per RGB channel (levels^3 bins)
    "rare": 0.004,        # a colour bin holding less than this share of the picture's pixels is rare
    "smooth": 1,          # the rare mask is first opened/closed by this radius (pixels of the reduced picture)
    "close": 0.02,        # as in PLAIN
    "min_share": 0.003,   # as in PLAIN
    "cam_gate": 0.0,      # > 0: keep rare pixels where the CAM objectness (normalised) is at least this
}


def rarity_proposals(net, rgb, p=RARITY, cam=CAM):
    small, s = reduced(rgb, p["long"])
    h, w = small.shape[:2]
    q = (small.astype(np.int32) * p["levels"]) // 256
    bins = (q[..., 0] * p["levels"] + q[..., 1]) * p["levels"] + q[..., 2]
    counts = np.bincount(bins.ravel(), minlength=p["levels"] ** 3)
    share = counts[bins] / float(h * w)
    mask = share < p["rare"]
    if p["smooth"] > 0:
        mask = ndimage.binary_opening(mask, np.ones((2 * p["smooth"] + 1,) * 2, bool))
    if p["cam_gate"] > 0 and net is not None:
        F, cams, weights, top, scale = cam_maps(net, rgb, cam)
        m = objectness_map(F, cams, weights, cam, net)
        m = (m - m.min()) / max(1e-6, float(m.max() - m.min()))
        gate = np.asarray(Image.fromarray(m.astype(np.float32)).resize((w, h), Image.BILINEAR))
        mask &= gate >= p["cam_gate"]
    radius = int(round(p["close"] * max(h, w)))
    grown = dilate(mask, radius)
    labels, n = ndimage.label(grown, structure=np.ones((3, 3), bool))
    labels = np.where(mask, labels, 0)
    counts = np.bincount(labels.ravel(), minlength=n + 1)
    boxes = []
    for k, sl in enumerate(ndimage.find_objects(labels), start=1):
        if sl is None or counts[k] < p["min_share"] * h * w:
            continue
        ys, xs = sl
        box = [xs.start / s, ys.start / s, (xs.stop - xs.start) / s, (ys.stop - ys.start) / s]
        boxes.append((box, counts[k] / float((xs.stop - xs.start) * (ys.stop - ys.start)),
                      {"source": "rarity", "share": counts[k] / float(h * w)}))
    return boxes


# ---------------------------------------------------------------------------------------------------------
# Candidate 5: colour-contrast windows (objectness "colour contrast": a window whose colour histogram differs
# from the histogram of a ring around it), with integral histograms on a small picture; optionally each window
# refined to the pixels whose colour is likelier inside than in the ring.

CONTRAST = {
    "long": 96,            # the reduced picture's longer side
    "levels": 6,           # quantisation levels per channel (levels^3 bins)
    "min_side": 0.12,      # window sides from this share of the picture's side...
    "max_side": 0.80,      # ...to this
    "size_step": 0.05,     # step of the sides, share of the picture's side
    "stride": 0.03,        # step of the positions, share of the picture's side
    "ring": 0.25,          # ring width, share of the window's side on each side (clipped to the picture)
    "keep": 8,             # windows kept after NMS
    "nms": 0.5,
    "refine": True,
}


def contrast_windows(rgb, p=CONTRAST):
    small, s = reduced(rgb, p["long"])
    h, w = small.shape[:2]
    L = p["levels"]
    q = (small.astype(np.int32) * L) // 256
    bins = (q[..., 0] * L + q[..., 1]) * L + q[..., 2]
    nb = L ** 3
    onehot = np.zeros((nb, h, w), np.float32)
    onehot[bins, np.arange(h)[:, None], np.arange(w)[None, :]] = 1
    ii = np.zeros((nb, h + 1, w + 1), np.float32)
    ii[:, 1:, 1:] = onehot.cumsum(1).cumsum(2)

    def hist(y0, x0, y1, x1):
        return ii[:, y1, x1] - ii[:, y0, x1] - ii[:, y1, x0] + ii[:, y0, x0]
    sides_w = sorted(set(int(round(f * w)) for f in np.arange(p["min_side"], p["max_side"] + 1e-9, p["size_step"])))
    sides_h = sorted(set(int(round(f * h)) for f in np.arange(p["min_side"], p["max_side"] + 1e-9, p["size_step"])))
    sx, sy = max(1, int(round(p["stride"] * w))), max(1, int(round(p["stride"] * h)))
    windows = []
    for hh in sides_h:
        for ww in sides_w:
            y0 = np.arange(0, h - hh + 1, sy)[:, None]
            x0 = np.arange(0, w - ww + 1, sx)[None, :]
            y1, x1 = y0 + hh, x0 + ww
            ry, rx = int(round(p["ring"] * hh)), int(round(p["ring"] * ww))
            oy0, ox0 = np.maximum(y0 - ry, 0), np.maximum(x0 - rx, 0)
            oy1, ox1 = np.minimum(y1 + ry, h), np.minimum(x1 + rx, w)
            inner = hist(y0, x0, y1, x1)
            ring = hist(oy0, ox0, oy1, ox1) - inner
            pin = inner / float(hh * ww)
            pring = ring / np.maximum(ring.sum(0, keepdims=True), 1.0)
            chi = 0.5 * ((pin - pring) ** 2 / np.maximum(pin + pring, 1e-9)).sum(0)
            chi = np.where(ring.sum(0) > 0, chi, 0.0)
            ny, nx = chi.shape
            for (a, b) in zip(*np.unravel_index(np.argsort(-chi, axis=None)[:4], chi.shape)):
                windows.append(([int(x0[0, b]), int(y0[a, 0]), ww, hh], float(chi[a, b])))
    kept = nms([(b, sc, {}) for b, sc in windows], p["nms"])[:p["keep"]]
    out = []
    for box, score, _ in kept:
        info = {"source": "contrast"}
        if p["refine"]:
            window = box
            box, fill = refined(bins, box, p, nb, with_fill=True)
            info.update(win_iou=iou(window, box), fg_fill=fill, chi_ref=window_chi(ii, box, p, h, w),
                        edge=float(box[0] <= 0 or box[1] <= 0 or box[0] + box[2] >= w or box[1] + box[3] >= h),
                        aspect=abs(math.log(max(box[2], 1) / float(max(box[3], 1)))))
        out.append(([box[0] / s, box[1] / s, box[2] / s, box[3] / s], score, info))
    return out


def window_chi(ii, box, p, h, w):
    """The colour contrast (chi) of one box against its ring, from the integral histograms."""
    x, y, ww, hh = box
    ry, rx = int(round(p["ring"] * hh)), int(round(p["ring"] * ww))
    oy0, ox0, oy1, ox1 = max(0, y - ry), max(0, x - rx), min(h, y + hh + ry), min(w, x + ww + rx)
    def hist(y0, x0, y1, x1):
        return ii[:, y1, x1] - ii[:, y0, x1] - ii[:, y1, x0] + ii[:, y0, x0]
    inner = hist(y, x, y + hh, x + ww)
    ring = hist(oy0, ox0, oy1, ox1) - inner
    if ring.sum() <= 0:
        return 0.0
    pin, pring = inner / max(1.0, float(inner.sum())), ring / float(ring.sum())
    return float(0.5 * ((pin - pring) ** 2 / np.maximum(pin + pring, 1e-9)).sum())


def refined(bins, box, p, nb, with_fill=False):
    """The window shrunk or grown to the pixels (inside the window grown by the ring) whose colour bin is
    likelier inside the window than in its ring; their largest 8-connected component's box (after a 3x3
    closing) — the window itself when that is empty."""
    h, w = bins.shape
    x, y, ww, hh = box
    ry, rx = int(round(p["ring"] * hh)), int(round(p["ring"] * ww))
    oy0, ox0, oy1, ox1 = max(0, y - ry), max(0, x - rx), min(h, y + hh + ry), min(w, x + ww + rx)
    inner = np.bincount(bins[y:y + hh, x:x + ww].ravel(), minlength=nb).astype(float)
    outer = np.bincount(bins[oy0:oy1, ox0:ox1].ravel(), minlength=nb).astype(float) - inner
    pin = (inner + 0.5) / (inner.sum() + 0.5 * nb)
    pout = (outer + 0.5) / (outer.sum() + 0.5 * nb)
    fg = (pin > pout)[bins[oy0:oy1, ox0:ox1]]
    fg = ndimage.binary_closing(fg, np.ones((3, 3), bool))
    labels, n = ndimage.label(fg, structure=np.ones((3, 3), bool))
    if n == 0:
        return (box, 0.0) if with_fill else box
    sizes = np.bincount(labels.ravel())[1:]
    k = int(np.argmax(sizes)) + 1
    ys, xs = np.nonzero(labels == k)
    out = [ox0 + int(xs.min()), oy0 + int(ys.min()), int(xs.max() - xs.min() + 1), int(ys.max() - ys.min() + 1)]
    return (out, len(xs) / float(out[2] * out[3])) if with_fill else out


# ---------------------------------------------------------------------------------------------------------
# Candidate 6: feature-space saliency. The plain path's idea in the network's feature space: each cell of
# detector.onnx's feature map (unit length) is compared with the cells of the map's border ring; its distance to
# the k-th nearest ring cell (k a share of the ring, so an object touching the border does not hide itself) is
# its saliency. Background texture, however busy, looks like the border; an object does not.

FEATSAL = {
    "long": 384,            # detector input's longer side (sides rounded to multiples of 32)
    "kth": 0.2,             # k = max(2, round(this x ring cells))
    "upsample": 4,
    "thresholds": (0.35, 0.5, 0.65),   # relative to the map's range
    "refine": True,         # colour refinement of each box (as the contrast windows')
}


def saliency_map(net, rgb, p=FEATSAL):
    image, sx, sy = grid_input(rgb, p["long"])
    F = net.features(image)
    c, gh, gw = F.shape
    X = F.reshape(c, -1).T
    X = X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-6)
    ring = np.zeros((gh, gw), bool)
    ring[0, :] = ring[-1, :] = ring[:, 0] = ring[:, -1] = True
    R = X[ring.ravel()]
    d = 1.0 - X @ R.T                       # cosine distances [cells, ring cells]
    k = max(2, int(round(p["kth"] * R.shape[0])))
    sal = np.sort(d, axis=1)[:, k - 1].reshape(gh, gw)
    return sal, (sx, sy, gh, gw), F


def featsal_proposals(net, rgb, p=FEATSAL):
    sal, scale, F = saliency_map(net, rgb, p)
    props = map_proposals(sal, dict(CAM, thresholds=p["thresholds"], upsample=p["upsample"]), scale, "featsal")
    if not p["refine"]:
        return props
    small, s = reduced(rgb, CONTRAST["long"])
    L = CONTRAST["levels"]
    q = (small.astype(np.int32) * L) // 256
    bins = (q[..., 0] * L + q[..., 1]) * L + q[..., 2]
    out = []
    h, w = bins.shape
    for box, score, info in props:
        b = [int(round(box[0] * s)), int(round(box[1] * s)), max(1, int(round(box[2] * s))), max(1, int(round(box[3] * s)))]
        b[2], b[3] = min(b[2], w - b[0]), min(b[3], h - b[1])
        if b[2] < 2 or b[3] < 2:
            continue
        r = refined(bins, b, CONTRAST, L ** 3)
        out.append(([r[0] / s, r[1] / s, r[2] / s, r[3] / s], score, info))
        out.append((box, score, dict(info, unrefined=True)))
    return out


def with_saliency(net, rgb, proposals, p=FEATSAL):
    """Each proposal gains info["sal"]: the mean of the normalised feature saliency inside its box minus the
    mean in a ring a quarter of its sides wide (the map upsampled bilinearly to 4 x the grid)."""
    sal, (sx, sy, gh, gw), F = saliency_map(net, rgb, p)
    up = upsampled(sal, 4)
    up = (up - up.min()) / max(1e-6, float(up.max() - up.min()))
    H, W = up.shape
    ii = np.zeros((H + 1, W + 1))
    ii[1:, 1:] = up.cumsum(0).cumsum(1)
    fx, fy = sx * 4 / 32.0, sy * 4 / 32.0     # scene pixels -> upsampled cells

    def total(y0, x0, y1, x1):
        return ii[y1, x1] - ii[y0, x1] - ii[y1, x0] + ii[y0, x0]
    out = []
    for box, score, info in proposals:
        x0 = int(np.clip(round(box[0] * fx), 0, W - 1)); y0 = int(np.clip(round(box[1] * fy), 0, H - 1))
        x1 = int(np.clip(round((box[0] + box[2]) * fx), x0 + 1, W)); y1 = int(np.clip(round((box[1] + box[3]) * fy), y0 + 1, H))
        rx, ry = max(1, int(round(0.25 * (x1 - x0)))), max(1, int(round(0.25 * (y1 - y0))))
        ox0, oy0, ox1, oy1 = max(0, x0 - rx), max(0, y0 - ry), min(W, x1 + rx), min(H, y1 + ry)
        inside = total(y0, x0, y1, x1)
        area = (y1 - y0) * (x1 - x0)
        ring_area = (oy1 - oy0) * (ox1 - ox0) - area
        ring = (total(oy0, ox0, oy1, ox1) - inside) / ring_area if ring_area > 0 else 0.0
        out.append((box, score, dict(info, sal=float(inside / area - ring), sal_in=float(inside / area))))
    return out


# ---------------------------------------------------------------------------------------------------------
# The chosen method: the plain path when the border is uniform; else colour-contrast windows (coarser, for
# speed) ranked by a first logistic on the window's colour contrast, its area and the feature saliency.

CHOSEN_CONTRAST = dict(CONTRAST, levels=5, size_step=0.07, stride=0.04, keep=20)
CHOSEN_FEATSAL = dict(FEATSAL, long=384)
# The photographic path's calibrated score P = sigma(z), z = STAGE1 . stage1_features (a logistic fitted on the
# tune split's photographic-path windows: 1,080 windows of 54 scenes, 282 of them true at IoU >= 0.5).
STAGE1 = [-12.71, -5.501, -6.845, 11.085, 9.513, 11.673, -6.035, 0.031, 0.0, -2.051, -2.239, -1.381, -2.872]


def stage1_features(item):
    """1, chi of the window, ln(area share) of the refined box, sal, sal_in, chi of the refined box, its
    foreground fill, IoU(window, refined box), touches the border (0/1), |ln(width / height)|, sal_in^2,
    ln(area share)^2, sal x sal_in."""
    box, score, info = item
    la = math.log(max(info["area"], 1e-4))
    return [1.0, info.get("chi", score), la, info["sal"], info["sal_in"], info["chi_ref"], info["fg_fill"],
            info["win_iou"], info["edge"], info["aspect"], info["sal_in"] ** 2, la ** 2, info["sal"] * info["sal_in"]]


def chosen_proposals(net, rgb, plain=True):
    boxes = plain_feature_split(net, rgb) if plain else None
    if boxes is not None:
        return boxes
    H, W = rgb.shape[:2]
    windows = with_saliency(net, rgb, contrast_windows(rgb, CHOSEN_CONTRAST), CHOSEN_FEATSAL)
    out = []
    for box, chi, info in windows:
        info = dict(info, area=box[2] * box[3] / float(W * H), chi=chi)
        z = float(np.dot(STAGE1, stage1_features((box, chi, info))))
        out.append((box, 1 / (1 + math.exp(-z)), dict(info, stage1=z)))
    return out


# ---------------------------------------------------------------------------------------------------------
# Plain path, touching or overlapping objects split by the network: a large component's feature-map cells are
# clustered in two (k-means on unit features); when the two centres are far apart (different things), each mask
# pixel goes with its cell's cluster and each cluster becomes a box.

FEATSPLIT = {
    "long": 384,
    "min_box": 0.04,      # only components whose box covers at least this share of the picture...
    "max_box": 0.45,      # ...and less than this (a product filling the picture stays one object)
    "cell_cover": 0.5,    # a cell belongs to the component when the mask covers this share of it
    "min_cells": 4,
    "separation": 0.6,    # 1 - cos(centre 1, centre 2) needed to split
    "min_part": 0.2,      # each part must hold this share of the component's pixels
}


def kmeans2(X, iterations=10):
    d = 1 - X @ X.T
    i, j = np.unravel_index(np.argmax(d), d.shape)
    centres = X[[i, j]].copy()
    for _ in range(iterations):
        label = np.argmax(X @ centres.T, axis=1)
        for k in (0, 1):
            if (label == k).any():
                c = X[label == k].mean(0)
                centres[k] = c / max(1e-6, float(np.linalg.norm(c)))
    return label, centres


def plain_feature_split(net, rgb, p=FEATSPLIT, plain=PLAIN):
    boxes = plain_proposals(rgb, plain)
    if boxes is None:
        return None
    H, W = rgb.shape[:2]
    big = [b for b in boxes if p["min_box"] * W * H <= b[0][2] * b[0][3] < p["max_box"] * W * H]
    if not big:
        return boxes
    image, sx, sy = grid_input(rgb, p["long"])
    F = net.features(image)
    c, gh, gw = F.shape
    X = F.reshape(c, -1).T
    X = X / np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1e-6)
    small, s = reduced(rgb, plain["long"])
    h, w = small.shape[:2]
    uniform, colour, diff = plain_background(small, plain)
    mask = diff > plain["tolerance"]
    cell_w, cell_h = 32.0 / sx * s, 32.0 / sy * s      # a cell's size in reduced pixels
    out = []
    for box, score, info in boxes:
        if not p["min_box"] * W * H <= box[2] * box[3] < p["max_box"] * W * H:
            out.append((box, score, info))
            continue
        x0, y0 = int(round(box[0] * s)), int(round(box[1] * s))
        x1, y1 = min(w, int(round((box[0] + box[2]) * s))), min(h, int(round((box[1] + box[3]) * s)))
        region = np.zeros((h, w), bool)
        region[y0:y1, x0:x1] = mask[y0:y1, x0:x1]
        # each cell's mask cover
        cy = np.minimum((np.arange(h) / cell_h).astype(int), gh - 1)
        cx = np.minimum((np.arange(w) / cell_w).astype(int), gw - 1)
        cell_of = cy[:, None] * gw + cx[None, :]
        cover = np.bincount(cell_of[region], minlength=gh * gw) / np.maximum(np.bincount(cell_of.ravel(), minlength=gh * gw), 1)
        cells = np.nonzero(cover >= p["cell_cover"])[0]
        if len(cells) < p["min_cells"]:
            out.append((box, score, info))
            continue
        label, centres = kmeans2(X[cells])
        separation = 1 - float(centres[0] @ centres[1])
        if separation < p["separation"]:
            out.append((box, score, dict(info, separation=separation)))
            continue
        # every mask pixel joins the cluster of the nearest kept cell (by cell-centre distance)
        ccy, ccx = (cells // gw + 0.5) * cell_h, (cells % gw + 0.5) * cell_w
        ys, xs = np.nonzero(region)
        d2 = (ys[:, None] - ccy[None, :]) ** 2 + (xs[:, None] - ccx[None, :]) ** 2
        part = label[np.argmin(d2, axis=1)]
        parts = []
        for k in (0, 1):
            m = part == k
            if m.sum() < p["min_part"] * len(ys):
                break
            parts.append([xs[m].min() / s, ys[m].min() / s, (xs[m].max() + 1 - xs[m].min()) / s, (ys[m].max() + 1 - ys[m].min()) / s])
        if len(parts) == 2:
            for b in parts:
                out.append((b, score, dict(info, split=True, separation=separation)))
        else:
            out.append((box, score, dict(info, separation=separation)))
    return out


# ---------------------------------------------------------------------------------------------------------
# Re-scoring by the crop's classification, calibration, final selection.

RESCORE = {
    "candidates": 8,     # proposals (best raw score first, after NMS 0.7) whose crops are classified
    "margin": 0.0,       # the crop's margin around the box, share of its sides
    "nms": 0.5,
    "keep": 5,
}


def rescored(net, rgb, proposals, p=RESCORE):
    """Each candidate gains the crop's max softmax probability (and the embedding, reused for search)."""
    H, W = rgb.shape[:2]
    candidates = nms(proposals, 0.7)[:p["candidates"]]
    crops = []
    for box, score, info in candidates:
        mx, my = p["margin"] * box[2], p["margin"] * box[3]
        x0, y0 = int(max(0, math.floor(box[0] - mx))), int(max(0, math.floor(box[1] - my)))
        x1, y1 = int(min(W, math.ceil(box[0] + box[2] + mx))), int(min(H, math.ceil(box[1] + box[3] + my)))
        crops.append(rgb[y0:max(y1, y0 + 1), x0:max(x1, x0 + 1)])
    probs = net.probabilities(net.embed(crops)) if crops else np.zeros((0, CLASSES))
    out = []
    for (box, score, info), pr in zip(candidates, probs):
        info = dict(info)
        info["pmax"] = float(pr.max())
        info["class"] = int(pr.argmax())
        info["raw"] = score
        info["area"] = box[2] * box[3] / float(W * H)
        out.append((box, score, info))
    return out


def features_of(item):
    """The calibration's inputs for one candidate."""
    box, score, info = item
    pm = min(max(info["pmax"], 1e-4), 1 - 1e-4)
    if "stage1" in info:
        return [1.0, math.log(pm / (1 - pm)), info["stage1"], math.log(max(info["area"], 1e-4))]
    return [1.0, math.log(pm / (1 - pm)), info["raw"], math.log(max(info["area"], 1e-4))] + \
        ([info["sal"], info["sal_in"]] if "sal" in info else [])


def fit_logistic(X, y, l2=1e-3, iterations=50):
    X, y = np.asarray(X, float), np.asarray(y, float)
    w = np.zeros(X.shape[1])
    for _ in range(iterations):
        z = X @ w
        p = 1 / (1 + np.exp(-z))
        g = X.T @ (p - y) + l2 * w
        H = (X * (p * (1 - p))[:, None]).T @ X + l2 * np.eye(len(w))
        w -= np.linalg.solve(H, g)
    return w


# ---------------------------------------------------------------------------------------------------------
# The set and the evaluation.

def load_set(path, split, limit=None):
    """The scenes and single-object pictures of one split of bench/detection_set.py's set.json; boxes become
    [x, y, w, h] (the set's are [x1, y1, x2, y2], x2 and y2 exclusive). Background: plain, photo or single."""
    with open(path) as f:
        data = json.load(f)
    base = os.path.dirname(os.path.abspath(path))
    if "splits" in data:
        entries = data["splits"][split]["scenes"] + data["splits"][split]["singles"]
        corner = True
    else:   # a simple list (development scenes): {"image", "background", "objects": [{"box": [x, y, w, h]}]}
        entries = [s for s in data["scenes"] if s.get("split", split) == split]
        corner = False
    out = []
    for s in entries:
        image = s.get("file") or s.get("image")
        if not os.path.isabs(image):
            image = os.path.join(base, image)
        boxes = []
        for o in s["objects"]:
            b = [float(v) for v in o["box"]]
            boxes.append([b[0], b[1], b[2] - b[0], b[3] - b[1]] if corner else b)
        background = {"photograph": "photo"}.get(s.get("background"), s.get("background", "?"))
        photograph = os.path.basename(s.get("background_source", "").split(" crop")[0]) if background == "photo" else None
        out.append({"image": image, "background": background, "boxes": boxes, "id": os.path.basename(image),
                    "photograph": photograph})
    return out[:limit] if limit else out


def proposals_for(method, net, rgb):
    """Raw proposals of a method: list of (box, raw score, info)."""
    if method == "plain":
        return plain_proposals(rgb) or []
    if method == "cam":
        return cam_proposals(net, rgb)
    if method.startswith("cam-"):
        return cam_proposals(net, rgb, dict(CAM, objectness=method[4:]))
    if method == "windows":
        return window_proposals(net, rgb)
    if method == "rarity":
        return rarity_proposals(net, rgb)
    if method == "rarity-cam":
        return rarity_proposals(net, rgb, dict(RARITY, cam_gate=0.2))
    if method.startswith("plain-featsplit-"):   # plain-featsplit-SEPARATION[-MAXBOX]
        parts = method[len("plain-featsplit-"):].split("-")
        boxes = plain_feature_split(net, rgb, dict(FEATSPLIT, separation=float(parts[0]),
                                                   max_box=float(parts[1]) if len(parts) > 1 else 1.0))
        return boxes if boxes is not None else []
    if method.startswith("plain-tol-"):   # plain-tol-TOLERANCE[-UNIFORM_TOLERANCE]: the plain path's tolerance
        parts = method[len("plain-tol-"):].split("-")
        boxes = plain_proposals(rgb, dict(PLAIN, tolerance=int(parts[0]),
                                          ring_tolerance=int(parts[1]) if len(parts) > 1 else None))
        return boxes if boxes is not None else []
    if method.startswith("plain-split-"):   # plain-split-MODE[-ERODE-CORESHARE]
        parts = method[len("plain-split-"):].split("-")
        extra = {"erode": float(parts[1]), "core_share": float(parts[2])} if len(parts) == 3 else {}
        boxes = plain_proposals(rgb, dict(PLAIN, split=parts[0], **extra))
        return boxes if boxes is not None else rarity_proposals(net, rgb)
    if method == "contrast":
        return contrast_windows(rgb)
    if method == "contrast-raw":
        return contrast_windows(rgb, dict(CONTRAST, refine=False))
    if method == "plain+contrast":
        boxes = plain_proposals(rgb, dict(PLAIN, split="replace"))
        return boxes if boxes is not None else contrast_windows(rgb)
    if method == "featsal":
        return featsal_proposals(net, rgb)
    if method == "featsal-raw":
        return featsal_proposals(net, rgb, dict(FEATSAL, refine=False))
    if method == "contrast+sal":
        boxes = plain_proposals(rgb, dict(PLAIN, split="replace"))
        if boxes is not None:
            return boxes
        return with_saliency(net, rgb, contrast_windows(rgb, dict(CONTRAST, keep=12)))
    if method == "chosen":
        return chosen_proposals(net, rgb)
    if method == "photo-path-everywhere":
        return chosen_proposals(net, rgb, plain=False)
    if method == "plain+rarity":
        boxes = plain_proposals(rgb)
        return boxes if boxes is not None else rarity_proposals(net, rgb)
    if method == "plain+cam":   # the plain path when the border is uniform, else the CAM path
        boxes = plain_proposals(rgb)
        return boxes if boxes is not None else cam_proposals(net, rgb)
    raise ValueError(method)


def run_method(method, net, scenes):
    """Per scene: the truths and the re-scored candidates, with timings."""
    rows = []
    for scene in scenes:
        rgb = load_rgb(scene["image"])
        net.timing.update(detector=0.0, embed=0.0, embeds=0)
        start = time.perf_counter()
        raw = proposals_for(method, net, rgb)
        t_prop = time.perf_counter() - start
        flags, ceiling = match([b for b, _, _ in sorted(raw, key=lambda t: -t[1])], scene["boxes"])
        start = time.perf_counter()
        cands = rescored(net, rgb, raw)
        t_rescore = time.perf_counter() - start
        rows.append({"scene": scene, "candidates": cands, "ceiling": ceiling, "raw_count": len(raw),
                     "t_proposals": t_prop, "t_detector": net.timing["detector"], "t_embed": net.timing["embed"],
                     "embeds": net.timing["embeds"], "t_rescore": t_rescore})
    return rows


def path_of(item):
    return "plain" if item[2]["source"] == "plain" else "photo"


def labelled(rows, path=None):
    """(features, is the candidate a true object at IoU >= 0.5 with some truth) for every candidate (of a path)."""
    X, y = [], []
    for row in rows:
        for item in row["candidates"]:
            if path and path_of(item) != path:
                continue
            X.append(features_of(item))
            y.append(1.0 if any(iou(item[0], t) >= 0.5 for t in row["scene"]["boxes"]) else 0.0)
    return X, y


def calibrated(item, weights):
    weights = {k: np.asarray(v, float) for k, v in weights.items()}
    z = float(np.dot(weights[path_of(item)], features_of(item)))
    return 1 / (1 + math.exp(-z))


CONTAINMENT = 0.7   # final NMS also drops a box when more than 70 % of the smaller box lies in a kept one
# The chosen method's calibration (fitted on the tune split; features_of's order: 1, logit pmax, raw or stage-1
# logit, ln area share). Plain path: every component is kept (at most 5), the score only reported; photographic
# path: no pmax (no crop is classified before selection), P = sigma(z) with z of STAGE1.
CHOSEN_WEIGHTS = {"plain": [1.3, 0.516, 1.3, 0.12], "photo": [0.0, 0.0, 1.0, 0.0]}   # photo: P = sigma(z)


def select(candidates, weights, threshold=0.5, keep=5, nms_iou=0.5):
    """Calibrated scores, NMS, the threshold, at most `keep`; the best box stays even below the threshold."""
    scored = [(item[0], calibrated(item, weights), item[2]) for item in candidates]
    ranked = nms(scored, nms_iou, CONTAINMENT)
    if weights is CHOSEN_WEIGHTS and candidates and path_of(candidates[0]) == "plain":
        return sorted(ranked, key=lambda t: -t[0][2] * t[0][3])[:keep]   # plain path: every component
    kept = [s for s in ranked if s[1] >= threshold][:keep]
    return kept or ranked[:1]


def evaluate_crossed(parts, threshold=0.5):
    return evaluate([r for rows, _ in parts for r in rows], None, threshold,
                    weights_of={id(r): w for rows, w in parts for r in rows})


def evaluate(rows, weights, threshold=0.5, keep=5, nms_iou=0.5, weights_of=None):
    """Figures per background: found, ceiling, extra per scene, singles with exactly one box, times."""
    by = {}
    for row in rows:
        w = weights_of[id(row)] if weights_of else weights
        kept = select(row["candidates"], w, threshold, keep, nms_iou)
        flags, found = match([b for b, _, _ in kept], row["scene"]["boxes"])
        for key in (row["scene"]["background"], "all"):
            d = by.setdefault(key, {"scenes": 0, "objects": 0, "found": 0, "ceiling": 0, "extra": 0, "singles": 0,
                                    "singles_one": 0, "t_prop": [], "t_det": [], "t_embed": [], "embeds": []})
            d["scenes"] += 1
            d["objects"] += len(row["scene"]["boxes"])
            d["found"] += found
            d["ceiling"] += row["ceiling"]
            d["extra"] += len(kept) - sum(flags)
            if len(row["scene"]["boxes"]) == 1:
                d["singles"] += 1
                d["singles_one"] += int(len(kept) == 1)
            d["t_prop"].append(row["t_proposals"])
            d["t_det"].append(row["t_detector"])
            d["t_embed"].append(row["t_embed"])
            d["embeds"].append(row["embeds"])
    table = {}
    for key, d in by.items():
        table[key] = {
            "scenes": d["scenes"], "objects": d["objects"],
            "found": round(d["found"] / max(1, d["objects"]), 3),
            "ceiling": round(d["ceiling"] / max(1, d["objects"]), 3),
            "extra_per_scene": round(d["extra"] / max(1, d["scenes"]), 3),
            "singles_exactly_one": "%d/%d" % (d["singles_one"], d["singles"]),
            "ms_proposals_median": round(1000 * float(np.median(d["t_prop"])), 1),
            "ms_detector_median": round(1000 * float(np.median(d["t_det"])), 1),
            "ms_embed_median": round(1000 * float(np.median(d["t_embed"])), 1),
            "crops_median": float(np.median(d["embeds"])),
        }
    return table


# ---------------------------------------------------------------------------------------------------------
# Leave-backgrounds-out cross-validation of the photographic score (docs/decisions.md, "Photographic score, v5"):
# the photographic-path scenes grouped by their background photograph; each group's windows scored by a logistic
# fitted on the other groups' windows, then selected as `chosen` selects (NMS 0.7, first 8; NMS 0.5 with 70 %
# containment; P >= threshold, at most 5, at least one).

def window_features(info):
    """Named features of one refined window (stage1_features' quantities, plus the crop's logit pmax when known)."""
    la = math.log(max(info["area"], 1e-4))
    f = {"chi": info["chi"], "la": la, "sal": info["sal"], "sin": info["sal_in"], "cref": info["chi_ref"],
         "fill": info["fg_fill"], "wiou": info["win_iou"], "edge": info["edge"], "asp": info["aspect"]}
    if "pmax" in info:
        pm = min(max(info["pmax"], 1e-4), 1 - 1e-4)
        f["lpm"] = math.log(pm / (1 - pm))
    return f


def feature_vector(f, names):
    """1 then each name: a feature, "a^2" its square, "a*b" a product."""
    out = [1.0]
    for n in names:
        if "*" in n:
            a, b = n.split("*")
            out.append(f[a] * f[b])
        elif n.endswith("^2"):
            out.append(f[n[:-2]] ** 2)
        else:
            out.append(f[n])
    return out


SHIPPED_NAMES = ["chi", "la", "sal", "sin", "cref", "fill", "wiou", "edge", "asp", "sin^2", "la^2", "sal*sin"]   # STAGE1's order
CV_FEATURE_SETS = {
    "v4: 13 (9 linear + sal_in^2, (ln a)^2, sal*sal_in)": SHIPPED_NAMES,
    "9 linear": SHIPPED_NAMES[:9],
    "4: chi, ln a, sal, sal_in": ["chi", "la", "sal", "sin"],
    "4 + fill, IoU(window, refined)": ["chi", "la", "sal", "sin", "fill", "wiou"],
    "4 + chi_ref, fill, IoU + 3 quadratic": ["chi", "la", "sal", "sin", "cref", "fill", "wiou", "sin^2", "la^2", "sal*sin"],
    "9 linear + (ln a)^2": SHIPPED_NAMES[:9] + ["la^2"],
    "7: ln a, sal_in, chi_ref, fill, IoU, (ln a)^2, sal*sal_in": ["la", "sin", "cref", "fill", "wiou", "la^2", "sal*sin"],
    "v4 without chi": [n for n in SHIPPED_NAMES if n != "chi"],
    "per-scene z-scores of chi, chi_ref, sal, sal_in + ln a, fill, IoU": ["z_chi", "z_cref", "z_sal", "z_sin", "la", "fill", "wiou"],
    "v4 + the 4 z-scores": SHIPPED_NAMES + ["z_chi", "z_cref", "z_sal", "z_sin"],
}


def photo_path_windows(net, scenes, with_pmax=False):
    """Per photographic-path scene: its 20 refined windows' named features and truths (IoU >= 0.5 with a truth)."""
    out = []
    for scene in scenes:
        rgb = load_rgb(scene["image"])
        if scene["background"] != "photo" or plain_feature_split(net, rgb) is not None:
            continue
        H, W = rgb.shape[:2]
        windows = with_saliency(net, rgb, contrast_windows(rgb, CHOSEN_CONTRAST), CHOSEN_FEATSAL)
        infos = [dict(info, area=box[2] * box[3] / float(W * H), chi=chi) for box, chi, info in windows]
        if with_pmax:
            crops = []
            for box, _, _ in windows:
                x0, y0 = int(max(0, math.floor(box[0]))), int(max(0, math.floor(box[1])))
                x1, y1 = int(min(W, math.ceil(box[0] + box[2]))), int(min(H, math.ceil(box[1] + box[3])))
                crops.append(rgb[y0:max(y1, y0 + 1), x0:max(x1, x0 + 1)])
            for info, pr in zip(infos, net.probabilities(net.embed(crops))):
                info["pmax"] = float(pr.max())
        feats = [window_features(info) for info in infos]
        for k in ("chi", "cref", "sal", "sin"):   # per-scene z-scores over the scene's windows
            v = np.array([f[k] for f in feats])
            for f, x in zip(feats, v):
                f["z_" + k] = (x - v.mean()) / max(float(v.std()), 1e-6)
        out.append({"scene": scene, "boxes": [b for b, _, _ in windows], "features": feats,
                    "truth": [float(any(iou(b, t) >= 0.5 for t in scene["boxes"])) for b, _, _ in windows]})
    return out


def photo_select(boxes, scores, threshold=0.5, keep=5):
    items = [(b, float(sc), None) for b, sc in zip(boxes, scores)]
    ranked = nms(nms(items, 0.7)[:8], 0.5, CONTAINMENT)
    return [t for t in ranked if t[1] >= threshold][:keep] or ranked[:1]


def background_cv(groups_rows, names, threshold=0.5, l2=1e-3, weights=None):
    """(found, extra per scene, objects, scenes) with each photograph's scenes scored by a fit on the others
    (or by `weights` when given: in-sample)."""
    found = extra = objects = 0
    photographs = sorted(set(r["scene"]["photograph"] for r in groups_rows))
    for ph in photographs:
        test = [r for r in groups_rows if r["scene"]["photograph"] == ph]
        w = weights
        if w is None:
            train = [r for r in groups_rows if r["scene"]["photograph"] != ph]
            X = [feature_vector(f, names) for r in train for f in r["features"]]
            y = [t for r in train for t in r["truth"]]
            w = fit_logistic(X, y, l2=l2)
        for r in test:
            z = np.array([feature_vector(f, names) for f in r["features"]]) @ np.asarray(w, float)
            kept = photo_select(r["boxes"], 1 / (1 + np.exp(-z)), threshold)
            flags, n = match([b for b, _, _ in kept], r["scene"]["boxes"])
            found += n
            extra += len(kept) - sum(flags)
            objects += len(r["scene"]["boxes"])
    return found / max(1, objects), extra / max(1, len(groups_rows)), objects, len(groups_rows)


def run_background_cv(net, scenes, with_pmax=False):
    rows = photo_path_windows(net, scenes, with_pmax)
    print("photographic-path scenes %d over %d photographs, %d objects"
          % (len(rows), len(set(r["scene"]["photograph"] for r in rows)), sum(len(r["scene"]["boxes"]) for r in rows)))
    f, e, _, _ = background_cv(rows, SHIPPED_NAMES, weights=STAGE1)
    print("  %-66s found %.3f  extra/scene %.2f" % ("v4 as shipped (STAGE1), in-sample", f, e))
    sets = dict(CV_FEATURE_SETS)
    if with_pmax:
        sets["v4 + logit pmax (20 crops a scene)"] = SHIPPED_NAMES + ["lpm"]
    for label, names in sets.items():
        f, e, _, _ = background_cv(rows, names)
        f6, e6, _, _ = background_cv(rows, names, threshold=0.6)
        print("  %-66s found %.3f  extra/scene %.2f   (P >= 0.6: %.3f, %.2f)" % (label + ", leave-one-photograph-out", f, e, f6, e6))
        sys.stdout.flush()
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", default=SET)
    parser.add_argument("--split", default="tune")
    parser.add_argument("--methods", default="plain+cam,cam-wsum,cam-max,cam-energy,cam-local,windows")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--threshold", type=float, default=0.5)
    parser.add_argument("--json", help="write the figures here")
    parser.add_argument("--fixed", action="store_true", help="chosen: the constants CHOSEN_WEIGHTS, not a new fit")
    parser.add_argument("--folds", action="store_true",
                        help="figures with the calibration fitted on the other half of the scenes (2-fold)")
    parser.add_argument("--cache", help="a folder keeping each method's candidates (pickle) between runs")
    parser.add_argument("--background-cv", action="store_true",
                        help="only the photographic score's leave-one-background-photograph-out cross-validation")
    parser.add_argument("--with-pmax", action="store_true", help="--background-cv: also the crops' pmax (20 crops a scene)")
    args = parser.parse_args()
    if args.split != "tune":
        print("warning: reading the %s split: report it once, tune nothing on it" % args.split, file=sys.stderr)
    scenes = load_set(args.set, args.split, args.limit)
    net = Net()
    if args.background_cv:
        run_background_cv(net, scenes, args.with_pmax)
        return 0
    results = {}
    for method in args.methods.split(","):
        cached = os.path.join(args.cache, "%s-%s-%d.pickle" % (method, args.split, len(scenes))) if args.cache else None
        if cached and os.path.exists(cached):
            with open(cached, "rb") as f:
                rows = pickle.load(f)
        else:
            rows = run_method(method, net, scenes)
            if cached:
                os.makedirs(args.cache, exist_ok=True)
                with open(cached, "wb") as f:
                    pickle.dump(rows, f)
        w = {}
        for path in ("plain", "photo"):
            X, y = labelled(rows, path)
            w[path] = fit_logistic(X, y) if len(set(y)) == 2 else np.array([0.0, 1.0, 0.0, 0.0] + [0.0] * (len(X[0]) - 4 if X else 0))
        table = evaluate(rows, w, args.threshold)
        if method in ("chosen", "photo-path-everywhere") and args.fixed:
            w = CHOSEN_WEIGHTS
            table = evaluate(rows, w, args.threshold)
        if args.folds:   # the calibration fitted on one half of the scenes, figures on the other, both ways
            halves = [[r for j, r in enumerate(rows) if j % 2 == f] for f in (0, 1)]
            crossed = []
            for f in (0, 1):
                wf = {}
                for path in ("plain", "photo"):
                    X, y = labelled(halves[1 - f], path)
                    wf[path] = fit_logistic(X, y) if len(set(y)) == 2 else w[path]
                crossed.append((halves[f], wf))
            table = evaluate_crossed(crossed, args.threshold)
        results[method] = {"calibration": {k: [round(float(v), 4) for v in w[k]] for k in w}, "figures": table}
        print("%s  calibration (1, logit pmax, raw, log area): plain %s photo %s"
              % (method, np.round(w["plain"], 3).tolist(), np.round(w["photo"], 3).tolist()))
        for key in sorted(table):
            t = table[key]
            print("  %-6s scenes %3d objects %3d  found %.3f (ceiling %.3f)  extra/scene %.2f  singles one %s  "
                  "ms: proposals %.1f detector %.1f embeds %.1f (%g crops)"
                  % (key, t["scenes"], t["objects"], t["found"], t["ceiling"], t["extra_per_scene"],
                     t["singles_exactly_one"], t["ms_proposals_median"], t["ms_detector_median"],
                     t["ms_embed_median"], t["crops_median"]))
        sys.stdout.flush()
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
