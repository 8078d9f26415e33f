#!/usr/bin/env python3
"""Recommendations ("you may also like"): visual similarity alone against the
blend with the collector's events, on simulated shops whose ground truth is
known and is, by construction, not in the pictures' colours.

Catalog: the 102 images of corpus/images plus the 231 of
bench/work/quality/held-out-images (made by quality.py; corpus only when that
folder is missing), indexed into bench/work/recommend/catalog.sqlite.
Visual neighbours: `GET /search?im_name=X&limit=11` on a server of that
catalog, X itself dropped.

The simulation (one seeded log per seed; every parameter is in SIM; the
visual-neighbour steps follow the binary's own neighbours, so a seed gives the
same log for the same binary and catalog, not across changes of the features):

- every item gets a hidden taste group (12 groups, a seeded shuffle of the
  names: nothing to do with colour) and an appeal, Zipf-like within its group
  (1/rank, ranks shuffled), so some items are more popular;
- 10 % of the items are held back as new: no event before the split;
- 600 users, each with a taste group, 3-8 sessions each spread uniformly over
  60 days; a session starts at an item (of the user's group, by appeal, with
  prob. 0.8, else any item) and takes 2-6 further steps; the next item is an
  item of the user's group by appeal (0.6), one of the current item's 10
  visual neighbours (0.25: people click what looks alike) or any item (0.15),
  never the current item again;
- every step is a product_click (`queryId` q-SESSION-STEP: the listing or the
  recommendations shown on the previous item; `pos` 1-10), with prob. 0.25
  also an add_to_cart and with prob. 0.4 of those a transaction (with `pid`);
- sessions are sorted by start time: the events of the first 80 % (train) are
  POSTed to the server's collector (`/v3/events`, every answer code checked),
  the last 20 % are the test.

Test pairs: each consecutive pair (a -> b), b != a, of a test session. For each
configuration a fresh `vsearch serve` (pinned to core 1; its first request reads
every event) answers `/recommendations?im_name=a&limit=10` once per distinct a.
HR@10 = share of pairs whose b is in a's top 10; NDCG@10 = mean of
1/log2(rank + 2) (rank from 0) when present, else 0. Reported overall, for
"warm" pairs (a had events in train) and "cold start" pairs (a is a new item).

Two logs with different seeds (and so different groups, appeals and new
items): the weights are grid-searched on *tune* (HR@10 overall first, NDCG@10
to break ties) and only reported on *held-out*, beside visual only (0/0),
popularity only (0/1), and the binary's built-in defaults (no flags). Each log
has its own copy of the indexed catalog, since the events live in its file.

References beside them (explanations, not candidates): random (10/(N-1)),
co-engagement only (e 1, p 0), and an oracle ranking by the simulation's own
next-item odds for a user of a's hidden group; HR@10 split by how the
simulation drew b (group / visual neighbour / any), the share of a top 10 in
a's hidden group, and the median scores at ranks 1 and 10 (visual score, and
the co-engagement cosine as e 1 reports it), since the blend adds them as they are.

    python3 bench/recommend.py            # under a minute on 2 cores
    python3 bench/recommend.py --quick    # a smaller grid (6 configurations)
    python3 bench/recommend.py --record   # ... and replace its section of bench/RESULTS.md
"""
import argparse
import datetime
import http.client
import json
import math
import os
import random
import shutil
import signal
import subprocess
import sys
import time
import urllib.parse
from bisect import bisect_right
from itertools import accumulate

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
from benchlib import git_rev, machine, write_section  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WORK = os.path.join(HERE, "work", "recommend")
DEFAULT_VSEARCH = os.path.join(ROOT, ".build-bench", "release", "vsearch")
FOLDERS = [os.path.join(ROOT, "corpus", "images"), os.path.join(HERE, "work", "quality", "held-out-images")]
SECTION = "## Recommendations: visual vs blended with events (issue 12, part 2)"

SERVER_CORE = "1"
CLIENT_CORE = 0
LIMIT = 10

SIM = {
    "groups": 12,            # hidden taste groups
    "zipf": 1.0,             # appeal of the item ranked r in its group: 1 / r**zipf
    "new_share": 0.10,       # items held back (no event before the split)
    "users": 600,
    "sessions_per_user": (3, 8),
    "days": 60,
    "extra_steps": (2, 6),   # steps after the first item
    "start_in_group": 0.8,
    "p_group": 0.6,          # next item: the user's group, by appeal
    "p_neighbour": 0.25,     # ... one of the current item's visual neighbours
    "p_any": 0.15,           # ... any item
    "neighbours": 10,
    "p_cart": 0.25,          # a click is followed by add_to_cart
    "p_buy": 0.4,            # an add_to_cart by a transaction
    "train_share": 0.8,
}
EPOCH_MS = 1_788_220_800_000   # 2026-09-01 00:00 UTC: simulated day 0 (fixed, so a log is reproducible)

