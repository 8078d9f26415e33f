#!/usr/bin/env python3
"""`vsearch serve` with keys, under the attacks of issue 37: what does each cost a keyed client
(the victim) and the server, and how does the server answer the attacker?

A server is started on a fresh copy of a corpus catalog (indexed from corpus/ when missing) with
two keys: an app key (`access_key=`, the mobile SDKs' key) and an access key:secret (Basic, the
data API's), its production client limits (not bench/benchlib.py's unlimited ones), pinned to
--server-cpus. The victim, from 127.0.0.100, sends an open-loop --victim-rate of
`GET /search?im_name=<random>&limit=10&access_key=<app key>`, each on its own connection; its
latency (p50, p90, p99, max; failed requests counted at the time they failed) and errors (any
answer but 200 with status OK) are measured alone first, then during each attack, and printed
beside the baseline as a ratio. Each attack runs in a process of its own (so its threads do not
slow the victim's), bounded in count and in time (--seconds), on loopback only:

  1 slots     64 keyless connections from 127.0.1.1-64 sending `POST /search` heads with
              Content-Length: 100 and no body, 16 more from 127.0.2.1-16 on /uploadsearch; each
              reconnects 0.2 s after the server answers or closes it
  2a, 2b      multipart bodies of 16 MB (keyless, /uploadsearch) whose boundary is 200 dashes,
              filled with near-matches of it; 2 (2a) and 4 (2b) connections from 127.0.3.1
  3 remove    POST /remove with the app key (two images): the status, and the catalog's count
              before and after (it must be refused and the count unchanged)
  4 collector 2 keyless connections from 127.0.4.1 posting batches of 380 events (~2.6 KB each)
              to /v3/events: events stored a second, catalog bytes added, then GET /v3/stats latency
  5 inserts   /insert (key:secret) of a 92-byte animated WebP declaring a 13000x13000 canvas and
              of a 169 MP PNG (--image-root): their insert status, the server's peak RSS
  6 recs      GET /recommendations?limit=1000 with the app key, 8 connections from 127.0.5.1
  7 discover  POST /discoversearch with 1,200 `point=` (query string) and a small JPEG, app key,
              2 connections from 127.0.6.1
  9 idle      20 addresses (127.0.0.2-21) x 30 idle connections, each reopened 1 s after the server
              closes it

Per phase: the attacker's outcomes (HTTP statuses; "closed"/"reset" when the server closed the
connection without an answer; "client-timeout"), the server's CPU seconds (from /proc/PID/stat)
and peak RSS (VmRSS sampled every 0.2 s), and whether /health answers after it. Issue 37's target:
under attacks 1, 2, 6 and 7 the victim's p99 <= 3x its p99 alone, with 0 errors.

Files go to bench/work/abuse/ only (catalog.sqlite when no --catalog, serve/ with the served copy,
images/ with the insert inputs, serve.log). It never writes bench/RESULTS.md; --json/--markdown write
where told.

    python3 bench/abuse.py --quick                 # ~1 min: 3 s a phase
    python3 bench/abuse.py --seconds 10 --json bench/work/abuse/r.json
    python3 bench/abuse.py --attacks 1,9 --binary /tmp/old/vsearch
"""
import argparse
import base64
import collections
import datetime
import json
import multiprocessing
import os
import random
import select
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WORK = os.path.join(HERE, "work", "abuse")
sys.path.insert(0, HERE)
from benchlib import git_rev, machine, pct, start_server, stop_server  # noqa: E402
from load import WORK as LOAD_WORK, Monitor, bomb_png, cpu_list, http, multipart  # noqa: E402

