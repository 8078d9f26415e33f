"""Issue 40, item 1: EfficientNet-Lite0 in int8 (QDQ) — calibration ranges, variants on TUNE, the hand-written graph.

    taskset -c 1 bench/.venv/bin/python bench/quantise_int8.py ranges [--method minmax|percentile|entropy]
        # activation ranges of the float32 model.onnx over corpus/images (the repository's own 102 pictures, in no
        # evaluation set), preprocessed as vsearch does; writes bench/work/int8/ranges-METHOD.json, and with
        # --write-shipped scripts/model/efficientnet-lite0-int8-ranges.json (what convert_efficientnet_lite0.py
        # --int8-ranges reads at set-up; set-up never runs onnxruntime or its quantiser)
    taskset -c 1 bench/.venv/bin/python bench/quantise_int8.py variants [--only a,b,...]
        # every variant quantised by onnxruntime.quantization (QDQ) from those ranges, measured on TUNE only:
        # one-core session.run latency on a 224x224 input (the float32 file in the same process), cosine to float32
        # after the projection (min / median over every tune picture) and the retrieval figures
    taskset -c 1 bench/.venv/bin/python bench/quantise_int8.py check --model DIR/model.onnx --variant NAME
        # the hand-written int8 model (convert_efficientnet_lite0.py --int8-ranges) against onnxruntime's quantiser's
        # output for the same ranges: graph structure, initialisers, vectors and speed
    taskset -c 1 bench/.venv/bin/python bench/quantise_int8.py held-out --variant NAME --model DIR/model.onnx
        # the held-out parts, ONCE, after the variant is fixed (float32 beside it)
    bench/.venv/bin/python bench/quantise_int8.py speed --vsearch PATH --int8-dir DIR [--fp32-dir DIR] [--runs 5]
        # CPU ms per 1-MP JPEG on one core (--core 1): `vsearch model embed --batch 1` and the Python peer
        # (bench/embedding.py's), each with the float32 and the int8 model, interleaved; equal-output checks first

Needs bench/.venv with onnxruntime 1.23.2, numpy, Pillow and `onnx` (bench only; the quantiser imports it) and the
float32 model from scripts/install-model.sh (.build-tools/models/efficientnet-lite0/, or --model-dir).

Preprocessing = vsearch's (bench/embedding.py's peer, within cosine 0.9997 of `vsearch model embed`): Pillow decode
(similarity_lib.load_rgb: EXIF, ICC -> sRGB, alpha on white) with JPEG DCT scaling (`draft`) to the smallest scale
whose longer side is still >= 224, then `pad` with Lanczos, (v - 127) / 128. The retrieval figures are those of
similarity_experiments.py's shipped find-similar (its `rerank` with beta 0): model output L2-normalised, the
model's projection.bin (PCA 1280 -> 512), catalog rows Int8, query float32; kinds p@10 (each picture against the
rest), copies recall@1 / @10 and per transform (each query against originals + distractors). Input tensors of
every picture are cached in bench/work/int8/ (uint8, by set and part).
"""
import argparse
import hashlib
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "datasets"))
import similarity_lib as sl  # noqa: E402

WORK = os.path.join(HERE, "work", "int8")
CORPUS = os.path.join(ROOT, "corpus", "images")
SHIPPED_RANGES = os.path.join(ROOT, "scripts", "model", "efficientnet-lite0-int8-ranges.json")
SIDE = 224

# Variants: (description, settings). Node names are the converter's (the PyTorch port's module names).
VARIANTS = {
    "a": ("everything QDQ'd (every op type ORT quantises: Conv, Add, GlobalAveragePool, Clip removed into Conv)",
          dict(ops=None, exclude=())),
    "a-conv": ("every Conv QDQ'd; Add and the pool float", dict(ops=["Conv", "Clip"], exclude=())),
    "b": ("Conv QDQ'd except the depthwise convolutions (float)", dict(ops=["Conv", "Clip"], exclude=("depthwise",))),
    "c": ("as b, and the stem conv and the 1x1 head conv (320 -> 1280) float",
          dict(ops=["Conv", "Clip"], exclude=("depthwise", "stem", "head"))),
    "a-conv-stemhead": ("every Conv QDQ'd except stem and head", dict(ops=["Conv", "Clip"], exclude=("stem", "head"))),
    "a-conv-head": ("every Conv QDQ'd except the head", dict(ops=["Conv", "Clip"], exclude=("head",))),
    "a-conv-rr": ("every Conv QDQ'd, weights in 7 bits (reduce_range: [-64, 64], no u8s8 saturation without VNNI)",
                  dict(ops=["Conv", "Clip"], exclude=(), reduce_range=True)),
}


