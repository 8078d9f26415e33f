#!/usr/bin/env python3
"""`vsearch serve` under hostile load: does a well-behaved client keep its latency while
another client abuses the server, and does the server stay up and within memory?

Client A (source 127.0.0.1) is a steady open-loop rate: 8 /search?im_name=<random>&limit=10
and 2 /uploadsearch (a 20-60 KB corpus JPEG, limit=10) per second, each request on its own
thread and its own connection (Connection: close), 30 s client timeout. Client B (source
127.0.0.2, a separate process so its threads do not slow A's) runs only in the "hostile"
phase, all at once:
  - pixel bombs: a ~0.5 MB PNG declaring 13000x13000 RGB (507 MB decoded), 8 uploads at a time;
  - oversized: 20 MiB multipart bodies (Content-Length declared) to /uploadsearch, 2 at a time;
  - slow drip: 40 uploads declaring Content-Length 500000 that send 10 body bytes/s, and 10 that
    send their request headers 1 byte/s; each runs until the server cuts it or the phase ends;
  - bursts: 500 parallel requests (half /search, half small uploads) at the start and the middle.
Every B request ends as an HTTP status, "cut:closed"/"cut:reset" (the server closed the
connection before a status line; a reset may hide an answer the server sent), "client-timeout",
"connect-error", or "open-at-end" (a drip the server never cut). Requests in flight when a phase
ends may finish or time out (35 s grace). Latency percentiles count every request, failed ones
at the time they failed.

Targets: A's p99 in the hostile phase <= 3x its p99 alone; server peak RSS (max of VmHWM and
VmRSS sampled every 0.2 s) < 1 GB; GET /health answers 200 after each phase.

The server runs pinned with `taskset -c --server-cpus` (default 0), this script pins itself to
--client-cpus (default 1). Files go to bench/work/load/ only (catalog.sqlite if no --catalog,
the bomb PNG, serve.log, metrics.txt when /metrics exists, serve/ with a copy of the catalog that
is served, so its query-cache/ of uploads lands there too); --json/--markdown write where told.

    python3 bench/load.py --seconds 20
    python3 bench/load.py --binary /tmp/old/.build/release/vsearch --catalog /tmp/old/catalog.sqlite \\
        --serve-args "--max-concurrent 32" --json bench/work/load/r.json --markdown bench/work/load/r.md
"""
import argparse
import collections
import datetime
import json
import multiprocessing
import os
import random
import re
import resource
import select
import shlex
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WORK = os.path.join(HERE, "work", "load")
sys.path.insert(0, HERE)
from benchlib import git_rev, machine, pct, proc_cpu_seconds, stop_server  # noqa: E402

TIMEOUT = 30.0        # every client request
GRACE = TIMEOUT + 5   # after a phase, requests in flight may finish (or time out) for this long
A_SOURCE, B_SOURCE = "127.0.0.1", "127.0.0.2"
BOMB_SIDE = 13000
B_KINDS = ("bomb", "oversized", "slow-drip-body", "slow-drip-headers", "burst-search", "burst-upload")
SECTION = "## vsearch serve under hostile load (`load.py`)"


# ---------------------------------------------------------------- HTTP on raw sockets

def row(kind, outcome, ms, at=None, retry_after=None):
    """One request's record: outcome an HTTP status or a failure name; `at` seconds into the phase."""
    return {"kind": kind, "outcome": outcome, "ms": ms, "at": at, "retry_after": retry_after}


def multipart(image, filename="image.jpeg", ctype="image/jpeg", limit=10):
    """(body, headers) of an SDK-style /uploadsearch form: a `limit` text part and an `image` file part."""
    b = "visearch.boundary.%08x%08x" % (random.getrandbits(32), random.getrandbits(32))
    head = (f'--{b}\r\nContent-Disposition: form-data; name="limit"\r\n\r\n{limit}\r\n'
            f'--{b}\r\nContent-Disposition: form-data; name="image"; filename="{filename}"\r\n'
            f"Content-Type: {ctype}\r\n\r\n").encode()
    return head + image + f"\r\n--{b}--\r\n".encode(), {"Content-Type": f"multipart/form-data; boundary={b}"}