APP_KEY = "abuse-app-key"
ACCESS, SECRET = "abuse-access", "abuse-secret"
VICTIM = "127.0.0.100"
MAX_OVERRUN = 60  # seconds the victim goes on measuring after --seconds while an attack's requests are still running
ATTACKS = ("1", "2a", "2b", "3", "4", "5", "6", "7", "9")
TARGETED = ("1", "2a", "2b", "6", "7")  # issue 37: p99 <= 3x alone, 0 errors
TITLES = {"1": "keyless heads holding slots (64 /search + 16 /uploadsearch addresses)",
          "2a": "16 MB multipart, 200-dash boundary, 2 connections", "2b": "the same, 4 connections",
          "3": "app key on /remove", "4": "collector flood, 2 connections x 380-event batches",
          "5": "inserts: animated WebP 13000^2 canvas, 169 MP PNG", "6": "/recommendations?limit=1000, 8 connections",
          "7": "/discoversearch with 1,200 points, 2 connections", "9": "20 addresses x 30 idle connections"}


def basic():
    return "Basic " + base64.b64encode(f"{ACCESS}:{SECRET}".encode()).decode()


# ---------------------------------------------------------------- the victim

def run_victim(port, seconds, rate, names, busy=lambda: False):
    """Open loop from VICTIM: `rate` keyed searches a second, each on its own thread and connection, for
    `seconds` and then as long as `busy()` (the attack still running), at most MAX_OVERRUN s more."""
    results, threads, start = [], [], time.monotonic()

    def one(i):
        r = http(port, "GET", f"/search?im_name={random.choice(names)}&limit=10&access_key={APP_KEY}", source=VICTIM)
        results[i] = (r["outcome"], r["ms"])

    i = 0
    while True:
        due = start + i / rate
        if due - start >= seconds and (not busy() or due - start >= seconds + MAX_OVERRUN):
            break
        delay = due - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        results.append(None)
        t = threading.Thread(target=one, args=(i,), daemon=True)
        t.start()
        threads.append(t)
        i += 1
    for t in threads:
        t.join(40)
    return [r if r else ("client-stuck", 40000.0) for r in results]


def summarize(results):
    ms = [m for _, m in results]
    errors = sum(o != 200 for o, _ in results)
    return {"count": len(results), "p50_ms": pct(ms, 50, "floor"), "p90_ms": pct(ms, 90, "floor"), "p99_ms": pct(ms, 99, "floor"), "max_ms": pct(ms, 100, "floor"),
            "errors": errors, "outcomes": dict(collections.Counter(str(o) for o, _ in results))}


# ---------------------------------------------------------------- attack helpers (in the attack's process)

def hold_connections(port, plan, seconds, reconnect_after):
    """Keeps one connection open for each (source, head) of `plan` (head b"": idle) until `seconds` pass;
    one the server answers or closes is reopened `reconnect_after` s later. Returns counts."""
    deadline = time.monotonic() + seconds
    outcomes, held_s = collections.Counter(), []
    open_, due, poller = {}, [], select.poll()

    def open_one(i):
        source, head = plan[i]
        s = socket.socket()
        try:
            s.settimeout(5)
            s.bind((source, 0))
            s.connect(("127.0.0.1", port))
            if head:
                s.sendall(head)
            s.setblocking(False)
        except OSError:
            s.close()
            outcomes["connect-error"] += 1
            due.append((time.monotonic() + reconnect_after, i))
            return
        open_[s.fileno()] = (s, i, time.monotonic())
        poller.register(s.fileno(), select.POLLIN)

    for i in range(len(plan)):
        open_one(i)
    opened_all = len(open_)
    while time.monotonic() < deadline:
        for fd, _ in poller.poll(100):
            s, i, since = open_.pop(fd)
            poller.unregister(fd)
            try:
                data = s.recv(4096)
                outcome = int(data.split()[1]) if data.startswith(b"HTTP/1.") else ("closed" if not data else "garbled")
            except ConnectionResetError:
                outcome = "reset"
            except (OSError, ValueError, IndexError):
                outcome = "garbled"
            s.close()
            outcomes[str(outcome)] += 1
            held_s.append(time.monotonic() - since)
            due.append((time.monotonic() + reconnect_after, i))
        now = time.monotonic()
        for item in [d for d in due if d[0] <= now]:
            due.remove(item)
            open_one(item[1])
    still = len(open_)
    for s, _, _ in open_.values():
        s.close()
    return {"connections": len(plan), "open_after_connecting": opened_all, "open_at_end": still,
            "ended": dict(outcomes), "mean_held_s": round(sum(held_s) / len(held_s), 2) if held_s else None}


