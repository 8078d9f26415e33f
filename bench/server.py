#!/usr/bin/env python3
"""`vsearch serve` under load: requests per second and p50/p99 latency of
/search (find similar by im_name) and /uploadsearch (a 512 px JPEG upload, as
the SDKs send it) on the corpus catalog, with wrk on loopback at 1 and 16
concurrent connections; and the server's peak memory (VmHWM).

The server is pinned to core 0 and wrk to core 1 (`taskset`), so the load
generator does not steal the server's CPU; each cell is the median of
--reps runs of --duration seconds.

    python3 bench/server.py             # build (swift build -c release), run (~2 min)
    python3 bench/server.py --record    # ... and write the section into bench/RESULTS.md
    python3 bench/server.py --no-build --reps 1 --duration 5

No peer runs beside it: the alternative a user has is the hosted ViSearch
service, which is not reachable from this machine.
"""
import argparse
import datetime
import os
import re
import shutil
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import git_rev, machine, sh, start_server, to_ms, write_section  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WORK = os.path.join(HERE, "work", "server")
VSEARCH = os.path.join(ROOT, ".build", "release", "vsearch")
SECTION = "## vsearch serve: throughput, latency and memory (`server.py`)"
UPLOAD_IMAGE = os.path.join(ROOT, "corpus", "images", "astronaut.jpg")  # 512x512 JPEG: what SDKs upload


def ensure_wrk():
    if shutil.which("wrk"):
        return
    sh(["apt-get", "install", "-y", "wrk"], stdout=subprocess.DEVNULL)



def wrk(url, connections, duration, script=None):
    threads = min(connections, 2)
    args = ["taskset", "-c", "1", "wrk", f"-t{threads}", f"-c{connections}", f"-d{duration}s", "--latency"]
    if script:
        args += ["-s", script]
    out = subprocess.run(args + [url], check=True, capture_output=True, text=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    p50 = to_ms(re.search(r"^\s+50%\s+(\S+)", out, re.M).group(1))
    p99 = to_ms(re.search(r"^\s+99%\s+(\S+)", out, re.M).group(1))
    errors = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if errors:
        raise SystemExit(f"wrk saw {errors.group(1)} non-2xx responses for {url}:\n{out}")
    return rps, p50, p99


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-build", action="store_true")
    parser.add_argument("--vsearch", help="use this vsearch binary (no build), e.g. .build-perf/release/vsearch")
    parser.add_argument("--record", action="store_true")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--duration", type=int, default=8)
    args = parser.parse_args()
    global VSEARCH
    if args.vsearch:
        VSEARCH, args.no_build = os.path.abspath(args.vsearch), True

    ensure_wrk()
    if not args.no_build:
        sh(["swift", "build", "-c", "release", "--product", "vsearch"], cwd=ROOT, stdout=subprocess.DEVNULL)
    os.makedirs(WORK, exist_ok=True)
    catalog = os.path.join(WORK, "catalog.sqlite")
    sh([VSEARCH, "index", os.path.join(ROOT, "corpus", "images"), "--metadata", os.path.join(ROOT, "corpus", "catalog.csv"),
        "--catalog", catalog], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    boundary = "visearch.boundary.0123456789abcdef"
    with open(UPLOAD_IMAGE, "rb") as f:
        image = f.read()
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"image\"; filename=\"image.jpeg\"\r\n"
            f"Content-Type: image/jpeg\r\n\r\n").encode() + image + f"\r\n--{boundary}--\r\n".encode()
    body_path = os.path.join(WORK, "upload.body")
    with open(body_path, "wb") as f:
        f.write(body)
    script = os.path.join(WORK, "upload.lua")
    with open(script, "w") as f:
        f.write(f'local f = io.open("{body_path}", "rb")\nwrk.method = "POST"\nwrk.body = f:read("*all")\nf:close()\n'
                f'wrk.headers["Content-Type"] = "multipart/form-data; boundary={boundary}"\n')

    server, base = start_server(VSEARCH, catalog, 0, os.path.join(WORK, "serve.log"))
    try:
        cases = [
            ("search", f"{base}/search?im_name=chelsea_cat&limit=10&score=true&fl=brand&fl=price", None),
            ("search + fq + facets", f"{base}/search?im_name=chelsea_cat&limit=10&score=true&fq=category:food&facets=brand&facets_show_count=true", None),
            ("uploadsearch (512 px JPEG)", f"{base}/uploadsearch?limit=10&score=true", script),
        ]
        rows = []
        for name, url, lua in cases:
            for connections in (1, 16):
                wrk(url, connections, 2, lua)  # warm-up
                runs = [wrk(url, connections, args.duration, lua) for _ in range(args.reps)]
                rps = statistics.median(r[0] for r in runs)
                p50 = statistics.median(r[1] for r in runs)
                p99 = statistics.median(r[2] for r in runs)
                rows.append((name, connections, rps, p50, p99))
                print(f"{name:30s} c={connections:2d}  {rps:9.0f} req/s  p50 {p50:7.2f} ms  p99 {p99:7.2f} ms", flush=True)
        with open(f"/proc/{server.pid}/status") as f:
            hwm = next(int(line.split()[1]) for line in f if line.startswith("VmHWM")) / 1024
        print(f"server peak memory (VmHWM): {hwm:.0f} MiB")
    finally:
        server.terminate()
        server.wait(timeout=30)

    report = [SECTION, "",
              f"Run {datetime.date.today().isoformat()}, commit {git_rev()}, {machine()}.",
              f"Server pinned to core 0, wrk to core 1; each cell the median of {args.reps} runs of {args.duration} s "
              "after a 2 s warm-up; corpus catalog (102 images); every response 200.", "",
              "| request | connections | req/s | p50 ms | p99 ms |", "|---|---:|---:|---:|---:|"]
    report += [f"| {n} | {c} | {r:.0f} | {p50:.2f} | {p99:.2f} |" for n, c, r, p50, p99 in rows]
    report += ["", f"Server peak memory (VmHWM) after all runs: **{hwm:.0f} MiB**.", "",
               "No peer: the alternative is the hosted ViSearch service, not reachable from here."]
    write_section(args.record, SECTION, "\n".join(report) + "\n")


if __name__ == "__main__":
    main()