# ---------------------------------------------------------------- preprocessing (vsearch's)
def load_224(path):
    from PIL import Image
    lanczos = getattr(Image, "Resampling", Image).LANCZOS
    with Image.open(path) as im:
        w, h = im.size
        fmt = im.format
    s = SIDE / max(w, h)
    draft = (int(w * s + 0.999), int(h * s + 0.999)) if fmt == "JPEG" else None
    rgb = sl.load_rgb(path, draft=draft)
    return np.asarray(sl.prepare(rgb, (SIDE, SIDE), "pad", False, resample=lanczos), np.uint8)


def pixels(tag, paths):
    """[N, 224, 224, 3] uint8, cached."""
    os.makedirs(WORK, exist_ok=True)
    key = hashlib.sha256("\n".join(paths).encode()).hexdigest()[:12]
    path = os.path.join(WORK, f"px-{tag}-{key}.npy")
    if os.path.exists(path):
        return np.load(path)
    a = np.stack([load_224(p) for p in paths])
    np.save(path, a)
    return a


def to_input(px):
    """uint8 [N, H, W, 3] -> float32 [N, 3, H, W] as model.json says: (v - 127) / 128."""
    return np.ascontiguousarray(((px.astype(np.float32) - 127.0) / 128.0).transpose(0, 3, 1, 2))


def corpus_paths():
    return sorted(os.path.join(CORPUS, f) for f in os.listdir(CORPUS) if not f.startswith("."))


# ---------------------------------------------------------------- sessions
def session(path_or_bytes):
    import onnxruntime as ort
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    # exact U8U8 instead of possibly saturating U8S8 on x86 without VNNI; a no-op where VNNI exists (measured: same
    # outputs, same speed on this AVX-512 VNNI CPU)
    so.add_session_config_entry("session.x64quantprecision", "1")
    return ort.InferenceSession(path_or_bytes, so, providers=["CPUExecutionProvider"])


def run_all(sess, px, batch=16):
    name = sess.get_inputs()[0].name
    out = []
    for i in range(0, len(px), batch):
        out.append(sess.run(None, {name: to_input(px[i:i + batch])})[0])
    return np.concatenate(out).reshape(len(px), -1)


def latency(sessions, rounds=7, runs=30):
    """{name: median ms of session.run on one 224x224 input}, the sessions interleaved round by round."""
    x = to_input(load_224(corpus_paths()[0])[None])
    times = {n: [] for n in sessions}
    for s in sessions.values():
        for _ in range(5):
            s.run(None, {s.get_inputs()[0].name: x})
    for _ in range(rounds):
        for n, s in sessions.items():
            name = s.get_inputs()[0].name
            ts = []
            for _ in range(runs):
                t0 = time.perf_counter()
                s.run(None, {name: x})
                ts.append(time.perf_counter() - t0)
            times[n].append(statistics.median(ts) * 1000)
    return {n: (statistics.median(v), v) for n, v in times.items()}


# ---------------------------------------------------------------- calibration ranges
def compute_ranges(model_path, method):
    """{tensor name: (lowest, highest)} of the float32 model over corpus/images (ORT's calibrator)."""
    from onnxruntime.quantization import CalibrationDataReader, CalibrationMethod, create_calibrator
    px = pixels("corpus", corpus_paths())

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.i = 0

        def get_next(self):
            if self.i >= len(px):
                return None
            self.i += 1
            return {"input": to_input(px[self.i - 1:self.i])}

    m = {"minmax": CalibrationMethod.MinMax, "percentile": CalibrationMethod.Percentile,
         "entropy": CalibrationMethod.Entropy}[method]
    extra = {"percentile": 99.999} if method == "percentile" else {}
    os.makedirs(WORK, exist_ok=True)
    cal = create_calibrator(model_path, [], augmented_model_path=os.path.join(WORK, f"augmented-{method}.onnx"),
                            calibrate_method=m, extra_options=extra)
    cal.collect_data(Reader())
    data = cal.compute_data()
    out = {}
    for k in sorted(data.data):
        lo, hi = data.data[k].range_value
        out[k] = [float(np.asarray(lo, np.float32).reshape(-1)[0]), float(np.asarray(hi, np.float32).reshape(-1)[0])]
    return out, len(px)