def request_head(method, target, port, headers=None, length=None):
    lines = [f"{method} {target} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Connection: close"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def read_response(s, deadline):
    """(outcome, headers, body) of the response on `s`: outcome an int status or a failure name."""
    buf = b""
    try:
        while b"\r\n\r\n" not in buf:
            s.settimeout(max(0.01, deadline - time.monotonic()))
            data = s.recv(65536)
            if not data:
                return status_of(buf, "cut:closed"), {}, b""
            buf += data
        head, body = buf.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
        want = int(headers.get("content-length", -1))
        while want < 0 or len(body) < want:  # Connection: close, so without a length: read to the end
            s.settimeout(max(0.01, deadline - time.monotonic()))
            data = s.recv(65536)
            if not data:
                break
            body += data
        return int(lines[0].split()[1]), headers, body
    except socket.timeout:
        return status_of(buf, "client-timeout"), {}, b""
    except (ConnectionResetError, BrokenPipeError):
        return status_of(buf, "cut:reset"), {}, b""
    except (OSError, ValueError, IndexError):
        return status_of(buf, "cut:garbled"), {}, b""


def status_of(buf, otherwise):
    m = re.match(rb"HTTP/1\.[01] (\d{3})", buf)
    return int(m.group(1)) if m else otherwise


def readable(socks, timeout):
    """The sockets of `socks` with data (or a close) waiting, after up to `timeout` s (poll: no FD_SETSIZE limit)."""
    poller = select.poll()
    by_fd = {s.fileno(): s for s in socks}
    for fd in by_fd:
        poller.register(fd, select.POLLIN)
    return [by_fd[fd] for fd, _ in poller.poll(max(0, timeout) * 1000)]


def connect(port, source, timeout):
    return socket.create_connection(("127.0.0.1", port), timeout=timeout, source_address=(source, 0))


def send_body(s, body, deadline):
    """Sends `body` as the socket takes it, stopping early if the server answers (say 413) or closes."""
    view, off, poller = memoryview(body), 0, select.poll()
    poller.register(s, select.POLLIN | select.POLLOUT)
    while off < len(body):
        events = poller.poll(max(0.0, deadline - time.monotonic()) * 1000)
        if not events:
            raise socket.timeout
        if events[0][1] & (select.POLLIN | select.POLLHUP | select.POLLERR):
            return
        s.settimeout(max(0.01, deadline - time.monotonic()))
        off += s.send(view[off:off + 65536])


def http(port, method, target, body=None, headers=None, source=A_SOURCE, timeout=TIMEOUT):
    """One request on a new connection. Returns dict(outcome, ms, retry_after, body). The body is
    sent only while the server reads it: once it answers (say 413) or closes, its answer is read."""
    t0 = time.monotonic()
    deadline = t0 + timeout
    retry_after, data = None, b""
    try:
        with connect(port, source, timeout) as s:
            s.sendall(request_head(method, target, port, headers, None if body is None else len(body)))
            try:
                send_body(s, body or b"", deadline)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the server stopped reading: its answer may be waiting
            outcome, headers_in, data = read_response(s, deadline)
            retry_after = headers_in.get("retry-after")
    except socket.timeout:
        outcome = "client-timeout"
    except (ConnectionResetError, BrokenPipeError):
        outcome = "cut:reset"
    except OSError:
        outcome = "connect-error"
    if outcome == 200 and data[:1] == b"{":
        try:
            if json.loads(data).get("status") != "OK":
                outcome = "200-not-OK"
        except ValueError:
            outcome = "200-bad-json"
    return {"outcome": outcome, "ms": (time.monotonic() - t0) * 1000, "retry_after": retry_after, "body": data}


# ---------------------------------------------------------------- client A (main process)

def run_a(port, seconds, names, uploads):
    """Open loop: 8 searches/s + 2 uploads/s, each on its own thread. Returns (results, max start lag ms)."""
    plan = sorted([(i / 8, "search") for i in range(int(seconds * 8))] +
                  [(i / 2 + 0.06, "upload") for i in range(int(seconds * 2))])
    slots, lag, threads = [None] * len(plan), [0.0], []
    start = time.monotonic()

    def one(i, kind, due):
        lag[0] = max(lag[0], (time.monotonic() - due) * 1000)
        if kind == "search":
            r = http(port, "GET", f"/search?im_name={random.choice(names)}&limit=10")
        else:
            r = http(port, "POST", "/uploadsearch", *random.choice(uploads))
        slots[i] = row(kind, r["outcome"], r["ms"], due - start, r["retry_after"])

    for i, (offset, kind) in enumerate(plan):
        time.sleep(max(0.0, start + offset - time.monotonic()))
        t = threading.Thread(target=one, args=(i, kind, start + offset), daemon=True)
        t.start()
        threads.append((t, time.monotonic()))
    for t, _ in threads:
        t.join(max(0.0, start + seconds + GRACE - time.monotonic()))
    now = time.monotonic()
    results = [slot or row(kind, "unfinished", (now - began) * 1000, offset)
               for slot, (offset, kind), (_, began) in zip(list(slots), plan, threads)]
    return results, lag[0]


# ---------------------------------------------------------------- client B (its own process)

def run_b(port, seconds, names, small, bomb_path, queue):
    """The hostile client; puts its list of outcomes on `queue`.

    B runs niced (10): on a real network it has its own machine, here it shares the client CPU with A, and a burst
    of 500 B threads would otherwise delay A's own client threads (issue 27's first runs saw A's start lag reach
    24 ms at a burst) — A's latency is to measure the server, not the client's scheduler."""
    os.nice(10)
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    threading.stack_size(512 * 1024)
    results, lock = [], threading.Lock()
    start = time.monotonic()
    end = start + seconds

    def record(kind, r, began):
        with lock:
            results.append(row(kind, r["outcome"], r["ms"], began - start, r["retry_after"]))

    with open(bomb_path, "rb") as f:
        bomb = multipart(f.read(), "image.png", "image/png")
    oversized = multipart(b"\0" * (20 << 20))

    def loop(kind, payload):
        while time.monotonic() < end:
            began = time.monotonic()
            record(kind, http(port, "POST", "/uploadsearch", *payload, source=B_SOURCE), began)

    def burst():
        for at in (0, seconds / 2):
            time.sleep(max(0.0, start + at - time.monotonic()))
            go = threading.Event()

            def one(i):
                go.wait()
                began = time.monotonic()
                if i % 2:
                    record("burst-upload", http(port, "POST", "/uploadsearch", *random.choice(small), source=B_SOURCE), began)
                else:
                    record("burst-search", http(port, "GET", f"/search?im_name={random.choice(names)}&limit=10",
                                                source=B_SOURCE), began)
            for i in range(500):
                threading.Thread(target=one, args=(i,), daemon=True).start()
            go.set()

    workers = [threading.Thread(target=loop, args=("bomb", bomb), name="bomb", daemon=True) for _ in range(8)]
    workers += [threading.Thread(target=loop, args=("oversized", oversized), name="oversized", daemon=True) for _ in range(2)]
    workers += [threading.Thread(target=drip, args=(port, start, end, results, lock), daemon=True),
                threading.Thread(target=burst, daemon=True)]
    for w in workers:
        w.start()

    def settled():
        with lock:
            return sum(r["kind"].startswith("burst") for r in results) >= 1000 and not any(w.is_alive() for w in workers)
    time.sleep(max(0.0, end - time.monotonic()))
    while time.monotonic() < end + GRACE and not settled():  # let requests in flight finish
        time.sleep(0.2)
    with lock:
        out = list(results)
    unfinished = [w.name for w in workers[:10] if w.is_alive()]
    for kind in ("burst-search", "burst-upload"):
        unfinished += [kind] * (500 - sum(r["kind"] == kind for r in out))  # 2 bursts x 250 each
    queue.put(out + [row(kind, "unfinished", None) for kind in unfinished])


def drip(port, start, end, results, lock, body_drips=40, header_drips=10):
    """Slow-drip uploads on one thread: each second sends 10 body bytes (or 1 header byte) on every
    live connection, watching them in between for the server's answer or close."""
    body, headers = multipart(b"\0" * 500000)
    body = body[:500000]  # the declared length is never reached anyway
    head = request_head("POST", "/uploadsearch", port, headers, 500000)
    conns = []

    def finish(c, outcome):
        c["s"].close()
        conns.remove(c)
        with lock:
            results.append(row(c["kind"], outcome, (time.monotonic() - c["t0"]) * 1000, c["t0"] - start))

    for i in range(body_drips + header_drips):
        kind = "slow-drip-body" if i < body_drips else "slow-drip-headers"
        began = time.monotonic()
        if began >= end:
            break
        try:
            s = connect(port, B_SOURCE, timeout=min(5.0, end - began))
            s.settimeout(5)
            if kind == "slow-drip-body":
                s.sendall(head)
            conns.append({"s": s, "kind": kind, "t0": began, "sent": 0,
                          "data": body if kind == "slow-drip-body" else head + body})
        except OSError as e:
            with lock:
                results.append(row(kind, "client-timeout" if isinstance(e, socket.timeout) else "connect-error",
                                   (time.monotonic() - began) * 1000, began - start))
    next_tick = time.monotonic()
    while conns and time.monotonic() < end:
        ready = readable([c["s"] for c in conns], min(next_tick, end) - time.monotonic())
        for c in [c for c in conns if c["s"] in ready]:
            finish(c, read_response(c["s"], time.monotonic() + 1)[0])
        if time.monotonic() >= next_tick and time.monotonic() < end:
            next_tick += 1
            for c in list(conns):
                step = 1 if c["kind"] == "slow-drip-headers" and c["sent"] < len(head) else 10
                try:
                    c["s"].sendall(c["data"][c["sent"]:c["sent"] + step])
                    c["sent"] += step
                except OSError:
                    finish(c, read_response(c["s"], time.monotonic() + 1)[0])
    for c in list(conns):
        finish(c, "open-at-end")


# ---------------------------------------------------------------- the server

def proc_status(pid, key):
    with open(f"/proc/{pid}/status") as f:
        return next(int(line.split()[1]) * 1024 for line in f if line.startswith(key + ":"))


class Monitor(threading.Thread):
    """Samples the server every 0.2 s: `peak` is the max VmRSS since `reset()`; `hwm` and `cpu` the
    latest VmHWM and CPU seconds (kept when the process dies)."""
    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.peak, self.hwm, self.cpu = pid, 0, 0, 0.0

    def reset(self):
        self.peak = 0

    def sample(self):
        try:
            rss, self.hwm = proc_status(self.pid, "VmRSS"), proc_status(self.pid, "VmHWM")
            self.peak, self.cpu = max(self.peak, rss), proc_cpu_seconds(self.pid)
            return True
        except (OSError, StopIteration, IndexError):
            return False  # gone (or a zombie)

    def run(self):
        while self.sample():
            time.sleep(0.2)


def start_server(binary, catalog, cpus, extra):
    """`vsearch serve --port 0` pinned to `cpus`; its port read from the "listening on" line of its stderr."""
    log_path = os.path.join(WORK, "serve.log")
    command = ["taskset", "-c", cpus, binary, "serve", "--catalog", catalog, "--port", "0", "--no-web-page", *extra]
    env = dict(os.environ, TMPDIR=os.path.join(WORK, "serve", "tmp"), XDG_CACHE_HOME=os.path.join(WORK, "serve", "cache"))
    with open(log_path, "w") as log:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log, env=env, start_new_session=True)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        m = re.search(r"listening on http://\S+?:(\d+)", open(log_path, errors="replace").read())
        if m:
            return process, int(m.group(1))
        if process.poll() is not None:
            break
        time.sleep(0.05)
    stop_server(process)
    raise SystemExit(f"`{shlex.join(command)}` did not start:\n{open(log_path, errors='replace').read()[-2000:]}")