def loop_requests(count, seconds, request):
    """`count` threads each sending `request()` (an http() result) back to back until `seconds` pass."""
    deadline = time.monotonic() + seconds
    outcomes, ms, lock = collections.Counter(), [], threading.Lock()

    def worker(k):
        while time.monotonic() < deadline:
            r = request(k)
            with lock:
                outcomes[str(r["outcome"])] += 1
                ms.append(r["ms"])
            if r["outcome"] in ("connect-error",):
                time.sleep(0.2)

    threads = [threading.Thread(target=worker, args=(k,), daemon=True) for k in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(seconds + 40)
    return {"requests": sum(outcomes.values()), "outcomes": dict(outcomes), "p50_ms": pct(ms, 50, "floor"), "max_ms": pct(ms, 100, "floor")}


def image_count(port):
    r = http(port, "GET", f"/health?access_key={APP_KEY}", source="127.0.9.1", timeout=10)
    try:
        return json.loads(r["body"])["images"]
    except (ValueError, KeyError, TypeError):
        return None


def catalog_bytes(catalog):
    return sum(os.path.getsize(catalog + s) for s in ("", "-wal") if os.path.exists(catalog + s))


def animated_webp(side):
    """A 1x1 lossless animated WebP (one ANMF frame) whose VP8X canvas declares side x side: ~90 bytes."""
    data = bytearray(base64.b64decode(
        "UklGRlIAAABXRUJQVlA4WAoAAAASAAAAAAAAAAAAQU5JTQYAAAD/////AABBTk1GJgAAAAAAAAAAAAAAAAAAAGQAAABWUDhMDQAAAC8AAAAQBxAREYiI/gcA"))
    assert data[12:16] == b"VP8X"
    data[24:27] = struct.pack("<I", side - 1)[:3]
    data[27:30] = struct.pack("<I", side - 1)[:3]
    return bytes(data)


def boundary_body(size):
    """(body, headers): a multipart body of `size` bytes whose boundary is 200 dashes, its one part filled with
    near-matches of the delimiter (CRLF and 201 dashes, then not a dash)."""
    boundary = "-" * 200
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"image\"; filename=\"x.jpg\"\r\n"
            "Content-Type: image/jpeg\r\n\r\n").encode()
    tail = f"\r\n--{boundary}--\r\n".encode()
    unit = b"\r\n" + b"-" * 201 + b"x"
    filler = unit * ((size - len(head) - len(tail)) // len(unit))
    body = head + filler + b"." * (size - len(head) - len(tail) - len(filler)) + tail
    return body, {"Content-Type": f"multipart/form-data; boundary={boundary}"}


def event(tag, i, now_ms):
    """A valid product_click of ~2.5 KB on the wire (380 of them: a batch just under the collector's 1 MiB), unique by `tag` and `i`."""
    return {"action": "product_click", "queryId": "q" * 250, "pid": f"p{i}-" + "p" * 240, "pos": "1",
            "imUrl": "https://cdn.example/" + "i" * 300, "productUrl": "https://shop.example/" + "u" * 300,
            "json": json.dumps({"k": "v" * 490}), "sid": "s" * 250, "uid": "u" * 64, "brand": "b" * 64,
            "s1": "1" * 64, "s2": "2" * 64, "s3": "3" * 64, "s4": "4" * 64, "s5": "5" * 64,
            "eid": f"{tag}-{i}", "ts": str(now_ms)}


# ---------------------------------------------------------------- the attacks

def attack(name, port, seconds, setup, queue):
    """Runs attack `name` for `seconds` (in its own process) and puts its report on `queue`."""
    try:
        queue.put(ATTACK_FUNCTIONS[name](port, seconds, setup))
    except Exception as error:  # reported, not raised: the victim's figures are still worth having
        queue.put({"error": repr(error)})


def attack_slots(port, seconds, setup):
    search = [(f"127.0.1.{i}", (f"POST /search HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                                 "Content-Length: 100\r\n\r\n").encode()) for i in range(1, 65)]
    upload = [(f"127.0.2.{i}", (f"POST /uploadsearch HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=b\r\n"
                                 "Content-Length: 100\r\n\r\n").encode()) for i in range(1, 17)]
    return hold_connections(port, search + upload, seconds, reconnect_after=0.2)


def attack_boundary(connections):
    def run(port, seconds, setup):
        body, headers = boundary_body(16_000_000)
        return loop_requests(connections, seconds,
                             lambda k: http(port, "POST", "/uploadsearch", body, headers, source="127.0.3.1", timeout=30))
    return run


def attack_remove(port, seconds, setup):
    before = image_count(port)
    names = setup["removable"]
    form = "&".join(f"im_name={n}" for n in names).encode()
    r = http(port, "POST", f"/remove?access_key={APP_KEY}", form, {"Content-Type": "application/x-www-form-urlencoded"},
             source="127.0.4.9", timeout=10)
    time.sleep(0.5)
    after = image_count(port)
    return {"status": r["outcome"], "answer": r["body"][:200].decode("utf-8", "replace"), "images_before": before, "images_after": after,
            "removed": (before - after) if before is not None and after is not None else None}


def attack_collector(port, seconds, setup):
    catalog = setup["catalog"]
    bytes0 = catalog_bytes(catalog)
    stored, lock = collections.Counter(), threading.Lock()

    def post(k):
        now_ms = int(time.time() * 1000)
        tag = f"{os.getpid()}-{k}-{time.monotonic_ns()}"
        body = json.dumps({"v": "1", "sdk": "abuse", "events": [event(tag, i, now_ms) for i in range(380)]}).encode()
        r = http(port, "POST", "/v3/events?code=abuse", body, {"Content-Type": "application/json"}, source="127.0.4.1", timeout=30)
        if r["outcome"] == 200:
            try:
                codes = [e.get("code") for e in json.loads(r["body"]).get("result", [])]
                with lock:
                    stored["stored"] += sum(c == 0 for c in codes)
                    stored["refused"] += sum(c != 0 for c in codes)
            except ValueError:
                pass
        return r

    t0 = time.monotonic()
    report = loop_requests(2, seconds, post)
    elapsed = time.monotonic() - t0
    added = catalog_bytes(catalog) - bytes0
    stats = http(port, "GET", f"/v3/stats?since=all&access_key={APP_KEY}", source="127.0.4.2", timeout=60)
    report.update(events_stored=stored["stored"], events_refused_in_batch=stored["refused"],
                  events_stored_per_s=round(stored["stored"] / elapsed), catalog_mb_added=round(added / 1e6, 1),
                  stats_status=stats["outcome"], stats_ms=round(stats["ms"]))
    return report


def attack_inserts(port, seconds, setup):
    images = setup["images"]
    items = [("abuse_anim_webp", os.path.join(images, "anim-13000.webp")), ("abuse_png_169mp", os.path.join(images, "big-13000.png"))]
    report, deadline = {}, time.monotonic() + max(seconds, 20)
    for name, path in items:
        form = f"im_name[0]={name}&im_url[0]=file://{path}".encode()
        r = http(port, "POST", "/insert", form, {"Content-Type": "application/x-www-form-urlencoded", "Authorization": basic()},
                 source="127.0.7.1", timeout=30)
        entry = {"status": r["outcome"]}
        try:
            trans = json.loads(r["body"]).get("trans_id")
        except ValueError:
            trans = None
        while trans and time.monotonic() < deadline:
            s = http(port, "GET", f"/insert/status/{trans}", headers={"Authorization": basic()}, source="127.0.7.1", timeout=30)
            try:
                result = json.loads(s["body"])["result"][0]
            except (ValueError, KeyError, IndexError, TypeError):
                entry["insert_status"] = f"{s['outcome']}"
                break
            if result.get("processed_percent", 0) >= 100:
                entry["insert_status"] = {k: result.get(k) for k in ("success_count", "fail_count")}
                entry["error"] = json.dumps(result.get("fail_list", []))[:200]
                break
            time.sleep(0.25)
        else:
            entry.setdefault("insert_status", "not finished" if trans else None)
        report[name] = entry
    return report


def attack_recommendations(port, seconds, setup):
    names = setup["names"]
    return loop_requests(8, seconds, lambda k: http(port, "GET", f"/recommendations?im_name={random.choice(names)}&limit=1000&access_key={APP_KEY}",
                                                    source="127.0.5.1", timeout=30))


def attack_discover(port, seconds, setup):
    body, headers = multipart(setup["jpeg"])
    points = "&".join(f"point={10 + i % 200},{10 + i // 200}" for i in range(1200))
    return loop_requests(2, seconds, lambda k: http(port, "POST", f"/discoversearch?access_key={APP_KEY}&{points}", body, headers,
                                                    source="127.0.6.1", timeout=30))


def attack_idle(port, seconds, setup):
    plan = [(f"127.0.0.{a}", b"") for a in range(2, 22) for _ in range(30)]
    return hold_connections(port, plan, seconds, reconnect_after=1.0)


ATTACK_FUNCTIONS = {"1": attack_slots, "2a": attack_boundary(2), "2b": attack_boundary(4), "3": attack_remove, "4": attack_collector,
                    "5": attack_inserts, "6": attack_recommendations, "7": attack_discover, "9": attack_idle}


# ---------------------------------------------------------------- main

def prepare_inputs():
    images = os.path.join(WORK, "images")
    os.makedirs(images, exist_ok=True)
    with open(os.path.join(images, "anim-13000.webp"), "wb") as out:
        out.write(animated_webp(13000))
    big = os.path.join(images, "big-13000.png")
    if not os.path.exists(big):
        os.makedirs(LOAD_WORK, exist_ok=True)
        shutil.copy(bomb_png(), big)  # load.py's 13000x13000 RGB PNG (169 MP), cached in bench/work/load/
    folder = os.path.join(ROOT, "corpus", "images")
    small = sorted(f for f in os.listdir(folder) if f.endswith(".jpg") and 20_000 <= os.path.getsize(os.path.join(folder, f)) <= 60_000)
    return images, open(os.path.join(folder, small[0]), "rb").read()


def fresh_catalog(catalog):
    serve = os.path.join(WORK, "serve")
    shutil.rmtree(serve, ignore_errors=True)
    os.makedirs(serve)
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(catalog + suffix):
            shutil.copy(catalog + suffix, os.path.join(serve, "catalog.sqlite" + suffix))
    return os.path.join(serve, "catalog.sqlite")


def health(port):
    for _ in range(3):
        r = http(port, "GET", "/health", source="127.0.9.9", timeout=10)
        if r["outcome"] == 200:
            break
        time.sleep(1)
    return r["outcome"], round(r["ms"])


def fmt(v, spec=".1f"):
    return "—" if v is None else format(v, spec)


def markdown(report):
    base = report["alone"]
    lines = [f"`vsearch serve` under issue 37's attacks (`abuse.py`), {report['date']}, {report['binary']} ({report['commit']}); {report['machine']}.",
             f"Server pinned to CPU {report['server_cpus']}, clients to {report['client_cpus']}; victim {report['victim_rate']:g} keyed "
             f"searches/s from {VICTIM}, {report['seconds']:g} s a phase.", "",
             "| phase | victim n (s) | p50 ms | p90 ms | p99 ms | max ms | errors | p99 / alone | server CPU s | peak RSS MiB | /health after |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]

    def row(label, v, phase):
        ratio = v["p99_ms"] / base["p99_ms"] if v["p99_ms"] and base["p99_ms"] else None
        lines.append(f"| {label} | {v['count']} ({phase['victim_s']:.0f}) | {fmt(v['p50_ms'])} | {fmt(v['p90_ms'])} | {fmt(v['p99_ms'])} | {fmt(v['max_ms'])} | "
                     f"{v['errors']} | {fmt(ratio, '.2f')}x | {fmt(phase['server_cpu_s'], '.2f')} | {fmt(phase['peak_rss_mib'], '.0f')} | "
                     f"{phase['health']} |")
    row("alone", base, report["alone_server"])
    for name, phase in report["attacks"].items():
        row(f"{name}: {TITLES[name]}", phase["victim"], phase)
    lines += ["", "Target (issue 37): under attacks 1, 2, 6, 7 the victim's p99 <= 3x alone with 0 errors."]
    for name in TARGETED:
        if name in report["attacks"]:
            v = report["attacks"][name]["victim"]
            ok = v["errors"] == 0 and v["p99_ms"] is not None and base["p99_ms"] and v["p99_ms"] <= 3 * base["p99_ms"]
            lines.append(f"- {name}: {'met' if ok else 'missed'} (p99 {fmt(v['p99_ms'])} ms vs {fmt(base['p99_ms'])} alone, {v['errors']} errors)")
    lines += ["", "What the attacker got:", ""]
    for name, phase in report["attacks"].items():
        lines.append(f"- {name}: `{json.dumps(phase['attacker'], sort_keys=True)}`")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--binary", default=os.path.join(ROOT, ".build", "release", "vsearch"), help="the vsearch to serve (default: the release build)")
    parser.add_argument("--catalog", help="a catalog to copy and serve (default: bench/work/abuse/catalog.sqlite, indexed from corpus/ when missing)")
    parser.add_argument("--seconds", type=float, default=10, help="length of the baseline and of each attack (default 10)")
    parser.add_argument("--quick", action="store_true", help="3 s phases (a check that everything runs, not figures)")
    parser.add_argument("--attacks", default=",".join(ATTACKS), help=f"which attacks, comma-separated (default all: {','.join(ATTACKS)})")
    parser.add_argument("--victim-rate", type=float, default=10, help="victim searches a second (default 10)")
    parser.add_argument("--server-cpus", default="0", help="taskset CPU list for the server (default 0)")
    parser.add_argument("--client-cpus", default="1", help="CPU list for this script and its attack processes (default 1)")
    parser.add_argument("--serve-args", default="", help="extra `vsearch serve` flags")
    parser.add_argument("--json", metavar="OUT", help="write the whole report as JSON")
    parser.add_argument("--markdown", metavar="OUT", help="write the table as Markdown")
    args = parser.parse_args()
    attacks = [a for a in args.attacks.split(",") if a]
    if not set(attacks) <= set(ATTACKS):
        parser.error(f"--attacks takes {','.join(ATTACKS)}")
    seconds = 3 if args.quick else args.seconds
    os.makedirs(WORK, exist_ok=True)
    binary = os.path.abspath(args.binary)
    catalog = args.catalog or os.path.join(WORK, "catalog.sqlite")
    if not args.catalog and not os.path.exists(catalog):
        subprocess.run([binary, "index", os.path.join(ROOT, "corpus", "images"), "--metadata", os.path.join(ROOT, "corpus", "catalog.csv"),
                        "--catalog", catalog, "--quiet"], check=True)
    served = fresh_catalog(catalog)
    images, jpeg = prepare_inputs()
    keys = os.path.join(WORK, "keys.txt")
    with open(keys, "w") as out:
        out.write(f"{APP_KEY}\n{ACCESS}:{SECRET}\n")
    os.chmod(keys, 0o600)
    os.sched_setaffinity(0, cpu_list(args.client_cpus))
    flags = ["--keys-file", keys, "--image-root", images, "--no-web-page", *args.serve_args.split()]
    server, url = start_server(binary, served, args.server_cpus, os.path.join(WORK, "serve.log"), flags, client_limits=True)
    port = int(url.rsplit(":", 1)[1])
    print(f"vsearch serve pid {server.pid} on port {port} (CPU {args.server_cpus}); attacks {','.join(attacks)}, {seconds:g} s each", flush=True)
    report = {"date": datetime.date.today().isoformat(), "binary": binary, "commit": git_rev() if binary.startswith(ROOT) else "unknown",
              "machine": machine(), "seconds": seconds, "server_cpus": args.server_cpus, "client_cpus": args.client_cpus,
              "victim_rate": args.victim_rate, "attacks": {}}
    monitor = Monitor(server.pid)
    monitor.start()
    try:
        r = http(port, "GET", f"/catalog?limit=1000&access_key={APP_KEY}", source="127.0.9.1", timeout=10)
        names = [item["im_name"] for item in json.loads(r["body"]).get("result", [])] if r["outcome"] == 200 else []
        names = names or [os.path.splitext(f)[0] for f in os.listdir(os.path.join(ROOT, "corpus", "images"))]
        # Two images only /remove names: the victim and the other attacks never ask for them.
        setup = {"names": names[2:], "removable": names[:2], "catalog": served, "images": images, "jpeg": jpeg}
        names = names[2:]
        run_victim(port, 1, args.victim_rate, names)  # warm-up

        def measure(label, name=None):
            monitor.sample()
            monitor.reset()
            cpu0 = monitor.cpu
            process, began = None, time.monotonic()
            if name:
                queue = multiprocessing.get_context("spawn").Queue()
                process = multiprocessing.get_context("spawn").Process(target=attack, args=(name, port, seconds, setup, queue), daemon=True)
                process.start()
            victim = summarize(run_victim(port, seconds, args.victim_rate, names, busy=lambda: process is not None and process.is_alive()))
            attacker = None
            if process:
                try:
                    attacker = queue.get(timeout=120)
                except Exception:
                    attacker = {"error": "no report"}
                process.join(5)
                if process.is_alive():
                    process.kill()
            monitor.sample()
            phase = {"victim": victim, "victim_s": time.monotonic() - began, "attacker": attacker, "server_cpu_s": monitor.cpu - cpu0,
                     "peak_rss_mib": max(monitor.peak, 0) / 2**20, "server_alive": server.poll() is None}
            phase["health"] = health(port)[0] if phase["server_alive"] else "server gone"
            print(f"  {label}: victim p50 {fmt(victim['p50_ms'])} p90 {fmt(victim['p90_ms'])} p99 {fmt(victim['p99_ms'])} ms, "
                  f"{victim['errors']} errors of {victim['count']} {victim['outcomes']}; server CPU {phase['server_cpu_s']:.2f} s, peak RSS "
                  f"{phase['peak_rss_mib']:.0f} MiB; /health {phase['health']}", flush=True)
            if attacker is not None:
                print(f"    attacker: {json.dumps(attacker, sort_keys=True)}", flush=True)
            time.sleep(1)  # what the attack left behind settles before the next phase
            return phase

        alone = measure("alone")
        report["alone"], report["alone_server"] = alone["victim"], alone
        for name in attacks:
            if server.poll() is not None:
                break
            print(f"attack {name}: {TITLES[name]}", flush=True)
            report["attacks"][name] = measure(name, name)
    finally:
        report["server_alive"] = server.poll() is None
        stop_server(server)
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