def ranges_file(method):
    return os.path.join(WORK, f"ranges-{method}.json")


def load_ranges(method):
    path = ranges_file(method)
    if not os.path.exists(path):
        raise SystemExit(f"{path} missing: run `quantise_int8.py ranges --method {method}` first")
    return json.load(open(path))["ranges"]


def tensors_data(ranges):
    from onnxruntime.quantization.calibrate import CalibrationMethod, TensorData, TensorsData
    return TensorsData(CalibrationMethod.MinMax, {k: TensorData(lowest=np.float32(v[0]), highest=np.float32(v[1]))
                                                  for k, v in ranges.items()})


def node_names(model_path):
    import onnx
    g = onnx.load(model_path).graph
    return [n.name for n in g.node if n.op_type == "Conv"]


def excluded(model_path, parts):
    names = node_names(model_path)
    out = []
    for n in names:
        if ("depthwise" in parts and "_depthwise_conv" in n) or ("stem" in parts and n == "_conv_stem") or \
                ("head" in parts and n == "_conv_head"):
            out.append(n)
    return out


def ort_quantise(model_path, out_path, ranges, ops, exclude, per_channel=True, reduce_range=False):
    """onnxruntime.quantization's QDQ quantiser on the float32 model with the given ranges (what quantize_static does
    after calibrating): int8 symmetric weights (per channel), uint8 asymmetric activations, int32 biases."""
    from onnxruntime.quantization import QuantType
    from onnxruntime.quantization.qdq_quantizer import QDQQuantizer
    from onnxruntime.quantization.quant_utils import load_model_with_shape_infer
    from onnxruntime.quantization.registry import QDQRegistry, QLinearOpsRegistry
    from pathlib import Path
    model = load_model_with_shape_infer(Path(model_path))
    if not ops:
        ops = list(set(QLinearOpsRegistry.keys()) | set(QDQRegistry.keys()))
    q = QDQQuantizer(model, per_channel, reduce_range, QuantType.QInt8, QuantType.QUInt8, tensors_data(ranges),
                     [], list(exclude), ops, {})
    q.quantize_model()
    q.model.save_model_to_file(out_path, False)
    return out_path


# ---------------------------------------------------------------- retrieval on a part
class Part:
    def __init__(self, part):
        import similarity_experiments as se
        self.se = se
        self.sets = se.Sets(part)
        s = self.sets
        self.px = {"kinds": pixels(f"kinds-{part}", [p for _, _, p in s.kinds]),
                   "catalog": pixels(f"copies-{part}-catalog", s.cat_paths),
                   "queries": pixels(f"copies-{part}-queries", s.q_paths)}

    def raw(self, sess):
        return {k: run_all(sess, v) for k, v in self.px.items()}

    def figures(self, raw, project):
        se, s = self.se, self.sets
        K, C, Q = project(raw["kinds"]), project(raw["catalog"]), project(raw["queries"])
        kc = K @ sl.to_int8(K).T
        np.fill_diagonal(kc, -np.inf)
        r1, r10, per = se.copy_metrics(Q @ sl.to_int8(C).T, s)
        return {"p10": se.p_at_10(kc, s.kind_of), "r1": r1, "r10": r10, "per": per,
                "projected": np.concatenate([K, C, Q])}


def fp32_model():
    return sl.Model(os.environ.get("VSEARCH_MODEL_DIR") or None)


def projection(model):
    import similarity_experiments as se
    return se.shipped_projection(model)


def machine():
    load = open("/proc/loadavg").read().split()[:3]
    flags = open("/proc/cpuinfo").read()
    isa = [f for f in ("avx2", "avx512f", "avx512_vnni", "avx_vnni") if f" {f}" in flags]
    return f"{platform.machine()}, {os.cpu_count()} cores, {', '.join(isa)}; load {' '.join(load)}"


def cos_stats(a, b):
    c = np.sum(a * b, axis=1)
    return float(c.min()), float(np.median(c)), float(np.percentile(c, 1))