# ---------------------------------------------------------------- inputs

def bomb_png():
    """A PNG declaring BOMB_SIDE x BOMB_SIDE 8-bit RGB, all black: ~0.5 MB, 507 MB decoded. Cached."""
    path = os.path.join(WORK, f"bomb-{BOMB_SIDE}.png")
    if not os.path.exists(path):
        row = b"\0" * (1 + 3 * BOMB_SIDE)  # filter byte 0 + the row's pixels
        z = zlib.compressobj(9)
        idat = [z.compress(row * 100) for _ in range(BOMB_SIDE // 100)] + [z.compress(row * (BOMB_SIDE % 100)), z.flush()]

        def chunk(tag, data):
            return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))
        png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", BOMB_SIDE, BOMB_SIDE, 8, 2, 0, 0, 0))
               + chunk(b"IDAT", b"".join(idat)) + chunk(b"IEND", b""))
        with open(path + ".tmp", "wb") as f:
            f.write(png)
        os.replace(path + ".tmp", path)
    return path


def small_uploads():
    folder = os.path.join(ROOT, "corpus", "images")
    files = sorted(f for f in os.listdir(folder) if f.endswith(".jpg") and 20_000 <= os.path.getsize(os.path.join(folder, f)) <= 60_000)
    return [multipart(open(os.path.join(folder, f), "rb").read()) for f in files]