GRID_E = [0.1, 0.2, 0.3, 0.5, 0.7, 0.9]
GRID_P = [0.0, 0.05, 0.1, 0.2]
QUICK_E = [0.2, 0.5, 0.9]
QUICK_P = [0.0, 0.1]

SERVERS = []   # every vsearch serve started, killed on exit


# ---------------------------------------------------------------- processes and HTTP

def fail(message):
    sys.exit(f"recommend.py: {message}")


def stop(process):
    benchlib.stop_server(process, timeout=5)
    if process in SERVERS:
        SERVERS.remove(process)


def start_server(vsearch, catalog, log_path, flags=()):
    """`vsearch serve --no-web-page` with the blend `flags`, pinned to SERVER_CORE
    (benchlib.start_server); returns (process, client) once it answers."""
    try:
        process, url = benchlib.start_server(vsearch, catalog, SERVER_CORE, log_path, ["--no-web-page", *flags])
    except RuntimeError as error:
        fail(str(error))
    SERVERS.append(process)
    return process, Client(int(url.rsplit(":", 1)[1]))


class Client:
    """One keep-alive HTTP connection to a local server."""

    def __init__(self, port):
        self.port = port
        self.conn = None

    def request(self, method, path, params=None, body=None):
        url = path + ("?" + urllib.parse.urlencode(params) if params else "")
        headers = {"Content-Type": "application/json"} if body is not None else {}
        for attempt in range(2):
            try:
                if self.conn is None:
                    self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=120)
                self.conn.request(method, url, body=body, headers=headers)
                response = self.conn.getresponse()
                data = response.read()
                break
            except (http.client.HTTPException, OSError):
                if self.conn is not None:
                    self.conn.close()
                self.conn = None
                if attempt:
                    raise
        try:
            answer = json.loads(data)
        except ValueError:
            raise RuntimeError(f"{method} {url}: HTTP {response.status}, not JSON: {data[:300]!r}")
        if response.status != 200 or answer.get("status") != "OK":
            raise RuntimeError(f"{method} {url}: HTTP {response.status}: {data[:500].decode(errors='replace')}")
        return answer

    def names(self, path, params):
        return [entry["im_name"] for entry in self.request("GET", path, params).get("result", [])]

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None


def run(command, **kwargs):
    result = subprocess.run(command, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        fail(f"`{' '.join(command)}` failed (exit {result.returncode}):\n{result.stdout[-2000:]}{result.stderr[-2000:]}")
    return result.stdout


def remove_catalog(path):
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)


def copy_catalog(source, target):
    """A copy of a catalog no process has open (its -wal too, if one was left)."""
    remove_catalog(target)
    for suffix in ("", "-wal"):
        if os.path.exists(source + suffix):
            shutil.copyfile(source + suffix, target + suffix)


# ---------------------------------------------------------------- catalog

def image_names(folder):
    """The im_names `vsearch index` gives a folder's images: the path relative to the folder
    without its extension."""
    names = []
    for directory, _, files in os.walk(folder):
        for name in files:
            if os.path.splitext(name)[1].lower() in (".jpg", ".jpeg", ".png"):
                names.append(os.path.splitext(os.path.relpath(os.path.join(directory, name), folder))[0])
    return names


def make_catalog(vsearch, folders):
    """Indexes every folder into one catalog; returns its path, the seconds taken and the im_names."""
    catalog = os.path.join(WORK, "catalog.sqlite")
    remove_catalog(catalog)
    start = time.perf_counter()
    for folder in folders:
        run([vsearch, "index", folder, "--catalog", catalog, "--json", "--quiet"], cwd=ROOT)
    seconds = time.perf_counter() - start
    names = [name for folder in folders for name in image_names(folder)]
    if len(set(names)) != len(names):
        fail("two images of the folders have the same im_name")
    stats = json.loads(run([vsearch, "catalog", "stats", "--catalog", catalog, "--json"]))
    if stats.get("images") != len(names):
        fail(f"the catalog holds {stats.get('images')} items, the folders {len(names)} images")
    return catalog, seconds, sorted(names)


def visual_neighbours(client, names, count):
    neighbours = {}
    for name in names:
        found = [other for other in client.names("/search", {"im_name": name, "limit": count + 1}) if other != name]
        neighbours[name] = found[:count]
    return neighbours


# ---------------------------------------------------------------- simulation

class Picker:
    """Seeded draws from a weighted list."""

    def __init__(self, items, weights):
        self.items = list(items)
        self.cumulative = list(accumulate(weights))

    def draw(self, rng):
        return self.items[bisect_right(self.cumulative, rng.random() * self.cumulative[-1])]


