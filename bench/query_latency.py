#!/usr/bin/env python3
"""Upload-query latency of one or more vsearch binaries, side by side in one run.

    python3 bench/query_latency.py --vsearch NEW [--vsearch OLD ...] [--label new --label old] [--queries 60] [--reps 3]

Each binary indexes the held-out catalog of bench/quality.py (bench/work/quality/held-out-images, made by
`python3 bench/quality.py` first) into its own catalog, then answers the same seeded sample of held-out queries
(every transform alike) as `vsearch search --image Q --catalog DB --limit 10 --json`, one process per query,
pinned to one core (`taskset -c 1`), the binaries interleaved query by query. Reported per binary: median and p90
of the process's CPU time (user + sys, `os.wait4`) and wall time, over queries × reps; and the ratio to the first
binary. Process start-up and catalog loading are inside every figure, as for a command-line user.
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import git_rev, machine, write_section  # noqa: E402  (bench/benchlib.py)

SECTION = "## VisualSearch: upload-query latency (`query_latency.py`)"
HERE = os.path.dirname(os.path.abspath(__file__))
WORK = os.path.join(HERE, "work", "quality")


def timed(cmd):
    """CPU (user+sys) and wall seconds of one child process."""
    start = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - start
    if status != 0:
        raise RuntimeError(f"{' '.join(cmd)} -> status {status}")
    return usage.ru_utime + usage.ru_stime, wall


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--vsearch", action="append", required=True, help="a binary (repeat; the first is the reference)")
    ap.add_argument("--label", action="append", help="a name per binary")
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--record", action="store_true", help="replace this report's section of bench/RESULTS.md")
    a = ap.parse_args()
    labels = a.label or [f"bin{i}" for i in range(len(a.vsearch))]
    manifest = os.path.join(WORK, "queries-held-out.json")
    if not os.path.exists(manifest):
        sys.exit("no held-out queries: run python3 bench/quality.py first")
    with open(manifest) as f:
        queries = json.load(f)["queries"]
    sample = random.Random(7).sample(queries, a.queries)
    images = os.path.join(WORK, "held-out-images")
    dbs = []
    for label, binary in zip(labels, a.vsearch):
        db = os.path.join(WORK, f"latency-{label}.db")
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(db + suffix):
                os.remove(db + suffix)
        subprocess.run([binary, "index", images, "--catalog", db, "--quiet"], check=True, capture_output=True)
        dbs.append(db)
    cpu = {label: [] for label in labels}
    wall = {label: [] for label in labels}
    for _ in range(a.reps):
        for q in sample:
            for label, binary, db in zip(labels, a.vsearch, dbs):
                cmd = ["taskset", "-c", "1", binary, "search", "--image", q["path"], "--catalog", db, "--limit", "10", "--json"]
                if q.get("box"):
                    cmd += ["--box", ",".join(str(v) for v in q["box"])]
                c, w = timed(cmd)
                cpu[label].append(c)
                wall[label].append(w)
    ref = labels[0]
    p90 = lambda xs: sorted(xs)[int(0.9 * (len(xs) - 1))]  # noqa: E731
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines = [SECTION, "", f"Run {when} by `python3 bench/query_latency.py{' --record' if a.record else ''}`, commit {git_rev()}.", "",
             f"- Machine: {machine()}",
             f"- {a.queries} held-out queries of bench/quality.py (seeded sample, every transform) × {a.reps} reps, "
             "`vsearch search --image Q [--box …] --catalog DB --limit 10 --json`, one process per query (start-up, catalog "
             "load, decode, features, scan), `taskset -c 1`, the binaries interleaved query by query; CPU = user + sys "
             f"of the process (`os.wait4`). Catalog: the {len(os.listdir(images))} held-out images, indexed by each binary.",
             "", "| binary | path | CPU ms p50 | CPU ms p90 | wall ms p50 | wall ms p90 | CPU p50 / " + ref + " |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for label, binary in zip(labels, a.vsearch):
        lines.append(f"| {label} | `{os.path.relpath(binary)}` | {1000 * statistics.median(cpu[label]):.1f} | "
                     f"{1000 * p90(cpu[label]):.1f} | {1000 * statistics.median(wall[label]):.1f} | {1000 * p90(wall[label]):.1f} | "
                     f"{statistics.median(cpu[label]) / statistics.median(cpu[ref]):.2f}× |")
    write_section(a.record, SECTION, "\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
