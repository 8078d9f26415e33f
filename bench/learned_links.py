#!/usr/bin/env python3
"""Why the learned HNSW graph reaches lower recall than faiss's at equal ef (issue 40, item 4).

vsearch's graph is hnswlib's algorithm over the stored (Int8-rounded, unit) rows; faiss's peer in bench/scale.py is
IndexHNSWFlat over the same rows. This builds both libraries' graphs on a prefix of scale.py's learned data
(`bench/work/scale-learned/base-1000000.f32`, already the stored form) with several M and reports, per ef:
recall@10 of scale.py's report queries against the exact top 10 of the prefix, and self-recall (a catalog row
searched for by its own vector comes back among its first 10) — the measure vsearch's spot check uses.

hnswlib comes from Debian (`python3-hnswlib`, /usr/bin/python3), faiss from PyPI (`faiss-cpu`): run each library
in the interpreter that has it; the exact top 10 is cached beside the data.

    /usr/bin/python3 bench/learned_links.py --library hnswlib --rows 100000 --m 16,24,32
    python3 bench/learned_links.py --library faiss --rows 100000 --m 16
"""
import argparse
import json
import os
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
WORK = os.path.join(HERE, "work", "scale-learned")
DIMS = 512
K = 10
SELF_QUERIES = 500
EF_CONSTRUCTION = 128
EFS = (40, 128, 320, 640)


def data(rows):
    base = np.memmap(os.path.join(WORK, "base-1000000.f32"), dtype=np.float32, mode="r", shape=(1000000, DIMS))
    x = np.ascontiguousarray(base[:rows])
    queries = np.fromfile(os.path.join(WORK, "queries-report.f32"), np.float32).reshape(-1, DIMS)
    cache = os.path.join(WORK, f"links-truth-{rows}.npy")
    if os.path.exists(cache):
        truth = np.load(cache)
    else:
        truth = np.argsort(-(queries @ x.T), axis=1)[:, :K]
        np.save(cache, truth)
    own = np.sort(np.random.default_rng(7).choice(rows, SELF_QUERIES, replace=False))
    return x, queries, truth, own


def recall(found, truth):
    return float(np.mean([len(set(f[:K]) & set(t)) / K for f, t in zip(found, truth)]))


def self_recall(found, own):
    return float(np.mean([r in f[:K] for f, r in zip(found, own)]))


def run(library, x, queries, truth, own, m, threads):
    t0 = time.perf_counter()
    if library == "hnswlib":
        import hnswlib
        index = hnswlib.Index(space="ip", dim=DIMS)
        index.init_index(max_elements=len(x), M=m, ef_construction=EF_CONSTRUCTION, random_seed=100)
        index.add_items(x, np.arange(len(x)), num_threads=threads)

        def search(q, ef):
            index.set_ef(ef)
            return index.knn_query(q, k=K, num_threads=1)[0]
    else:
        import faiss
        faiss.omp_set_num_threads(threads)
        index = faiss.IndexHNSWFlat(DIMS, m)
        index.hnsw.efConstruction = EF_CONSTRUCTION
        index.add(x)
        faiss.omp_set_num_threads(1)

        def search(q, ef):
            index.hnsw.efSearch = ef
            return index.search(q, K)[1]
    build = time.perf_counter() - t0
    rows = []
    for ef in EFS:
        rows.append({"ef": ef, "recall@10": recall(search(queries, ef), truth),
                     "self@10": self_recall(search(x[own], ef), own)})
    return {"library": library, "M": m, "efConstruction": EF_CONSTRUCTION, "rows": len(x), "threads": threads,
            "build_s": round(build, 1), "by_ef": rows}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--library", choices=("hnswlib", "faiss"), required=True)
    ap.add_argument("--rows", type=int, default=100000)
    ap.add_argument("--m", default="16", help="comma list of M")
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    x, queries, truth, own = data(args.rows)
    for m in (int(v) for v in args.m.split(",")):
        result = run(args.library, x, queries, truth, own, m, args.threads)
        print(json.dumps(result), flush=True)
        for row in result["by_ef"]:
            print(f"  {args.library} M {m} ef {row['ef']}: recall@10 {row['recall@10']:.3f}, self@10 {row['self@10']:.3f}",
                  flush=True)


if __name__ == "__main__":
    main()