def simulate(names, neighbours, seed):
    """A shop's event log: the train events to load, the test sessions, and the hidden truth."""
    rng = random.Random(seed)
    groups = SIM["groups"]
    order = list(names)
    rng.shuffle(order)
    group_of = {name: index % groups for index, name in enumerate(order)}
    members = [[name for name in order if group_of[name] == g] for g in range(groups)]
    appeal = {}
    for group in members:
        ranked = list(group)
        rng.shuffle(ranked)
        for rank, name in enumerate(ranked):
            appeal[name] = 1 / (rank + 1) ** SIM["zipf"]
    new = set(rng.sample(sorted(names), round(SIM["new_share"] * len(names))))
    old = [name for name in names if name not in new]

    # Pickers for the train period (no new item) and the test period (every item).
    in_group = {period: [Picker([n for n in group if period == "test" or n not in new],
                                [appeal[n] for n in group if period == "test" or n not in new])
                         for group in members] for period in ("train", "test")}
    anything = {"train": old, "test": list(names)}
    price = {name: round(rng.uniform(5, 200), 2) for name in names}

    user_group = [rng.randrange(groups) for _ in range(SIM["users"])]
    sessions = []
    for user in range(SIM["users"]):
        for _ in range(rng.randint(*SIM["sessions_per_user"])):
            sessions.append((rng.uniform(0, SIM["days"] * 86400.0), user))
    sessions.sort()
    train_count = int(SIM["train_share"] * len(sessions))

    train_events, test_sessions = [], []
    test_event_count = 0
    engaged_in_train = set()
    for index, (start, user) in enumerate(sessions):
        period = "train" if index < train_count else "test"
        group = user_group[user]
        pool = anything[period]

        def next_item(current):
            for _ in range(50):
                roll = rng.random()
                if roll < SIM["p_group"]:
                    how, item = "group", in_group[period][group].draw(rng)
                elif roll < SIM["p_group"] + SIM["p_neighbour"]:
                    allowed = [n for n in neighbours[current] if period == "test" or n not in new]
                    how, item = ("neighbour", rng.choice(allowed)) if allowed else ("any", rng.choice(pool))
                else:
                    how, item = "any", rng.choice(pool)
                if item != current:
                    return how, item
            return "any", rng.choice([n for n in pool if n != current])

        if rng.random() < SIM["start_in_group"]:
            path = [("start", in_group[period][group].draw(rng))]
        else:
            path = [("start", rng.choice(pool))]
        for _ in range(rng.randint(*SIM["extra_steps"])):
            path.append(next_item(path[-1][1]))

        sid, uid = f"s{seed}-{index}", f"u{seed}-{user}"
        t = EPOCH_MS + int(start * 1000)
        events = []
        for step, (_, item) in enumerate(path):
            t += rng.randint(5_000, 90_000)
            common = {"queryId": f"q-{sid}-{step}", "pid": item, "sid": sid, "uid": uid}
            shown = {"imUrl": f"https://shop.example/images/{item}.jpg", "pos": str(rng.randint(1, 10))}
            events.append({"action": "product_click", **common, **shown, "eid": f"e-{sid}-{step}-c", "ts": str(t)})
            if rng.random() < SIM["p_cart"]:
                events.append({"action": "add_to_cart", **common, **shown, "eid": f"e-{sid}-{step}-a", "ts": str(t + 15_000)})
                if rng.random() < SIM["p_buy"]:
                    events.append({"action": "transaction", **common, "transId": f"t-{sid}-{step}",
                                   "value": f"{price[item]:.2f}", "eid": f"e-{sid}-{step}-t", "ts": str(t + 60_000)})
        if period == "train":
            train_events.extend(events)
            engaged_in_train.update(item for _, item in path)
        else:
            test_sessions.append({"path": path, "group": group})
            test_event_count += len(events)

    pairs = []
    for session in test_sessions:
        path = session["path"]
        for (_, a), (how, b) in zip(path, path[1:]):
            if a != b:
                kind = "cold" if a in new else ("warm" if a in engaged_in_train else "other")
                pairs.append({"a": a, "b": b, "kind": kind, "how": how})
    actions = {}
    for event in train_events:
        actions[event["action"]] = actions.get(event["action"], 0) + 1
    return {"seed": seed, "group_of": group_of, "appeal": appeal, "new": new, "pairs": pairs,
            "train_events": train_events, "train_actions": actions, "test_events": test_event_count,
            "sessions": len(sessions), "train_sessions": train_count, "test_sessions": len(test_sessions),
            "engaged_in_train": engaged_in_train}


def load_events(client, events, batch=500):
    """POSTs the events to the collector; every answer code must be 0."""
    for start in range(0, len(events), batch):
        chunk = events[start:start + batch]
        answer = client.request("POST", "/v3/events", {"code": "bench"}, json.dumps({"events": chunk}).encode())
        results = answer.get("result", [])
        if len(results) != len(chunk):
            fail(f"the collector answered {len(results)} results for {len(chunk)} events")
        rejected = [(event, r) for event, r in zip(chunk, results) if r.get("code") != 0]
        if rejected:
            event, result = rejected[0]
            fail(f"the collector rejected {len(rejected)} of {len(chunk)} events, e.g. {event}: {result}")


# ---------------------------------------------------------------- evaluation