def copy_catalog(catalog):
    """A fresh copy in bench/work/load/serve/: the server keeps uploaded images in query-cache/ beside its catalog."""
    serve_dir = os.path.join(WORK, "serve")
    shutil.rmtree(serve_dir, ignore_errors=True)
    os.makedirs(os.path.join(serve_dir, "tmp"))
    if not os.path.isfile(catalog):
        return catalog  # a database URL
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(catalog + suffix):
            shutil.copy(catalog + suffix, os.path.join(serve_dir, "catalog.sqlite" + suffix))
    return os.path.join(serve_dir, "catalog.sqlite")


def binary_rev(binary):
    """The commit `binary` was built from, as far as its repository says."""
    if binary.startswith(ROOT + os.sep):
        return git_rev()
    done = subprocess.run(["git", "-C", os.path.dirname(binary), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return done.stdout.strip() + " (HEAD of its repository)" if done.returncode == 0 else "unknown"


def catalog_names(port):
    r = http(port, "GET", "/catalog?limit=1000", timeout=10)
    if r["outcome"] == 200:
        names = [item["im_name"] for item in json.loads(r["body"]).get("result", [])]
        if names:
            return names
    return [os.path.splitext(f)[0] for f in os.listdir(os.path.join(ROOT, "corpus", "images"))]


def cpu_list(text):
    """taskset's list form: "1", "1,3", "0-3"."""
    spans = [part.partition("-") for part in text.split(",")]
    return {cpu for lo, _, hi in spans for cpu in range(int(lo), int(hi or lo) + 1)}


# ---------------------------------------------------------------- report

def summarize(results):
    ms = [r["ms"] for r in results]
    return {"count": len(results), "p50_ms": pct(ms, 50, "floor"), "p90_ms": pct(ms, 90, "floor"), "p99_ms": pct(ms, 99, "floor"), "max_ms": pct(ms, 100, "floor"),
            "error_rate": sum(r["outcome"] != 200 for r in results) / len(results) if results else None,
            "outcomes": dict(collections.Counter(str(r["outcome"]) for r in results)),
            "retry_after": dict(collections.Counter(r["retry_after"] for r in results if r["retry_after"]))}


def f(v, spec=".0f"):
    return "–" if v is None else format(v, spec)


def markdown(report):
    a = report["phases"]
    lines = [SECTION, "",
             f"Run {report['date']}, binary `{report['binary']}` built from {report['commit']}, {report['machine']}.",
             f"{report['seconds']} s per phase; server pinned to CPU {report['server_cpus']}, clients to {report['client_cpus']}; "
             f"serve args `{report['serve_args'] or '(none)'}`. A = 8 /search + 2 /uploadsearch per second from 127.0.0.1, "
             "new connection each; B (127.0.0.2) = pixel bombs x8, 20 MiB bodies x2, 50 slow drips, 2 bursts of 500.", "",
             "| phase | A requests | p50 ms | p90 ms | p99 ms | max ms | errors | A outcomes | server CPU s | peak RSS MiB | /health |",
             "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---|"]
    for name, ph in a.items():
        s = ph["a"]
        lines.append(f"| {name} | {s['count']} | {f(s['p50_ms'])} | {f(s['p90_ms'])} | {f(s['p99_ms'])} | {f(s['max_ms'])} | "
                     f"{f(100 * s['error_rate'], '.1f')} % | {', '.join(f'{k}: {v}' for k, v in sorted(s['outcomes'].items()))} | "
                     f"{ph['server_cpu_s']:.1f} | {ph['peak_rss_mib']:.0f} | {ph['health']} |")
    ratio = report["p99_ratio"]
    lines += ["", f"A's p99 hostile / alone: **{f(ratio, '.1f')}x** (target <= 3x); server peak RSS **{report['peak_rss_mib']:.0f} MiB** "
              f"(target < 1024 MiB); server alive at the end: **{'yes' if report['server_alive'] else 'NO'}**."]
    if "hostile" in a:
        b = a["hostile"]["b"]
        keys = sorted({k for s in b.values() for k in s["outcomes"]}, key=lambda k: (not k.isdigit(), k))
        lines += ["", "| B kind | requests | " + " | ".join(keys) + " | p50 ms | max ms | Retry-After |",
                  "|---|---:|" + "---:|" * len(keys) + "---:|---:|---|"]
        for kind, s in b.items():
            lines.append(f"| {kind} | {s['count']} | " + " | ".join(str(s["outcomes"].get(k, "")) for k in keys)
                         + f" | {f(s['p50_ms'])} | {f(s['max_ms'])} | {', '.join(f'{k}s x{v}' for k, v in s['retry_after'].items())} |")
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- main

def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build", "release", "vsearch"))
    parser.add_argument("--catalog", help="default: bench/work/load/catalog.sqlite, indexed from corpus/ when missing")
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--server-cpus", default="0")
    parser.add_argument("--client-cpus", default="1")
    parser.add_argument("--serve-args", default="", help='extra `vsearch serve` flags, e.g. "--max-concurrent 32"')
    parser.add_argument("--phases", default="alone,hostile")
    parser.add_argument("--json", metavar="OUT")
    parser.add_argument("--markdown", metavar="OUT")
    args = parser.parse_args()
    phases = [p for p in ("alone", "hostile") if p in args.phases.split(",")]  # always alone first
    if not phases or not set(args.phases.split(",")) <= {"alone", "hostile"}:
        parser.error("--phases takes alone and/or hostile")
    os.makedirs(WORK, exist_ok=True)
    binary = os.path.abspath(args.binary)
    catalog = args.catalog or os.path.join(WORK, "catalog.sqlite")
    if not args.catalog and not os.path.exists(catalog):
        subprocess.run([binary, "index", os.path.join(ROOT, "corpus", "images"), "--metadata",
                        os.path.join(ROOT, "corpus", "catalog.csv"), "--catalog", catalog, "--quiet"], check=True)
    served = copy_catalog(catalog)
    os.sched_setaffinity(0, cpu_list(args.client_cpus))
    bomb = bomb_png()
    uploads = small_uploads()

    server, port = start_server(binary, served, args.server_cpus, shlex.split(args.serve_args))
    print(f"vsearch serve pid {server.pid} on port {port} (CPU {args.server_cpus}); clients on CPU {args.client_cpus}", flush=True)
    report = {"date": datetime.date.today().isoformat(), "binary": binary, "catalog": os.path.abspath(catalog),
              "commit": binary_rev(binary), "machine": machine(), "seconds": args.seconds, "server_cpus": args.server_cpus,
              "client_cpus": args.client_cpus, "serve_args": args.serve_args, "phases": {}}
    try:
        names = catalog_names(port)
        for _ in range(5):  # warm-up, not counted
            http(port, "GET", f"/search?im_name={random.choice(names)}&limit=10")
            http(port, "POST", "/uploadsearch", *random.choice(uploads))
        monitor = Monitor(server.pid)
        monitor.start()
        for phase in phases:
            print(f"phase {phase}: {args.seconds:g} s ...", flush=True)
            monitor.sample()
            monitor.reset()
            cpu0 = monitor.cpu
            if phase == "hostile":  # B in its own process, so that its threads do not delay A's
                ctx = multiprocessing.get_context("spawn")
                queue = ctx.Queue()
                b_process = ctx.Process(target=run_b, args=(port, args.seconds, names, uploads, bomb, queue), daemon=True)
                b_process.start()
            a_results, lag = run_a(port, args.seconds, names, uploads)
            entry = {"a": dict(summarize(a_results), max_client_start_lag_ms=lag,
                                by_kind={k: summarize([r for r in a_results if r["kind"] == k]) for k in ("search", "upload")})}
            # A's timeline: when in the phase each request started (B's bursts start at 0 and at half the phase).
            entry["a_requests"] = [[r["kind"], r["outcome"], round(r["ms"], 2), round(r["at"], 2)] for r in a_results]
            slowest = sorted(a_results, key=lambda r: -r["ms"])[:5]
            print("  A's slowest: " + ", ".join(f"{r['kind']} {r['ms']:.0f} ms at {r['at']:.1f} s" for r in slowest), flush=True)
            if phase == "hostile":
                try:
                    b_results = queue.get(timeout=GRACE + 20)
                except Exception:
                    b_results = []
                    print("  client B did not report", flush=True)
                b_process.join(5)
                if b_process.is_alive():
                    b_process.kill()
                entry["b"] = {kind: summarize([r for r in b_results if r["kind"] == kind]) for kind in B_KINDS}
                entry["b_requests"] = [[r["kind"], r["outcome"], r["ms"] and round(r["ms"]), r["at"] and round(r["at"], 2)]
                                       for r in b_results]
            monitor.sample()
            alive = server.poll() is None
            entry.update(server_alive=alive, server_cpu_s=monitor.cpu - cpu0, vmhwm_mib=monitor.hwm / 2**20,
                         peak_rss_mib=max(monitor.peak, monitor.hwm) / 2**20)
            for attempt in range(3):  # the server may still be busy with what B left behind
                health = http(port, "GET", "/health", timeout=10)
                if health["outcome"] == 200 or server.poll() is not None:
                    break
            entry.update(health=health["outcome"], health_ms=health["ms"], health_attempts=attempt + 1)
            report["phases"][phase] = entry
            s = entry["a"]
            print(f"  A: {s['count']} requests, p50 {f(s['p50_ms'])} ms, p99 {f(s['p99_ms'])} ms, errors {f(100 * s['error_rate'], '.1f')} %, "
                  f"client start lag max {lag:.0f} ms; server alive {alive}, peak RSS {entry['peak_rss_mib']:.0f} MiB, "
                  f"/health {entry['health']} ({attempt + 1} attempt(s))", flush=True)
            if not alive:
                break
        if server.poll() is None:
            m = http(port, "GET", "/metrics", timeout=10)
            if m["outcome"] == 200:
                with open(os.path.join(WORK, "metrics.txt"), "wb") as out:
                    out.write(m["body"])
                print("  /metrics saved to bench/work/load/metrics.txt")
    finally:
        report["server_alive"] = server.poll() is None
        stop_server(server)
    ph = report["phases"]
    p99 = {k: v["a"]["p99_ms"] for k, v in ph.items()}
    report["p99_ratio"] = p99["hostile"] / p99["alone"] if p99.get("hostile") and p99.get("alone") else None
    report["peak_rss_mib"] = max((v["peak_rss_mib"] for v in ph.values()), default=0)
    text = markdown(report)
    print("\n" + text)
    if args.markdown:
        with open(args.markdown, "w") as out:
            out.write(text)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(report, out, indent=1, default=str)


if __name__ == "__main__":
    main()