def cmd_ranges(a):
    model = fp32_model()
    path = os.path.join(model.dir, "model.onnx")
    ranges, n = compute_ranges(path, a.method)
    doc = {"model_sha256": model.sha256, "method": a.method, "pictures": n,
           "source": "corpus/images (the repository's own pictures), vsearch's preprocessing",
           "ranges": ranges}
    os.makedirs(WORK, exist_ok=True)
    json.dump(doc, open(ranges_file(a.method), "w"), indent=1, sort_keys=True)
    print(f"{len(ranges)} tensors -> {ranges_file(a.method)}", file=sys.stderr)
    if a.write_shipped:
        write_shipped(doc, a.variant)


def write_shipped(doc, variant):
    """The ranges convert_efficientnet_lite0.py --int8-ranges needs (no onnxruntime at set-up): the graph input, every
    Conv's output (its ReLU6's, which the quantised graph drops) and every residual Add's. Only variants that quantise
    every Conv (a-conv: the Adds and the pool stay float) are written; the converter refuses ranges it does not use."""
    if VARIANTS[variant][1]["exclude"] or VARIANTS[variant][1]["ops"] != ["Conv", "Clip"]:
        raise SystemExit(f"--write-shipped writes variant a-conv's ranges only, not {variant}'s")
    keep = {k: v for k, v in doc["ranges"].items()
            if k == "input" or k.endswith(".relu6") or k.endswith("._project_conv") or k.endswith(".add")}
    out = {"format": "vsearch-int8-ranges-1", "model": "efficientnet-lite0",
           "float32_model_sha256": doc["model_sha256"], "method": doc["method"], "pictures": doc["pictures"],
           "source": "corpus/images (the repository's own pictures, in no evaluation set), preprocessed as vsearch "
                     "does; onnxruntime 1.23.2 on one thread; ranges are [lowest, highest] of each float32 tensor "
                     "(onnxruntime.quantization's calibrator), exact float32 values",
           "made_by": "bench/quantise_int8.py ranges --method %s --write-shipped" % doc["method"],
           "variant": variant, "float_convs": [], "ranges": keep}
    head = json.dumps({k: v for k, v in out.items() if k != "ranges"}, indent=1, sort_keys=True)[:-2]
    body = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in sorted(keep.items()))
    with open(SHIPPED_RANGES, "w", encoding="utf-8") as f:
        f.write(head + ',\n "ranges": {\n' + body + "\n }\n}\n")
    json.load(open(SHIPPED_RANGES))
    print(f"{len(keep)} ranges -> {SHIPPED_RANGES}", file=sys.stderr)