def score(pairs, ranked):
    """HR@10, NDCG@10 and pair count per kind of pair ("all", "warm", "cold")."""
    sums = {}
    for pair in pairs:
        top = ranked[pair["a"]][:LIMIT]
        hit = top.index(pair["b"]) if pair["b"] in top else None
        gain = 1 / math.log2(hit + 2) if hit is not None else 0.0
        for kind in ("all", pair["kind"], "how:" + pair["how"]):
            s = sums.setdefault(kind, [0, 0.0, 0])
            s[0] += hit is not None
            s[1] += gain
            s[2] += 1
    return {kind: (h / n, g / n, n) for kind, (h, g, n) in sums.items()}


def evaluate(vsearch, catalog, pairs, flags, label):
    """One configuration on a fresh server: every distinct a asked once (with scores)."""
    process, client = start_server(vsearch, catalog, os.path.join(WORK, f"serve-{label}.log"), flags)
    try:
        ranked, scores = {}, {}
        start = time.perf_counter()
        for a in sorted({pair["a"] for pair in pairs}):
            found = [entry for entry in client.request("GET", "/recommendations", {"im_name": a, "limit": LIMIT, "score": "true"})
                     .get("result", []) if entry["im_name"] != a]
            ranked[a] = [entry["im_name"] for entry in found]
            scores[a] = [float(entry.get("score", "nan")) for entry in found]
        seconds = time.perf_counter() - start
    finally:
        client.close()
        stop(process)
    return {"result": score(pairs, ranked), "asked": len(ranked), "seconds": seconds, "ranked": ranked, "scores": scores}


def in_group_share(ranked, items, group_of):
    """Mean share of an item's top 10 that is in its own hidden group (chance: about 1/groups)."""
    shares = [sum(group_of[x] == group_of[a] for x in ranked[a][:LIMIT]) / LIMIT for a in items if a in ranked]
    return sum(shares) / len(shares) if shares else float("nan")


def oracle(log, names, neighbours):
    """What an item-to-item recommender knowing the hidden groups and appeals would rank: by the
    simulation's own next-item odds given that the user's group is a's group."""
    groups = {}
    for name, g in log["group_of"].items():
        groups[g] = groups.get(g, 0) + log["appeal"][name]
    ranked = {}
    for a in {pair["a"] for pair in log["pairs"]}:
        g = log["group_of"][a]
        near = set(neighbours[a])
        odds = {c: (SIM["p_group"] * log["appeal"][c] / groups[g] if log["group_of"][c] == g else 0)
                + (SIM["p_neighbour"] / len(near) if c in near else 0) + SIM["p_any"] / len(names)
                for c in names if c != a}
        ranked[a] = sorted(odds, key=lambda c: (-odds[c], c))[:LIMIT]
    return score(log["pairs"], ranked)


# ---------------------------------------------------------------- report

def popularity_floor(log):
    """log(1 + total) of the 100th most engaged item over that of the first, as EngagementGraph scales
    popularity (click 1, add_to_cart 3, transaction 5)."""
    weight = {"product_click": 1, "add_to_cart": 3, "transaction": 5}
    totals = {}
    for event in log["train_events"]:
        totals[event["pid"]] = totals.get(event["pid"], 0) + weight[event["action"]]
    top = sorted(totals.values(), reverse=True)[:100]
    return math.log1p(top[-1]) / math.log1p(top[0])


def fmt(value):
    return f"{value:.3f}"


def row(label, result, extra=()):
    cells = [label, *extra]
    for kind in ("all", "warm", "cold"):
        hr, ndcg, _ = result.get(kind, (0.0, 0.0, 0))
        cells += [fmt(hr), fmt(ndcg)]
    return "| " + " | ".join(cells) + " |"


