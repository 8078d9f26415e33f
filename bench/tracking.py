#!/usr/bin/env python3
"""Tracking throughput and memory, in one run:

1. durable enqueue: events per second through `Tracker.track` (validate,
   fill identity, commit to the SQLite queue before returning), one event per
   call, against the peer a user would write by hand — Python's sqlite3 with
   the same WAL + synchronous=NORMAL settings, one INSERT + COMMIT of the
   event's JSON per event (no validation, no identity);
2. delivery: events per second from a queued backlog to `vsearch serve`'s
   collector on loopback (batches of 50, POST /v3/events, deduplicating
   inserts), deliverer pinned to core 0 and server to core 1;
3. a 100,000-event backlog: the queue file's size, and the peak RSS of the
   process that queued it and of the process that delivered it.

CPU-bound parts run pinned to one core (`taskset -c 0`); medians of --reps runs.

    python3 bench/tracking.py            # build, run (~1-2 min)
    python3 bench/tracking.py --record   # ... and replace its section of bench/RESULTS.md
"""
import argparse
import datetime
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import git_rev, machine, start_server, write_section  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WORK = os.path.join(HERE, "work", "tracking")
VSEARCH = os.path.join(ROOT, ".build", "release", "vsearch")
SECTION = "## Tracking: durable enqueue, delivery and backlog memory (`tracking.py`)"


def fresh(name):
    path = os.path.join(WORK, name)
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    return path


def vsearch_json(*args, core="0"):
    out = subprocess.run(["taskset", "-c", core, VSEARCH, *args], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def python_peer(count):
    """A hand-written durable queue: WAL, synchronous=NORMAL, one commit per event."""
    path = fresh("peer.sqlite")
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("CREATE TABLE events (seq INTEGER PRIMARY KEY AUTOINCREMENT, event_id TEXT UNIQUE, payload TEXT, enqueued_at INTEGER)")
    start, cpu = time.perf_counter(), time.process_time()
    for i in range(count):
        event = {"action": "product_click", "queryId": f"q{i % 97}", "pid": f"p{i % 101}", "imgUrl": f"https://cdn.example/p{i % 101}.jpg",
                 "pos": 1 + i % 10, "s1": f"load {i}", "eventID": str(uuid.uuid4()), "timestamp": int(time.time() * 1000)}
        db.execute("BEGIN")
        db.execute("INSERT INTO events (event_id, payload, enqueued_at) VALUES (?, ?, ?)", (event["eventID"], json.dumps(event), event["timestamp"]))
        db.execute("COMMIT")
    return time.perf_counter() - start, time.process_time() - cpu



def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-build", action="store_true")
    parser.add_argument("--vsearch", help="use this vsearch binary (no build), e.g. .build-perf/release/vsearch")
    parser.add_argument("--record", action="store_true")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--events", type=int, default=20000)
    args = parser.parse_args()
    global VSEARCH
    if args.vsearch:
        VSEARCH, args.no_build = os.path.abspath(args.vsearch), True
    if not args.no_build:
        subprocess.run(["swift", "build", "-c", "release", "--product", "vsearch"], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    os.makedirs(WORK, exist_ok=True)
    n = args.events

    # 1. Durable enqueue.
    ours, peer = [], []
    for _ in range(args.reps):
        result = vsearch_json("debug", "track-load", "--count", str(n), "--queue", fresh("enqueue.sqlite"))
        ours.append((result["seconds"], result["cpu_seconds"]))
        if os.fork() == 0:  # the peer pinned to core 0 too
            os.sched_setaffinity(0, {0})
            wall, cpu = python_peer(n)
            with open(os.path.join(WORK, "peer.json"), "w") as f:
                json.dump([wall, cpu], f)
            os._exit(0)
        os.wait()
        with open(os.path.join(WORK, "peer.json")) as f:
            peer.append(tuple(json.load(f)))
    our_rate = n / statistics.median(w for w, _ in ours)
    peer_rate = n / statistics.median(w for w, _ in peer)
    our_cpu = statistics.median(c for _, c in ours) / n * 1e6
    peer_cpu = statistics.median(c for _, c in peer) / n * 1e6
    print(f"enqueue: vsearch {our_rate:,.0f} events/s ({our_cpu:.0f} µs CPU each); python sqlite3 {peer_rate:,.0f} events/s ({peer_cpu:.0f} µs CPU each)")

    # 2. Delivery to the local collector.
    catalog = fresh("catalog.sqlite")
    subprocess.run([VSEARCH, "index", os.path.join(ROOT, "corpus", "images"), "--catalog", catalog], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    server, base = start_server(VSEARCH, catalog, 1, os.path.join(WORK, "serve.log"))
    deliveries = []
    try:
        for _ in range(args.reps):
            queue = fresh("deliver.sqlite")
            vsearch_json("debug", "track-load", "--count", str(n), "--queue", queue)
            result = vsearch_json("debug", "track-deliver", "--queue", queue, "--endpoint", base)
            assert result["sent"] == n and result["remaining"] == 0, result
            deliveries.append(result["seconds"])
        deliver_rate = n / statistics.median(deliveries)
        print(f"delivery: {deliver_rate:,.0f} events/s to the collector")

        # 3. A 100k backlog.
        backlog = fresh("backlog.sqlite")
        queued = vsearch_json("debug", "track-load", "--count", "100000", "--queue", backlog)
        size = sum(os.path.getsize(backlog + s) for s in ("", "-wal") if os.path.exists(backlog + s)) / 2**20
        delivered = vsearch_json("debug", "track-deliver", "--queue", backlog, "--endpoint", base)
        assert delivered["sent"] == 100000, delivered
        print(f"100k backlog: queue file {size:.1f} MiB; RSS queueing {queued['max_rss_kib'] / 1024:.0f} MiB, "
              f"delivering {delivered['max_rss_kib'] / 1024:.0f} MiB ({delivered['seconds']:.1f} s)")
    finally:
        server.terminate()
        server.wait(timeout=30)

    report = [SECTION, "",
              f"Run {datetime.date.today().isoformat()}, commit {git_rev()}, {machine()}.",
              f"{n:,} events per run, medians of {args.reps} runs; enqueue pinned to core 0; delivery: deliverer core 0, `vsearch serve` core 1.", "",
              "| measure | vsearch | peer: Python sqlite3 by hand | ratio |", "|---|---:|---:|---:|",
              f"| durable enqueue, events/s (one commit per event) | {our_rate:,.0f} | {peer_rate:,.0f} | {our_rate / peer_rate:.2f}x |",
              f"| CPU per enqueued event | {our_cpu:.0f} µs | {peer_cpu:.0f} µs | |",
              f"| delivery to the local collector, events/s (batches of 50) | {deliver_rate:,.0f} | — | |", "",
              f"100,000-event backlog: queue file **{size:.1f} MiB**; peak RSS of the process that queued it "
              f"**{queued['max_rss_kib'] / 1024:.0f} MiB**, of the one that delivered it **{delivered['max_rss_kib'] / 1024:.0f} MiB** "
              f"({delivered['seconds']:.1f} s). The backlog lives on disk; delivery holds one batch in memory.", "",
              "The peer skips what vsearch does per event (validation, uid/session bookkeeping in the same transaction, the dedup "
              "key) — it is the floor a hand-written queue starts from."]
    write_section(args.record, SECTION, "\n".join(report) + "\n")


if __name__ == "__main__":
    main()