def cmd_variants(a):
    import onnxruntime as ort
    model = fp32_model()
    fp32_path = os.path.join(model.dir, "model.onnx")
    P = projection(model)
    tune = Part("tune")
    t0 = time.time()
    ref_raw = tune.raw(model.session)
    ref = tune.figures(ref_raw, P)
    print(f"fp32: p@10 {ref['p10']:.3f} R@1 {ref['r1']:.3f} ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)
    rows = [{"name": "fp32", "desc": "float32 (today)", **{k: v for k, v in ref.items() if k != "projected"},
             "cos": (1.0, 1.0, 1.0)}]
    sessions = {"fp32": model.session}
    os.makedirs(WORK, exist_ok=True)
    todo = a.only.split(",") if a.only else list(VARIANTS) + ["a-conv-pt", "a-conv-percentile", "a-conv-entropy"]
    for name in todo:
        base, method, per_channel = name, "minmax", True
        for suffix, m in (("-percentile", "percentile"), ("-entropy", "entropy")):
            if name.endswith(suffix):
                base, method = name[:-len(suffix)], m
        if name.endswith("-pt"):
            base, per_channel = name[:-3], False
        desc, cfg = VARIANTS[base]
        desc = desc + ("" if per_channel else "; per-tensor weights") + ("" if method == "minmax" else f"; {method} ranges")
        out = os.path.join(WORK, f"variant-{name}.onnx")
        ort_quantise(fp32_path, out, load_ranges(method), cfg["ops"], excluded(fp32_path, cfg["exclude"]), per_channel,
                     cfg.get("reduce_range", False))
        sess = session(out)
        t0 = time.time()
        f = tune.figures(tune.raw(sess), P)
        cos = cos_stats(ref["projected"], f.pop("projected"))
        rows.append({"name": name, "desc": desc, **f, "cos": cos})
        sessions[name] = sess
        print(f"{name}: p@10 {f['p10']:.3f} R@1 {f['r1']:.3f} down25 {f['per']['down25']:.3f} cos min {cos[0]:.4f} "
              f"median {cos[1]:.4f} ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)
    lat = latency(sessions)
    for r in rows:
        r["ms"], r["ms_rounds"] = lat[r["name"]]
    doc = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": machine(), "ort": ort.__version__,
           "rows": rows}
    path = os.path.join(WORK, "variants" + (("-" + a.only.replace(",", "_")) if a.only else "") + ".json")
    json.dump(doc, open(path, "w"), indent=1, default=float)
    print(markdown(doc))


def markdown(doc):
    lines = [f"{doc['date']}; {doc['machine']}; onnxruntime {doc['ort']}", "",
             "| variant | what | run ms (median) | vs fp32 | cosine to fp32 after projection min / p1 / median | kinds p@10 | copies R@1 | R@10 | down25 R@1 | lowest R@1 (transform) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    base = doc["rows"][0]["ms"]
    for r in doc["rows"]:
        worst = min(r["per"], key=r["per"].get)
        lines.append(f"| {r['name']} | {r['desc']} | {r['ms']:.2f} | {base / r['ms']:.2f}× | "
                     f"{r['cos'][0]:.4f} / {r['cos'][2]:.4f} / {r['cos'][1]:.4f} | {r['p10']:.3f} | {r['r1']:.3f} | "
                     f"{r['r10']:.3f} | {r['per']['down25']:.3f} | {r['per'][worst]:.3f} ({worst}) |")
    return "\n".join(lines)


def cmd_check(a):
    """Hand-written (converter) int8 model against ORT's quantiser's for the same ranges."""
    import onnx
    from onnx import numpy_helper
    model = fp32_model()
    fp32_path = os.path.join(model.dir, "model.onnx")
    base, method = a.variant, "minmax"
    desc, cfg = VARIANTS[base]
    ort_path = os.path.join(WORK, f"check-ort-{a.variant}.onnx")
    ort_quantise(fp32_path, ort_path, load_ranges(method), cfg["ops"], excluded(fp32_path, cfg["exclude"]), True,
                 cfg.get("reduce_range", False))
    g1, g2 = onnx.load(ort_path).graph, onnx.load(a.model).graph
    ops1 = [n.op_type for n in g1.node]
    ops2 = [n.op_type for n in g2.node]
    print(f"nodes: ORT {len(ops1)}, hand-written {len(ops2)}; op counts ORT "
          f"{dict(sorted((o, ops1.count(o)) for o in set(ops1)))}, hand-written "
          f"{dict(sorted((o, ops2.count(o)) for o in set(ops2)))}")
    # initialisers by role: compare the quantised weights, scales, zero points and biases by sorted values
    i1 = {t.name: numpy_helper.to_array(t) for t in g1.initializer}
    i2 = {t.name: numpy_helper.to_array(t) for t in g2.initializer}
    by_type = lambda d: {str(v.dtype): sum(x.size for x in d.values() if x.dtype == v.dtype) for v in d.values()}
    print(f"initialiser elements by dtype: ORT {by_type(i1)}, hand-written {by_type(i2)}")
    same = sum(1 for k in i1 if k in i2 and i1[k].dtype == i2[k].dtype and i1[k].shape == i2[k].shape
               and np.array_equal(i1[k], i2[k]))
    print(f"initialisers with the same name, dtype, shape and values: {same} of ORT's {len(i1)} (hand-written {len(i2)})")
    diff = [k for k in i1 if k in i2 and not (i1[k].shape == i2[k].shape and np.array_equal(i1[k], i2[k]))]
    for k in diff[:10]:
        d = np.abs(i1[k].astype(np.float64) - i2[k].astype(np.float64))
        print(f"  differs: {k} {i1[k].dtype}{list(i1[k].shape)} vs {i2[k].dtype}{list(i2[k].shape)}: "
              f"max |diff| {d.max() if d.size else 'n/a'}, {int((d > 0).sum())} elements")
    missing = [k for k in i1 if k not in i2]
    print(f"ORT initialisers not in the hand-written graph: {len(missing)} {missing[:5]}")
    s1, s2 = session(ort_path), session(a.model)
    px = pixels("corpus", corpus_paths())
    r1, r2 = run_all(s1, px), run_all(s2, px)
    rf = run_all(model.session, px)
    P = projection(model)
    d = np.abs(r1 - r2)
    print(f"raw outputs over corpus/images ({len(px)}): max |diff| {d.max():.3g}, identical rows "
          f"{int((d.max(axis=1) == 0).sum())}; cosine after projection hand vs ORT min {cos_stats(P(r1), P(r2))[0]:.6f}; "
          f"hand vs fp32 min {cos_stats(P(rf), P(r2))[0]:.4f} median {cos_stats(P(rf), P(r2))[1]:.4f}")
    lat = latency({"fp32": model.session, "ort": s1, "hand": s2})
    print("latency ms (median of round medians): " + ", ".join(f"{k} {v[0]:.2f}" for k, v in lat.items()))
    if a.detector:
        check_detector(a.detector, s2, px)


def check_detector(path, model_sess, px):
    det = session(path)
    x = to_input(px[:16])
    feats = det.run(None, {"input": x})[0]
    mean = feats.mean(axis=(2, 3))
    emb = model_sess.run(None, {"input": x})[0]
    d = np.abs(mean - emb)
    print(f"detector: features {list(feats.shape)}; |mean of features - model output| max {d.max():.3g} "
          f"(relative {d.max() / np.abs(emb).max():.3g}); cosine min {cos_stats(sl.l2n(mean), sl.l2n(emb))[0]:.7f}")


def cmd_held_out(a):
    model = fp32_model()
    P = projection(model)
    part = Part("held-out")
    rows = []
    for name, sess in (("fp32", model.session), (a.variant, session(a.model))):
        f = part.figures(part.raw(sess), P)
        rows.append((name, f))
    ref = rows[0][1]["projected"]
    lines = ["| model | kinds p@10 (hits of 10 per query) | copies R@1 (hits) | R@10 | down25 R@1 | lowest R@1 (transform) | "
             "cosine to fp32 min / median |", "|---|---|---|---|---|---|---|"]
    nk, nq = len(part.sets.kinds), len(part.sets.queries)
    for name, f in rows:
        worst = min(f["per"], key=f["per"].get)
        c = cos_stats(ref, f["projected"])
        lines.append(f"| {name} | {f['p10']:.4f} ({round(f['p10'] * nk * 10)} of {nk * 10}) | {f['r1']:.4f} "
                     f"({round(f['r1'] * nq)} of {nq}) | {f['r10']:.3f} | {f['per']['down25']:.3f} | "
                     f"{f['per'][worst]:.3f} ({worst}) | {c[0]:.4f} / {c[1]:.4f} |")
    per = "\n".join(f"  {t}: " + ", ".join(f"{n} {f['per'][t]:.3f}" for n, f in rows) for t in rows[0][1]["per"])
    out = "\n".join(lines) + "\n\nper transform R@1:\n" + per
    open(os.path.join(WORK, "held-out.md"), "w").write(out + "\n")
    print(out)


def cmd_speed(a):
    """vsearch `model embed --batch 1` and the Python peer (bench/embedding.py's, here with bench/.venv's PyPI Pillow),
    each with the float32 and the int8 model, interleaved on one core: CPU ms per 1-MP JPEG (bench/work/peer-1mp/),
    startup subtracted as bench/embedding.py does (the same files once and --repeat times), median of --runs."""
    import embed_peer
    import embedding
    files = embed_peer.make_inputs(a.count)
    os.makedirs(WORK, exist_ok=True)
    single, multi = os.path.join(WORK, "speed-1x.json"), os.path.join(WORK, f"speed-{a.repeat}x.json")
    json.dump(files, open(single, "w"))
    json.dump(files * a.repeat, open(multi, "w"))
    py = sys.executable
    dirs = {"fp32": a.fp32_dir, "int8": a.int8_dir}
    # equal output first: vsearch's raw vectors against the peer's, each model (20 files)
    first = os.path.join(WORK, "speed-20.json")
    json.dump(files[:20], open(first, "w"))
    checks, raws = [], {}
    for m, d in dirs.items():
        dump = os.path.join(WORK, f"speed-peer-{m}.npy")
        embedding.run(embedding.peer_cmd(py, first, 1, d, dump), core=a.core)
        _, _, raw = embedding.run([a.vsearch, "model", "embed", "--raw", "--model-dir", d] + files[:20], core=a.core,
                                  stdout=None)
        v = sl.l2n(np.array([json.loads(line)["vector"] for line in raw.splitlines()], np.float32))
        raws[m] = v
        c = np.sum(v * np.load(dump), axis=1)
        checks.append(f"{m}: vsearch --raw vs the peer, cosine min {c.min():.5f} median {np.median(c):.5f}")
    c = np.sum(raws["fp32"] * raws["int8"], axis=1)
    checks.append(f"vsearch int8 vs vsearch fp32 (raw 1280-d): cosine min {c.min():.4f} median {np.median(c):.4f}")
    print("\n".join(checks), file=sys.stderr, flush=True)
    configs = {}
    for m, d in dirs.items():
        configs[f"vsearch {m}"] = (lambda d: lambda js, lst: [a.vsearch, "model", "embed", "--batch", "1", "--model-dir", d] + lst)(d)
        configs[f"peer {m}"] = (lambda d: lambda js, lst: embedding.peer_cmd(py, js, 1, d))(d)
    per = {k: [] for k in configs}
    load0 = open("/proc/loadavg").read().split()[:3]
    embedding.OTHERS["a"].clear()
    for rep in range(a.runs):
        for name, make in configs.items():
            cpu = {}
            for key, lst, js in (("1x", files, single), ("kx", files * a.repeat, multi)):
                cpu[key] = embedding.run(make(js, lst), core=a.core)[0]
            per[name].append(1000 * (cpu["kx"] - cpu["1x"]) / ((a.repeat - 1) * len(files)))
        print(f"run {rep + 1}: " + ", ".join(f"{k} {v[-1]:.2f}" for k, v in per.items()), file=sys.stderr, flush=True)
    load1 = open("/proc/loadavg").read().split()[:3]
    others = embedding.OTHERS["a"]
    lines = [f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; core {a.core}; {machine()}; load before "
             f"{' '.join(load0)}, after {' '.join(load1)}; other processes' CPU during the runs median "
             f"{statistics.median(others):.2f} cores, highest {max(others):.2f}; {a.count} JPEGs 1280x800; "
             f"vsearch `{a.vsearch}`; peer {py} (PyPI Pillow)", "", *checks, "",
             "| pipeline | model | CPU ms / image (median) | runs |", "|---|---|---|---|"]
    for name, v in per.items():
        who, m = name.split()
        lines.append(f"| {who} | {m} | **{statistics.median(v):.2f}** | {', '.join(f'{x:.2f}' for x in v)} |")
    out = "\n".join(lines)
    open(os.path.join(WORK, "speed.md"), "w").write(out + "\n")
    print(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("ranges")
    r.add_argument("--method", default="minmax", choices=["minmax", "percentile", "entropy"])
    r.add_argument("--write-shipped", action="store_true")
    r.add_argument("--variant", default="a-conv")
    v = sub.add_parser("variants")
    v.add_argument("--only")
    c = sub.add_parser("check")
    c.add_argument("--model", required=True)
    c.add_argument("--variant", required=True)
    c.add_argument("--detector")
    h = sub.add_parser("held-out")
    h.add_argument("--variant", required=True)
    h.add_argument("--model", required=True)
    sp = sub.add_parser("speed")
    sp.add_argument("--vsearch", required=True)
    sp.add_argument("--fp32-dir", default=os.path.join(ROOT, ".build-tools", "models", "efficientnet-lite0"))
    sp.add_argument("--int8-dir", required=True)
    sp.add_argument("--count", type=int, default=100)
    sp.add_argument("--repeat", type=int, default=3)
    sp.add_argument("--runs", type=int, default=5)
    sp.add_argument("--core", type=int, default=1)
    a = ap.parse_args()
    {"ranges": cmd_ranges, "variants": cmd_variants, "check": cmd_check, "held-out": cmd_held_out,
     "speed": cmd_speed}[a.cmd](a)


if __name__ == "__main__":
    main()