def flags_of(e, p):
    return ["--engagement-weight", f"{e:g}", "--popularity-weight", f"{p:g}"]


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vsearch", default=DEFAULT_VSEARCH, help=f"the binary (default {DEFAULT_VSEARCH}); never built here")
    parser.add_argument("--seed-tune", type=int, default=1201, help="seed of the tune log (default 1201)")
    parser.add_argument("--seed-held-out", type=int, default=1202, help="seed of the held-out log (default 1202)")
    parser.add_argument("--quick", action="store_true", help=f"a smaller grid: e in {QUICK_E}, p in {QUICK_P}")
    parser.add_argument("--record", action="store_true", help="replace the section of bench/RESULTS.md")
    args = parser.parse_args()
    if args.seed_tune == args.seed_held_out:
        fail("--seed-tune and --seed-held-out must differ")
    vsearch = os.path.abspath(args.vsearch)
    if not (os.path.isfile(vsearch) and os.access(vsearch, os.X_OK)):
        fail(f"no vsearch binary at {vsearch}: build it (swift build -c release --scratch-path .build-bench) or pass --vsearch PATH")
    if shutil.which("taskset") is None:
        fail("taskset (util-linux) is needed to pin the servers")
    os.makedirs(WORK, exist_ok=True)
    # One binary for the whole run, even if the build folder is rebuilt meanwhile.
    built = datetime.datetime.fromtimestamp(os.path.getmtime(vsearch), datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    copy = os.path.join(WORK, "vsearch")
    shutil.copy2(vsearch, copy)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        report = bench(args, copy, os.path.relpath(vsearch, ROOT), built)
    finally:
        for process in list(SERVERS):
            stop(process)
        os.remove(copy)
    write_section(args.record, SECTION, report)


def bench(args, vsearch, shown, built):
    began = time.perf_counter()
    date = subprocess.run(["date", "-u"], capture_output=True, text=True).stdout.strip()
    version = run([vsearch, "--version"]).strip()
    folders = [folder for folder in FOLDERS if os.path.isdir(folder)]
    missing = [folder for folder in FOLDERS if folder not in folders]

    print(f"indexing {', '.join(os.path.relpath(f, ROOT) for f in folders)} ...", flush=True)
    base, index_seconds, names = make_catalog(vsearch, folders)
    if len(os.sched_getaffinity(0)) > 1:
        os.sched_setaffinity(0, {CLIENT_CORE})   # the client on core 0, servers on core 1

    process, client = start_server(vsearch, base, os.path.join(WORK, "serve-visual.log"), flags_of(0, 0))
    try:
        neighbours = visual_neighbours(client, names, SIM["neighbours"])
    finally:
        client.close()
        stop(process)
    print(f"catalog: {len(names)} items, indexed in {index_seconds:.1f} s", flush=True)

    logs = {}
    for part, seed in (("tune", args.seed_tune), ("held-out", args.seed_held_out)):
        log = simulate(names, neighbours, seed)
        log["catalog"] = os.path.join(WORK, f"catalog-{part}.sqlite")
        copy_catalog(base, log["catalog"])
        process, client = start_server(vsearch, log["catalog"], os.path.join(WORK, f"serve-load-{part}.log"))
        try:
            start = time.perf_counter()
            load_events(client, log["train_events"])
            log["load_seconds"] = time.perf_counter() - start
        finally:
            client.close()
            stop(process)
        stored = json.loads(run([vsearch, "events", "stats", "--catalog", log["catalog"], "--json"])).get("total")
        if stored != len(log["train_events"]):
            fail(f"{part}: {len(log['train_events'])} events posted, the collector holds {stored}")
        log["stored"] = stored
        logs[part] = log
        counts = {kind: sum(p["kind"] == kind for p in log["pairs"]) for kind in ("warm", "cold", "other")}
        print(f"{part} (seed {seed}): {len(log['train_events'])} train events loaded in {log['load_seconds']:.1f} s, "
              f"{log['test_events']} test events, {len(log['pairs'])} test pairs {counts}", flush=True)

    # Tune: the grid, plus visual only as a reference.
    grid_e, grid_p = (QUICK_E, QUICK_P) if args.quick else (GRID_E, GRID_P)
    configs = [(e, p) for e in grid_e for p in grid_p if e + p <= 1 + 1e-9]
    tune = logs["tune"]
    tuned = []
    for e, p in [(0.0, 0.0)] + configs:
        run_ = evaluate(vsearch, tune["catalog"], tune["pairs"], flags_of(e, p), f"tune-e{e:g}-p{p:g}")
        result, asked, seconds = run_["result"], run_["asked"], run_["seconds"]
        tuned.append(((e, p), result))
        print(f"tune e={e:g} p={p:g}: HR@10 {fmt(result['all'][0])} NDCG@10 {fmt(result['all'][1])} "
              f"(warm {fmt(result['warm'][0])}, cold {fmt(result.get('cold', (0, 0, 0))[0])}; "
              f"{asked} items in {seconds:.1f} s)", flush=True)
    grid_rows = sorted(tuned[1:], key=lambda item: (-item[1]["all"][0], -item[1]["all"][1], item[0]))
    chosen = grid_rows[0][0]

    # Held-out: visual only, popularity only, the chosen weights, the defaults; co-engagement alone as a reference.
    held = logs["held-out"]
    held_configs = [("visual only (e 0, p 0)", flags_of(0, 0)), ("popularity only (e 0, p 1)", flags_of(0, 1)),
                    (f"chosen on tune (e {chosen[0]:g}, p {chosen[1]:g})", flags_of(*chosen)),
                    ("built-in defaults (no flags)", []),
                    ("*reference:* co-engagement only (e 1, p 0)", flags_of(1, 0))]
    held_runs = []
    for label, flags in held_configs:
        name = "held-" + ("-".join(f.strip("-") for f in flags) if flags else "defaults")
        run_ = evaluate(vsearch, held["catalog"], held["pairs"], flags, name)
        held_runs.append((label, run_))
        print(f"held-out {label}: HR@10 {fmt(run_['result']['all'][0])} NDCG@10 {fmt(run_['result']['all'][1])} "
              f"({run_['asked']} items in {run_['seconds']:.1f} s)", flush=True)
    ceiling = oracle(held, names, neighbours)
    vis, pop, cho, dfl, coe = (run_["result"] for _, run_ in held_runs)
    same_defaults = held_runs[3][1]["ranked"] == held_runs[2][1]["ranked"]
    warm_items = sorted({pair["a"] for pair in held["pairs"] if pair["kind"] == "warm"})

    # ------------------------------------------------------------ the report
    n = len(names)
    chance = LIMIT / (n - 1)
    total = time.perf_counter() - began
    lines = [SECTION, ""]
    lines.append(f"- date: {date}; machine: {machine()}")
    lines.append(f"- vsearch: {version}, `{shown}` of {built} (copied for the run; the tree is at {git_rev()}); "
                 f"command `python3 bench/recommend.py{' --quick' if args.quick else ''}"
                 f"{'' if args.seed_tune == 1201 else f' --seed-tune {args.seed_tune}'}"
                 f"{'' if args.seed_held_out == 1202 else f' --seed-held-out {args.seed_held_out}'}`; "
                 f"run time {total / 60:.1f} min (servers on core {SERVER_CORE}, the client on core {CLIENT_CORE})")
    sources = " + ".join(f"`{os.path.relpath(f, ROOT)}` ({sum(1 for x in os.listdir(f) if not x.startswith('.'))})" for f in folders)
    lines.append(f"- catalog: {n} items, {sources}, one SQLite catalog (`vsearch index FOLDER --catalog …` per folder, "
                 f"{index_seconds:.1f} s); visual neighbours from `GET /search?im_name=X&limit=11` (X dropped)"
                 + (f". **Missing, not indexed:** {', '.join(os.path.relpath(m, ROOT) for m in missing)}" if missing else ""))
    lines.append(f"- simulation: {SIM['groups']} hidden taste groups (a seeded shuffle of the names, independent of colour), "
                 f"appeal 1/rank^{SIM['zipf']:g} within a group; {SIM['users']} users with a group, "
                 f"{SIM['sessions_per_user'][0]}–{SIM['sessions_per_user'][1]} sessions each over {SIM['days']} days; "
                 f"a session starts in the user's group ({SIM['start_in_group']:g}) or anywhere, then "
                 f"{SIM['extra_steps'][0]}–{SIM['extra_steps'][1]} steps: user's group by appeal {SIM['p_group']:g}, "
                 f"one of the current item's {SIM['neighbours']} visual neighbours {SIM['p_neighbour']:g}, "
                 f"any item {SIM['p_any']:g} (never the same item twice in a row); a click per step, "
                 f"add_to_cart {SIM['p_cart']:g}, transaction {SIM['p_buy']:g} of those; "
                 f"{SIM['new_share']:.0%} of the items held back as new (events only after the split); "
                 f"the neighbour steps follow this binary's visual neighbours, so the logs change with the features; "
                 f"sessions sorted by start, first {SIM['train_share']:.0%} loaded (train), the rest the test")
    lines.append("")
    lines.append("| log | seed | sessions train / test | train events loaded (click / cart / transaction) | test events "
                 "| new items | test pairs: all / warm / cold start / other |")
    lines.append("|---|---|---|---|---|---|---|")
    for part, log in logs.items():
        a = log["train_actions"]
        counts = {kind: sum(p["kind"] == kind for p in log["pairs"]) for kind in ("warm", "cold", "other")}
        lines.append(f"| {part} | {log['seed']} | {log['train_sessions']} / {log['test_sessions']} | "
                     f"{len(log['train_events'])} ({a.get('product_click', 0)} / {a.get('add_to_cart', 0)} / "
                     f"{a.get('transaction', 0)}) | {log['test_events']} | {len(log['new'])} | "
                     f"{len(log['pairs'])} / {counts['warm']} / {counts['cold']} / {counts['other']} |")
    lines.append("")
    lines.append("\"warm\": a had events in train; \"cold start\": a is a held-back new item; \"other\": an old item that "
                 "happened to get no event in train (in \"all\" only). Every event was accepted (all collector codes 0) and `vsearch events stats` counts them all.")
    lines.append("")

    lines.append(f"**Tune** (seed {args.seed_tune}; grid e ∈ {{{', '.join(f'{x:g}' for x in grid_e)}}} × "
                 f"p ∈ {{{', '.join(f'{x:g}' for x in grid_p)}}}, e + p ≤ 1: {len(configs)} configurations, "
                 f"each its own server; ranked by HR@10 overall, then NDCG@10). Best rows, and visual only:")
    lines.append("")
    lines.append("| e | p | HR@10 | NDCG@10 | HR@10 warm | NDCG@10 warm | HR@10 cold | NDCG@10 cold |")
    lines.append("|---|---|---|---|---|---|---|---|")
    for (e, p), result in grid_rows[:6]:
        lines.append(row(f"{e:g}", result, (f"{p:g}",)))
    for (e, p), result in grid_rows:
        if (e, p) == (0.5, 0.05) and (e, p) not in [c for c, _ in grid_rows[:6]]:
            lines.append(row(f"{e:g}", result, (f"{p:g} (defaults)",)))
    lines.append(row("0", tuned[0][1], ("0 (visual only)",)))
    lines.append("")
    tse = math.sqrt(tuned[0][1]["all"][0] * (1 - tuned[0][1]["all"][0]) / tuned[0][1]["all"][2])
    lines.append(f"One standard error of these HR@10 is ≈ {tse:.3f} (pairs taken as independent): rows closer than that "
                 f"are not told apart by this log.")
    lines.append("")
    best_hr = grid_rows[0][1]["all"][0]
    close = [c for c, r in grid_rows if best_hr - r["all"][0] <= tse]
    gap = best_hr - tuned[0][1]["all"][0]
    if len(close) > 1:
        lines.append(f"Grid rows within one standard error of the best: {', '.join(f'e {e:g} p {p:g}' for e, p in close)}: "
                     f"their order is noise. The best is {gap:+.3f} ({gap / tse:.1f} s.e.) above visual only.")
    else:
        runner_up = grid_rows[1][1]["all"][0] if len(grid_rows) > 1 else best_hr
        lines.append(f"The best is {best_hr - runner_up:+.3f} above the next grid row and {gap:+.3f} ({gap / tse:.1f} s.e.) "
                     f"above visual only.")
    lines.append("")
    lines.append(f"**Chosen: `--engagement-weight {chosen[0]:g} --popularity-weight {chosen[1]:g}`** "
                 f"(`RecommendationBlend(engagementWeight: {chosen[0]:g}, popularityWeight: {chosen[1]:g})`).")
    lines.append("")

    hcounts = vis
    pair_note = f"all {hcounts['all'][2]}, warm {hcounts['warm'][2]}, cold start {hcounts.get('cold', (0, 0, 0))[2]} pairs"
    se = math.sqrt(vis["all"][0] * (1 - vis["all"][0]) / vis["all"][2])
    lines.append(f"**Held-out** (seed {args.seed_held_out}; {pair_note}; nothing tuned on it; one standard error of an "
                 f"HR@10 near {vis['all'][0]:.2f} over all pairs is ≈ {se:.3f} if pairs were independent — they are not "
                 f"quite, a session's pairs share a user):")
    lines.append("")
    lines.append("| configuration | HR@10 | NDCG@10 | HR@10 warm | NDCG@10 warm | HR@10 cold start | NDCG@10 cold start |")
    lines.append("|---|---|---|---|---|---|---|")
    for label, run_ in held_runs:
        lines.append(row(label, run_["result"]))
    lines.append(f"| *reference:* random ({LIMIT}/(N−1), N = {n}) | {fmt(chance)} | – | {fmt(chance)} | – | {fmt(chance)} | – |")
    lines.append(row("*reference:* oracle knowing the hidden groups and appeals", ceiling))
    lines.append("")
    lines.append("The oracle ranks by the simulation's own next-item odds for a user of a's group (0.6 · appeal share in "
                 "the group + 0.25 / 10 for a's visual neighbours + 0.15 / N): a ceiling for any item-to-item answer, "
                 "not a method. Co-engagement only (e 1) is a reference outside the grid.")
    lines.append("")
    how_counts = {how: hcounts.get("how:" + how, (0, 0, 0))[2] for how in ("group", "neighbour", "any")}
    lines.append(f"Held-out HR@10 by how the simulation drew b (pairs: user's group {how_counts['group']}, "
                 f"visual neighbour of a {how_counts['neighbour']}, any item {how_counts['any']}), and the share of a warm "
                 f"item's top 10 that is in its hidden group (chance ≈ 1/{SIM['groups']} = {1 / SIM['groups']:.3f}):")
    lines.append("")
    lines.append("| configuration | b from the user's group | b a visual neighbour of a | b any item | top 10 in a's group |")
    lines.append("|---|---|---|---|---|")
    for label, run_ in held_runs:
        result = run_["result"]
        lines.append("| " + " | ".join([label] + [fmt(result.get("how:" + how, (0, 0, 0))[0]) for how in ("group", "neighbour", "any")]
                                       + [fmt(in_group_share(run_["ranked"], warm_items, held["group_of"]))]) + " |")
    lines.append("| " + " | ".join(["*reference:* oracle"] + [fmt(ceiling.get("how:" + how, (0, 0, 0))[0])
                                                             for how in ("group", "neighbour", "any")] + ["–"]) + " |")
    lines.append("")

    def scale(run_, rank):
        return benchlib.med([run_["scores"][a][rank] for a in warm_items if len(run_["scores"].get(a, [])) > rank])
    visual_run, coengagement_run = held_runs[0][1], held_runs[4][1]
    v1, v10, c1, c10 = scale(visual_run, 0), scale(visual_run, LIMIT - 1), scale(coengagement_run, 0), scale(coengagement_run, LIMIT - 1)
    lines.append(f"Score scales (held-out, median over warm items): visual score at rank 1 {v1:.3f}, at rank 10 {v10:.3f}; "
                 f"co-engagement cosine (the e 1 scores) at rank 1 {c1:.3f}, at rank 10 {c10:.3f}.")
    lines.append("")

    # A reading, with the figures it rests on.
    warm_gain = cho["warm"][0] - vis["warm"][0]
    cold = lambda r: r.get("cold", (0, 0, 0))  # noqa: E731
    group_share = {label: in_group_share(run_["ranked"], warm_items, held["group_of"]) for label, run_ in held_runs}
    lines.append("Reading:")
    lines.append("")
    lines.append(f"- Colour carries no signal about the taste groups (a seeded shuffle of the names), so visual similarity "
                 f"finds only the pairs the simulation drew among visual neighbours: visual only gets "
                 f"{fmt(vis.get('how:group', (0,))[0])} HR@10 on the group pairs (chance {fmt(chance)}), "
                 f"{fmt(vis.get('how:neighbour', (0,))[0])} on the neighbour pairs (the simulation's \"looks alike\" is "
                 f"vsearch's own top 10, so visual only is nearly perfect there by construction), {fmt(vis['all'][0])} overall.")
    verdict = ("clearly beats" if warm_gain >= 0.02 else "beats, by little," if warm_gain > 0.005
               else "does not beat" if warm_gain > -0.005 else "is below")
    lines.append(f"- The chosen blend (e {chosen[0]:g}, p {chosen[1]:g}) {verdict} visual only on warm pairs: HR@10 "
                 f"{fmt(vis['warm'][0])} → {fmt(cho['warm'][0])} ({warm_gain:+.3f}), NDCG@10 {fmt(vis['warm'][1])} → "
                 f"{fmt(cho['warm'][1])}. The oracle gets {fmt(ceiling['warm'][0])} on the same pairs: the room above visual "
                 f"only is {ceiling['warm'][0] - vis['warm'][0]:+.3f}, because ten slots must be shared between the "
                 f"group's appealing items and the ten visual neighbours.")
    lines.append(f"- The events carry the groups: co-engagement alone (e 1) puts {group_share[held_runs[4][0]]:.0%} of a warm "
                 f"item's top 10 in its hidden group (visual only {group_share[held_runs[0][0]]:.0%}, chance "
                 f"{1 / SIM['groups']:.0%}) and gets {fmt(coe.get('how:group', (0,))[0])} HR@10 on the group pairs "
                 f"(oracle {fmt(ceiling.get('how:group', (0,))[0])}). But the blend adds the cosine as it is to the visual "
                 f"score: the cosine's median is {c1:.3f} at rank 1 and {c10:.3f} at rank 10, the visual score's "
                 f"{v1:.3f} and {v10:.3f}. The cosine is small because an item's norm counts every group it is in "
                 f"(each click's own query group, which holds only that item, about doubles every item's squared "
                 f"norm and so halves every cosine), and because dividing by the other item's norm removes the preference for the items "
                 f"people click most, which the next click follows. At small e the "
                 f"visual order wins; at large e the visual neighbours are pushed out before the group items come in.")
    lines.append(f"- Cold start (new items, no events of their own): visual only {fmt(cold(vis)[0])}, chosen "
                 f"{fmt(cold(cho)[0])}, defaults {fmt(cold(dfl)[0])}, popularity only {fmt(cold(pop)[0])}. A new item's "
                 f"answer is (1 − p)·visual + p·popularity: popularity is global, not per group (the 100 most engaged of {n} items, "
                 f"log-scaled: the 100th weighs {popularity_floor(held):.2f} of the first), and it displaces the visual "
                 f"neighbours.")
    lines.append(f"- Popularity only: {fmt(pop['all'][0])} overall, the same list for every item; above chance because "
                 f"appeal is skewed within each group.")
    lines.append(f"- The built-in defaults (e 0.5, p 0.05) give {fmt(dfl['all'][0])} HR@10 overall ({fmt(dfl['warm'][0])} "
                 f"warm, {fmt(cold(dfl)[0])} cold start) against {fmt(cho['all'][0])} for the chosen weights and "
                 f"{fmt(vis['all'][0])} for visual only"
                 + (" (identical answers: the chosen weights are the defaults)." if same_defaults else "."))
    lines.append("- `/recommendations` always drops near-identical images (visual score ≥ 0.98 to a better-ranked one; "
                 "`/search` does not): a few items of this catalog (e.g. `oc_quay_sign_01_b`, a byte copy of "
                 "`oc_quay_sign_01`) can only appear when they outrank their twin; a b hidden that way counts as a miss.")
    lines.append("- Not modelled: real shoppers' sense of \"looks alike\" (here it is vsearch's own colour neighbours, "
                 "which favours visual only), impressions and their position bias (`pos` is random and unused), tastes "
                 "that drift, catalog churn beyond the one cohort of new items, bots and noise, repeat purchases, "
                 "seasonality (timestamps only order the sessions), and the feedback loop of recommendations shaping the "
                 "clicks they are trained on; the groups are disjoint and of equal size, which real catalogs' are not.")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
