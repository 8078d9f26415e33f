#!/usr/bin/env python3
"""Issue 11, the web page of `vsearch serve`: the thumbnail route against a plain static
file server, and the time to the first result picture for an upload of a 12 MP photo.

1. Thumbnails. 200 generated JPEGs of 1600-3000 px (the corpus images upscaled and
   augmented with Pillow, seeded) indexed into a catalog; `vsearch serve` makes the
   400 px thumbnail on the first `GET /images/NAME?size=400` and caches it on disk.
   The peer is nginx (one worker, sendfile) serving the same thumbnails made
   beforehand by `vsearch thumbs` (the batch job, same rule).
   - cold: one client, sequential, every image's 400 px thumbnail once, cache emptied
     and server restarted before each pass: latency p50/p95, server CPU-s over the
     pass, thumbnails per CPU-second; against `vsearch thumbs --sizes 400 --jobs 1`
     (CPU per image) and nginx's first pass over its files;
   - warm: `wrk -t1 -c16` cycling over the 200 URLs: req/s, p50/p99, server CPU-s per
     10k requests; and the same with `If-None-Match` (every answer a 304).
   Server (vsearch or nginx) pinned to core 1, clients (Python, wrk) to core 0.
2. Time to first result picture (TTFR) for a 12 MP JPEG (3000x4000, quality 90):
   (a) headless Chromium + Selenium on the page `/`: from the file input's `change`
       event to the first `.result img.result-image` complete with naturalWidth > 0
       (the page resizes to 512 px in the browser before uploading);
   (b) without a browser: POST the 12 MP file, or a 512 px file made by
       `vsearch prepare` (what the SDKs send), to /uploadsearch, then GET the first
       result's `/images/NAME?size=400`.
   Each cold (empty thumbnail cache, server restarted) and warm (thumbnails made).

    python3 bench/webpage.py              # everything (~5 min on 2 cores; the first run also makes the images)
    python3 bench/webpage.py --quick      # one run of each, shorter wrk runs (~2 min)
    python3 bench/webpage.py --record     # ... and replace its section of bench/RESULTS.md
    python3 bench/webpage.py --only thumbs --reps 5
    python3 bench/webpage.py --vsearch PATH

Never builds: uses `.build-perf/release/vsearch` when it is newer than
`.build/release/vsearch`, else the latter (or --vsearch). Installs apt `nginx-light`,
`wrk`, `chromium`, `chromium-driver` and a venv with Selenium (bench/work/venv) when
missing. Everything it makes is under bench/work/webpage/ (git-ignored); raw numbers in
bench/work/webpage/results.json, report in bench/work/webpage/report.md.
See bench/README.md ("webpage.py").
"""
import argparse
import datetime
import hashlib
import http.client
import json
import os
import random
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from benchlib import free_port, loadavg, pct, to_ms  # noqa: E402
from benchlib import med as _med  # noqa: E402

WORK = os.path.join(HERE, "work", "webpage")
SRC = os.path.join(WORK, "src")                 # the generated catalog images
THUMBS = os.path.join(WORK, "thumbs")           # `vsearch thumbs SRC THUMBS --sizes 400` (what nginx serves)
THUMBS400 = os.path.join(WORK, "thumbs400")     # the timed batch runs, --sizes 400
CATALOG = os.path.join(WORK, "catalog.sqlite")
PHOTO = os.path.join(WORK, "photo-12mp.jpg")    # the upload
PHOTO512 = os.path.join(WORK, "photo-512.jpg")  # `vsearch prepare PHOTO` (what an SDK sends)
VENV = os.path.join(HERE, "work", "venv")
RESULTS_JSON = os.path.join(WORK, "results.json")
REPORT_MD = os.path.join(WORK, "report.md")
SECTION = "## Issue 11 — web page: thumbnails route, time to first result"
READY_FLAG = "/tmp/vsearch-server-ready"

SEED = 11
N_IMAGES = 200
SIDES = (1600, 3000)        # longer side of a generated image, uniform
NOISE_SIGMA = 10.0          # gaussian luminance grain added after upscaling: an upscaled 500 px image alone is unrealistically
                            # smooth (0.8 MB for 12 MP at quality 90); with it the 12 MP photo is ~3.2 MB, like a phone's
QUALITY = 90
PHOTO_SOURCE = "oc_cattle"  # late in name order: its variants are not on the catalog browser's first page
PHOTO_SIZE = (3000, 4000)   # 12 MP, portrait like a phone photo
SIZE = 400
SERVER_CORE, CLIENT_CORE = 1, 0
HEADERS = ("content-type", "content-length", "etag", "cache-control", "x-content-type-options")
CLK = os.sysconf("SC_CLK_TCK")
SPEC = {"seed": SEED, "n": N_IMAGES, "sides": SIDES, "noise": NOISE_SIGMA, "quality": QUALITY,
        "photo": [PHOTO_SOURCE, PHOTO_SIZE], "version": 2}


# ------------------------------------------------------------------ small helpers
def log(*a):
    print(*a, flush=True)


def med(xs):
    """The median of the values that are not None; None when there are none."""
    return _med(xs, empty=None)


def wait_port(port, proc, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited {proc.returncode} before listening")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listening on {port} after {timeout} s")


def proc_cpu(pid):
    """CPU seconds of a live process: the sum of its threads' run time from /proc/PID/task/*/schedstat
    (nanoseconds; utime+stime in /proc/PID/stat count 10 ms ticks, too coarse for one upload), else
    utime+stime. Threads that exit between two readings would be lost; the servers' threads live on."""
    try:
        total = 0
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        return total / 1e9
    except (OSError, ValueError, IndexError):
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK


def tree_cpu(pid):
    """A process and its live children (nginx master + worker)."""
    total = proc_cpu(pid)
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            kids = [int(x) for x in f.read().split()]
    except OSError:
        kids = []
    for k in kids:
        try:
            total += tree_cpu(k)
        except OSError:
            pass
    return total


def pin_self(core):
    try:
        os.sched_setaffinity(0, {core})
    except OSError:
        pass


def unpin_self():
    try:
        os.sched_setaffinity(0, set(range(os.cpu_count() or 1)))
    except OSError:
        pass


def timed_cmd(cmd):
    """(cpu_s, wall_s) of cmd via os.wait4 (output to /dev/null)."""
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {p.returncode}: {err.decode(errors='replace')[-1500:]}")
    return ru.ru_utime + ru.ru_stime, wall


# ------------------------------------------------------------------ setup
def apt_install(*pkgs):
    log(f"apt-get install {' '.join(pkgs)}")
    subprocess.run(["apt-get", "install", "-y", "-qq", *pkgs], check=True, stdout=subprocess.DEVNULL)


def ensure_tools(need_browser):
    missing = [pkg for exe, pkg in (("nginx", "nginx-light"), ("wrk", "wrk")) if not shutil.which(exe)]
    if need_browser:
        missing += [pkg for exe, pkg in (("chromium", "chromium"), ("chromedriver", "chromium-driver"))
                    if not shutil.which(exe)]
    if missing:
        apt_install(*missing)
    if need_browser:
        py = os.path.join(VENV, "bin", "python")
        if not os.path.exists(py):
            subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        if subprocess.run([py, "-c", "import selenium"], capture_output=True).returncode != 0:
            subprocess.run([py, "-m", "pip", "install", "-q", "selenium"], check=True)


def pick_vsearch(explicit):
    if explicit:
        return os.path.abspath(explicit)
    perf = os.path.join(ROOT, ".build-perf", "release", "vsearch")
    main = os.path.join(ROOT, ".build", "release", "vsearch")
    if os.path.exists(perf) and (not os.path.exists(main) or os.path.getmtime(perf) > os.path.getmtime(main)):
        return perf
    return main


def make_images():
    """200 catalog images and the 12 MP upload, deterministic; remade only when SPEC changes."""
    import numpy as np
    from PIL import Image, ImageOps
    spec_path = os.path.join(WORK, "images.json")
    if os.path.exists(spec_path) and os.path.exists(PHOTO):
        old = json.load(open(spec_path))
        if old.get("spec") == json.loads(json.dumps(SPEC)) and all(
                os.path.exists(os.path.join(SRC, n + ".jpg")) for n in old["names"]):
            return old
    log("making the images (once) ...")
    shutil.rmtree(SRC, ignore_errors=True)
    os.makedirs(SRC)
    corpus = sorted(p[:-4] for p in os.listdir(os.path.join(ROOT, "corpus", "images")) if p.endswith(".jpg"))
    rng = random.Random(SEED)
    nrng = np.random.default_rng(SEED)

    def grain(im):
        a = np.asarray(im, dtype=np.float32)
        a += nrng.normal(0, NOISE_SIGMA, a.shape[:2]).astype(np.float32)[..., None]
        return Image.fromarray(np.clip(a + 0.5, 0, 255).astype(np.uint8))

    names, sizes = [], []
    for i in range(N_IMAGES):
        stem = corpus[i % len(corpus)]
        im = Image.open(os.path.join(ROOT, "corpus", "images", stem + ".jpg")).convert("RGB")
        w, h = im.size
        fx, fy = rng.uniform(0.8, 1.0), rng.uniform(0.8, 1.0)
        cw, ch = max(1, round(w * fx)), max(1, round(h * fy))
        x0, y0 = rng.randint(0, w - cw), rng.randint(0, h - ch)
        im = im.crop((x0, y0, x0 + cw, y0 + ch))
        if rng.random() < 0.5:
            im = ImageOps.mirror(im)
        gain = rng.uniform(0.9, 1.1)
        im = im.point(lambda v, g=gain: min(255, int(v * g + 0.5)))
        side = rng.randint(*SIDES)
        s = side / max(cw, ch)
        im = im.resize((max(1, round(cw * s)), max(1, round(ch * s))), Image.LANCZOS)
        im = grain(im)
        name = f"{stem}-v{i // len(corpus)}"
        im.save(os.path.join(SRC, name + ".jpg"), quality=QUALITY)
        names.append(name)
        sizes.append(im.size)
    # the upload: the photo source cropped to 3:4, upscaled to 12 MP, grain, quality 90
    im = Image.open(os.path.join(ROOT, "corpus", "images", PHOTO_SOURCE + ".jpg")).convert("RGB")
    w, h = im.size
    tw, th = PHOTO_SIZE
    if w / h > tw / th:
        cw = round(h * tw / th)
        im = im.crop(((w - cw) // 2, 0, (w - cw) // 2 + cw, h))
    else:
        ch = round(w * th / tw)
        im = im.crop((0, (h - ch) // 2, w, (h - ch) // 2 + ch))
    im = grain(im.resize(PHOTO_SIZE, Image.LANCZOS))
    im.save(PHOTO, quality=QUALITY)
    info = {"spec": SPEC, "names": names, "sizes": sizes}
    json.dump(info, open(spec_path, "w"))
    return info


def index_catalog(vsearch):
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(CATALOG + suffix):
            os.remove(CATALOG + suffix)
    subprocess.run([vsearch, "index", SRC, "--catalog", CATALOG, "--quiet"], check=True,
                   stdout=subprocess.DEVNULL)


def batch_thumbs(vsearch):
    """The peer's files: `vsearch thumbs SRC THUMBS --sizes 400`, made by this run's binary; returns name -> file.
    Only the 400 px size: with all four the batch job makes 400 from its 800 (a cascade), the route from the
    source, so the bytes would differ."""
    shutil.rmtree(THUMBS, ignore_errors=True)
    subprocess.run([vsearch, "thumbs", SRC, THUMBS, "--sizes", str(SIZE), "--force"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    files = {}
    for f in os.listdir(THUMBS):
        m = re.match(r"(.+)_thumb_(\d+)x(\d+)\.jpg$", f)
        if m and max(int(m.group(2)), int(m.group(3))) == SIZE:
            files[m.group(1)] = f
    return files


# ------------------------------------------------------------------ servers
class VSearch:
    """`vsearch serve` pinned to SERVER_CORE with its own (emptied on request) thumbnail cache."""

    extra_args = []  # e.g. --web-root (set once for every server of the run)

    def __init__(self, vsearch, tag):
        self.vsearch, self.tag = vsearch, tag
        self.run_dir = os.path.join(WORK, "serve-" + tag)
        self.cache_dir = os.path.join(self.run_dir, "thumbnail-cache")
        self.proc = None
        help_text = subprocess.run([vsearch, "serve", "--help"], capture_output=True, text=True).stdout
        m = re.search(r"(--[\w-]*(?:thumb|cache)[\w-]*)\s+<", help_text)
        self.cache_option = m.group(1) if m else None
        self.found_cache = None  # where the thumbnails went when there is no option

    def start(self, empty_cache):
        self.stop()
        if empty_cache:
            shutil.rmtree(self.run_dir, ignore_errors=True)
            if self.found_cache and os.path.isdir(self.found_cache):
                shutil.rmtree(self.found_cache)
        os.makedirs(self.run_dir, exist_ok=True)
        self.port = free_port()
        cmd = ["taskset", "-c", str(SERVER_CORE), self.vsearch, "serve", "--catalog", CATALOG,
               "--port", str(self.port)]
        if self.cache_option:
            cmd += [self.cache_option, self.cache_dir]
        cmd += VSearch.extra_args
        env = dict(os.environ, XDG_CACHE_HOME=os.path.join(self.run_dir, "xdg-cache"))
        self.log_path = os.path.join(self.run_dir, "serve.log")
        self.started = time.time()
        self.proc = subprocess.Popen(cmd, cwd=self.run_dir, env=env, stdout=open(self.log_path, "ab"),
                                     stderr=subprocess.STDOUT)
        wait_port(self.port, self.proc)
        self.base = f"http://127.0.0.1:{self.port}"
        return self

    def cpu(self):
        return proc_cpu(self.proc.pid)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def cache_files(self):
        """Image files in the thumbnail cache (the option's folder, or wherever they were found)."""
        d = self.cache_dir if self.cache_option else self.locate_cache()
        out = []
        if d and os.path.isdir(d):
            for base, _, files in os.walk(d):  # files are named by a hash, no extension
                out += [os.path.join(base, f) for f in files]
        return out

    def locate_cache(self):
        """Without a cache option: the folder of image files made since the server started, under its
        working folder, its XDG cache, the catalog's folder or ~/.cache (checked once, after a request)."""
        if self.found_cache:
            return self.found_cache
        roots = [self.run_dir, WORK, os.path.expanduser("~/.cache")]
        new = []
        for r in roots:
            for base, dirs, files in os.walk(r):
                if base.startswith((SRC, THUMBS, THUMBS400)):
                    dirs[:] = []
                    continue
                for f in files:
                    p = os.path.join(base, f)
                    if not f.endswith((".log", ".lua", ".json", ".md", ".sqlite", "-wal", "-shm", ".conf", ".pid")) \
                            and os.path.getmtime(p) >= self.started - 1 and p not in (PHOTO, PHOTO512):
                        new.append(p)
        if new:
            self.found_cache = os.path.commonpath([os.path.dirname(p) for p in new])
            log(f"  thumbnail cache found at {self.found_cache}")
        return self.found_cache


class Nginx:
    """nginx in the foreground, master + 1 worker pinned to SERVER_CORE, serving THUMBS."""

    def __init__(self):
        self.dir = os.path.join(WORK, "nginx")
        self.proc = None

    def start(self):
        self.stop()
        os.makedirs(os.path.join(self.dir, "logs"), exist_ok=True)
        self.port = free_port()
        conf = os.path.join(self.dir, "nginx.conf")
        with open(conf, "w") as f:
            f.write(f"""# generated by bench/webpage.py: a plain static file server for the same thumbnails
worker_processes 1;
daemon off;
pid {self.dir}/nginx.pid;
error_log {self.dir}/logs/error.log warn;
events {{ worker_connections 1024; }}
http {{
    types {{ image/jpeg jpg jpeg; image/png png; }}
    default_type application/octet-stream;
    access_log {self.dir}/logs/access.log;
    sendfile on;
    tcp_nopush on;
    keepalive_requests 1000000;
    keepalive_timeout 65;
    client_body_temp_path {self.dir}/tmp-body;
    proxy_temp_path {self.dir}/tmp-proxy;
    fastcgi_temp_path {self.dir}/tmp-fastcgi;
    uwsgi_temp_path {self.dir}/tmp-uwsgi;
    scgi_temp_path {self.dir}/tmp-scgi;
    server {{
        listen 127.0.0.1:{self.port};
        root {THUMBS};
        location / {{
            add_header Cache-Control "public, max-age=3600";
            add_header X-Content-Type-Options nosniff;
        }}
    }}
}}
""")
        self.proc = subprocess.Popen(["taskset", "-c", str(SERVER_CORE), "nginx", "-p", self.dir, "-c", conf],
                                     stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.dir, "logs", "stderr"), "ab"))
        wait_port(self.port, self.proc)
        self.base = f"http://127.0.0.1:{self.port}"
        return self

    def cpu(self):
        return tree_cpu(self.proc.pid)

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()  # SIGTERM: fast shutdown of master and worker
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    @staticmethod
    def version():
        return subprocess.run(["nginx", "-v"], capture_output=True, text=True).stderr.strip()


# ------------------------------------------------------------------ HTTP client
def get(conn, path, headers=None):
    conn.request("GET", path, headers=headers or {})
    r = conn.getresponse()
    body = r.read()
    return r.status, dict((k.lower(), v) for k, v in r.getheaders()), body


def multipart(path, field="image"):
    boundary = "webpage-bench-" + hashlib.sha1(path.encode()).hexdigest()[:16]
    with open(path, "rb") as f:
        data = f.read()
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{field}\"; filename=\"photo.jpg\"\r\n"
            "Content-Type: image/jpeg\r\n\r\n").encode() + data + f"\r\n--{boundary}--\r\n".encode()
    return body, f"multipart/form-data; boundary={boundary}"


def probe_routes(vs, names):
    """What of the issue's routes this binary answers: (thumbnail route ok, page ok, notes)."""
    conn = http.client.HTTPConnection("127.0.0.1", vs.port, timeout=60)
    notes = []
    st, h, body = get(conn, f"/images/{urllib.parse.quote(names[0])}?size={SIZE}")
    thumbs_ok = st == 200 and h.get("content-type", "").startswith("image/jpeg") and body[:2] == b"\xff\xd8"
    if not thumbs_ok:
        notes.append(f"GET /images/NAME?size={SIZE} answered {st} {h.get('content-type')}")
    st, h, body = get(conn, "/")
    page_ok = st == 200 and b"upload-input" in body
    if not page_ok:
        notes.append(f"GET / answered {st} ({'no #upload-input' if st == 200 else body[:80]!r})")
    conn.close()
    return thumbs_ok, page_ok, notes


# ------------------------------------------------------------------ part 1: thumbnails
def cold_pass(server, paths, check_etag=True):
    """Sequential GET of every path on one keep-alive connection (client on CLIENT_CORE):
    per-request ms, server CPU-s over the pass, bodies' sha256 and the ETags."""
    pin_self(CLIENT_CORE)
    try:
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
        get(conn, "/health" if isinstance(server, VSearch) else "/nothing-here")  # open the connection
        cpu0 = server.cpu()
        lat, hashes, etags, sizes = [], {}, {}, []
        t_all = time.perf_counter()
        for p in paths:
            t0 = time.perf_counter()
            st, h, body = get(conn, p)
            lat.append((time.perf_counter() - t0) * 1000)
            if st != 200:
                raise RuntimeError(f"GET {p}: {st}")
            hashes[p] = hashlib.sha256(body).hexdigest()
            etags[p] = h.get("etag")
            sizes.append(len(body))
        wall = time.perf_counter() - t_all
        cpu = server.cpu() - cpu0
        conn.close()
    finally:
        unpin_self()
    return {"ms": lat, "p50": pct(lat, 50), "p95": pct(lat, 95), "max": max(lat), "cpu_s": cpu, "wall_s": wall,
            "per_cpu_s": len(paths) / cpu if cpu > 0 else None, "hashes": hashes, "etags": etags,
            "bytes_mean": statistics.mean(sizes)}


def lua_script(path, paths, etags=None):
    def q(s):
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'
    with open(path, "w") as f:
        f.write("-- generated by bench/webpage.py\nlocal paths = {\n" + ",\n".join("  " + q(p) for p in paths) + "\n}\n")
        if etags:
            f.write("local etags = {\n" + ",\n".join("  " + q(etags[p]) for p in paths) + "\n}\n")
        # requests formatted once per thread (init), so the load generator spends little per request
        f.write("local reqs = {}\nlocal i = 0\ninit = function(args)\n  for k, p in ipairs(paths) do\n")
        if etags:
            f.write('    reqs[k] = wrk.format("GET", p, {["If-None-Match"] = etags[k]})\n')
        else:
            f.write('    reqs[k] = wrk.format("GET", p)\n')
        f.write("  end\nend\nrequest = function()\n  i = i % #reqs + 1\n  return reqs[i]\nend\n")


def to_bytes(text):
    value, unit = re.match(r"([\d.]+)([KMGT]?B)", text).groups()
    return float(value) * {"B": 1, "KB": 2**10, "MB": 2**20, "GB": 2**30, "TB": 2**40}[unit]


def wrk_run(server, script, duration, connections=16):
    args = ["taskset", "-c", str(CLIENT_CORE), "wrk", "-t1", f"-c{connections}", f"-d{duration}s", "--latency",
            "-s", script, server.base + "/"]
    cpu0 = server.cpu()
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    cpu = server.cpu() - cpu0
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"wrk failed: {out}")
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errs = re.search(r"Socket errors: (.*)", out)
    m = re.search(r"(\d+) requests in ([\d.]+\w+), ([\d.]+\w+) read", out)
    requests = int(m.group(1))
    res = {"rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1)),
           "p50": to_ms(re.search(r"^\s+50%\s+(\S+)", out, re.M).group(1)),
           "p99": to_ms(re.search(r"^\s+99%\s+(\S+)", out, re.M).group(1)),
           "requests": requests, "bytes_per_req": to_bytes(m.group(3)) / max(requests, 1),
           "cpu_s": cpu, "cpu_per_10k": cpu / max(requests, 1) * 10000,
           "server_busy": cpu / duration, "wrk_busy": (ru.ru_utime + ru.ru_stime) / duration,
           "errors": (bad.group(1) if bad else None), "socket_errors": errs.group(1) if errs else None}
    if bad:
        raise RuntimeError(f"wrk saw {bad.group(1)} error responses:\n{out}")
    return res


def part_thumbs(args, vsearch, names, nginx_files, vs_ok):
    out = {"batch": [], "cold": {"vsearch": [], "nginx": []}, "warm": {"vsearch": [], "nginx": []},
           "304": {"vsearch": [], "nginx": []}, "floor": {"vsearch": []}}
    vs_paths = [f"/images/{urllib.parse.quote(n)}?size={SIZE}" for n in names]
    ng_paths = ["/" + urllib.parse.quote(nginx_files[n]) for n in names]
    ngx = Nginx()
    vs = VSearch(vsearch, "thumbs")

    # batch: vsearch thumbs --sizes 400 --jobs 1 on the server's core, CPU per image
    for r in range(args.reps):
        shutil.rmtree(THUMBS400, ignore_errors=True)
        cpu, wall = timed_cmd(["taskset", "-c", str(SERVER_CORE), vsearch, "thumbs", SRC, THUMBS400,
                               "--sizes", str(SIZE), "--jobs", "1", "--force"])
        out["batch"].append({"cpu_s": cpu, "wall_s": wall, "ms_per_image_cpu": cpu / len(names) * 1000,
                             "per_cpu_s": len(names) / cpu})
        log(f"  batch thumbs --sizes {SIZE} --jobs 1: {cpu:.2f} CPU-s, {len(names) / cpu:.1f} images/CPU-s")

    # cold: interleaved, cache emptied and server restarted before every vsearch pass
    for r in range(args.reps):
        if vs_ok:
            vs.start(empty_cache=True)
            res = cold_pass(vs, vs_paths)
            res["cache_files"] = len(vs.cache_files())
            vs.stop()
            out["cold"]["vsearch"].append(res)
            log(f"  cold vsearch: p50 {res['p50']:.1f} ms p95 {res['p95']:.1f} ms, {res['cpu_s']:.2f} CPU-s, "
                f"{res['per_cpu_s']:.1f} thumbs/CPU-s, {res['cache_files']} files in the cache")
        ngx.start()
        res = cold_pass(ngx, ng_paths)
        ngx.stop()
        out["cold"]["nginx"].append(res)
        log(f"  first pass nginx: p50 {res['p50']:.2f} ms p95 {res['p95']:.2f} ms, {res['cpu_s']:.2f} CPU-s")

    # same bytes? (vsearch route vs the batch file nginx serves)
    if vs_ok:
        vh = out["cold"]["vsearch"][0]["hashes"]
        nh = out["cold"]["nginx"][0]["hashes"]
        same = sum(vh[a] == nh[b] for a, b in zip(vs_paths, ng_paths))
        out["identical_bytes"] = same
        out["route_bytes_mean"] = out["cold"]["vsearch"][0]["bytes_mean"]
        out["nginx_bytes_mean"] = out["cold"]["nginx"][0]["bytes_mean"]
        log(f"  identical bytes route vs batch file: {same}/{len(names)}")

    # warm and 304: wrk, interleaved vsearch / nginx, 2 s warm-up before each
    scripts = {}
    for tag, paths in (("vsearch", vs_paths), ("nginx", ng_paths)):
        scripts[tag] = os.path.join(WORK, f"wrk-{tag}.lua")
        lua_script(scripts[tag], paths)
    if vs_ok:
        vs.start(empty_cache=False)  # the cache the last cold pass filled
        etags = cold_pass(vs, vs_paths)["etags"]
        if not all(etags.values()):
            log("  WARNING: vsearch sends no ETag on some thumbnails: no 304 run")
            vs_304 = None
        else:
            vs_304 = os.path.join(WORK, "wrk-vsearch-304.lua")
            lua_script(vs_304, vs_paths, etags)
            conn = http.client.HTTPConnection("127.0.0.1", vs.port)
            out["vsearch_headers"] = {k: get(conn, vs_paths[0])[1].get(k) for k in HEADERS}
            st, h, _ = get(conn, vs_paths[0], {"If-None-Match": etags[vs_paths[0]]})
            if st != 304:
                log(f"  WARNING: vsearch answered {st} to If-None-Match")
                vs_304 = None
            conn.close()
    ngx.start()
    ng_etags = cold_pass(ngx, ng_paths)["etags"]
    ng_304 = os.path.join(WORK, "wrk-nginx-304.lua")
    lua_script(ng_304, ng_paths, ng_etags)
    conn = http.client.HTTPConnection("127.0.0.1", ngx.port)
    out["nginx_headers"] = {k: get(conn, ng_paths[0])[1].get(k) for k in HEADERS}
    st, h, _ = get(conn, ng_paths[0], {"If-None-Match": ng_etags[ng_paths[0]]})
    assert st == 304, st
    conn.close()
    health = os.path.join(WORK, "wrk-vsearch-health.lua")
    lua_script(health, ["/health"])
    runs = [("warm", "vsearch", vs, scripts["vsearch"]), ("warm", "nginx", ngx, scripts["nginx"]),
            ("304", "nginx", ngx, ng_304), ("floor", "vsearch", vs, health)]
    if vs_ok:
        if vs_304:
            runs.insert(2, ("304", "vsearch", vs, vs_304))
    else:
        runs = [r for r in runs if r[1] != "vsearch"]
    for _, _, srv, script in runs:
        wrk_run(srv, script, args.warmup)
    for r in range(args.reps):
        for kind, tag, srv, script in runs:
            res = wrk_run(srv, script, args.duration)
            out[kind][tag].append(res)
            log(f"  {kind:4s} {tag:7s}: {res['rps']:8.0f} req/s  p50 {res['p50']:.2f} ms  p99 {res['p99']:.2f} ms  "
                f"{res['cpu_per_10k']:.2f} CPU-s/10k  {res['bytes_per_req']:.0f} B/req  "
                f"server core {res['server_busy']:.0%} busy, wrk {res['wrk_busy']:.0%}")
    if vs_ok and args.profile and vs_304:
        out["profile"] = profile_run(vs, vs_304, args.duration)
    if vs_ok:
        with open(f"/proc/{vs.proc.pid}/status") as f:
            out["vsearch_vmhwm_mib"] = next(int(x.split()[1]) for x in f if x.startswith("VmHWM")) / 1024
    vs.stop()
    ngx.stop()
    return out


PROFILE_FRAMES = [  # (label, regex on a symbol): inclusive shares reported by --profile
    ("ImageRoutes.respond (lookup, stat, ETag, If-None-Match)", r"ImageRoutes.*respond2to"),
    ("  catalog read per request (GRDB DatabasePool.read: the snapshot's version check)", r"GRDB12DatabasePoolC4read"),
    ("  ImageRoutes.matches (If-None-Match comparison)", r"ImageRoutes.*matches"),
    ("request log (RequestLogMiddleware)", r"RequestLogMiddleware.*handle"),
    ("  StreamLogHandler.log (formatting the log line)", r"StreamLogHandlerV3log"),
    ("router (Hummingbird RouterTrie.resolve)", r"RouterTrieC7resolve"),
    ("write(2) (responses and log lines)", r"^__GI___libc_write$|^__libc_write$"),
    ("swift_task_switch (executor hops)", r"^swift_task_switch$"),
]


def profile_run(server, script, duration):
    """perf record -g of the server during one wrk run; shares by library (self) and of PROFILE_FRAMES (inclusive)."""
    data = os.path.join(WORK, "perf-304.data")
    wrk = subprocess.Popen(["taskset", "-c", str(CLIENT_CORE), "wrk", "-t1", "-c16", f"-d{duration + 2}s", "-s", script,
                            server.base + "/"], stdout=subprocess.DEVNULL)
    time.sleep(1)
    subprocess.run(["perf", "record", "-F", "1999", "-g", "-p", str(server.proc.pid), "-o", data, "--", "sleep",
                    str(duration)], check=True, capture_output=True)
    wrk.wait()

    def report(*extra):
        return subprocess.run(["perf", "report", "-i", data, "--stdio", "-g", "none", *extra],
                              capture_output=True, text=True).stdout
    dsos = []
    for line in report("--no-children", "--sort", "dso").splitlines():
        m = re.match(r"\s+([\d.]+)%\s+(\S+)", line)
        if m:
            dsos.append((m.group(2), float(m.group(1))))
    inclusive = {}
    for line in report("--children", "--sort", "symbol").splitlines():
        m = re.match(r"\s+([\d.]+)%\s+[\d.]+%\s+\[[.k]\]\s+(\S+)", line)
        if m:
            for label, rx in PROFILE_FRAMES:
                if re.search(rx, m.group(2)):
                    inclusive[label] = max(inclusive.get(label, 0), float(m.group(1)))
    top = []
    for line in report("--no-children", "--sort", "symbol").splitlines():
        m = re.match(r"\s+([\d.]+)%\s+\[[.k]\]\s+(.+?)\s*$", re.sub(r"(\s+-)+\s*$", "", line))
        if m and len(top) < 8:
            top.append((m.group(2)[:90], float(m.group(1))))
    log("  profile (304 run): " + ", ".join(f"{d} {v:.0f}%" for d, v in dsos[:6]))
    return {"dso": dsos[:8], "top": top, "frames": [(label, inclusive.get(label)) for label, _ in PROFILE_FRAMES]}


# ------------------------------------------------------------------ part 2: TTFR without a browser
def upload_then_thumb(port, body, ctype):
    """POST /uploadsearch, then GET the first result's thumbnail, on a fresh connection: times in ms."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    t0 = time.perf_counter()
    conn.request("POST", "/uploadsearch?limit=24", body=body, headers={"Content-Type": ctype})
    r = conn.getresponse()
    data = r.read()
    t1 = time.perf_counter()
    if r.status != 200:
        raise RuntimeError(f"/uploadsearch: {r.status} {data[:200]!r}")
    doc = json.loads(data)
    first = doc["result"][0]["im_name"]
    st, h, img = get(conn, f"/images/{urllib.parse.quote(first)}?size={SIZE}")
    t2 = time.perf_counter()
    conn.close()
    if st != 200:
        raise RuntimeError(f"thumbnail of {first}: {st}")
    return {"search_ms": (t1 - t0) * 1000, "thumb_ms": (t2 - t1) * 1000, "total_ms": (t2 - t0) * 1000,
            "first": first, "upload_bytes": len(body), "thumb_bytes": len(img)}


def part_ttfr_server(args, vsearch):
    out = {"prepare": [], "runs": {}}
    for r in range(args.ttfr_reps):
        cpu, wall = timed_cmd(["taskset", "-c", str(CLIENT_CORE), vsearch, "prepare", PHOTO, PHOTO512])
        out["prepare"].append({"cpu_s": cpu, "wall_s": wall})
    log(f"  vsearch prepare 12 MP -> 512 px: {med(x['wall_s'] for x in out['prepare']) * 1000:.0f} ms wall, "
        f"{med(x['cpu_s'] for x in out['prepare']) * 1000:.0f} ms CPU")
    vs = VSearch(vsearch, "ttfr")
    bodies = {"12mp": multipart(PHOTO), "512": multipart(PHOTO512)}
    pin_self(CLIENT_CORE)
    try:
        for r in range(args.ttfr_reps):
            for tag, (body, ctype) in bodies.items():
                vs.start(empty_cache=True)
                conn = http.client.HTTPConnection("127.0.0.1", vs.port)
                get(conn, "/health")
                conn.close()
                for state in ("cold", "warm"):
                    cpu0 = vs.cpu()
                    res = upload_then_thumb(vs.port, body, ctype)
                    res["server_cpu_s"] = vs.cpu() - cpu0
                    out["runs"].setdefault(f"{tag}|{state}", []).append(res)
                    log(f"  {tag:4s} {state}: search {res['search_ms']:.0f} ms + thumb {res['thumb_ms']:.1f} ms "
                        f"= {res['total_ms']:.0f} ms (first {res['first']}, server {res['server_cpu_s'] * 1000:.0f} ms CPU)")
                vs.stop()
    finally:
        unpin_self()
    return out


# ------------------------------------------------------------------ part 3: TTFR in the browser
BROWSER_JS_SETUP = r"""
const input = document.querySelector('#upload-input');
const results = document.querySelector('#results');
const m = window.__ttfr = {oldReqid: results ? results.dataset.reqid || null : null, uploads: []};
// what the page uploads (fetch or XHR with a FormData / Blob body)
const sizeOf = (b) => {
  if (!b) return null;
  if (b instanceof Blob) return b.size;
  if (b instanceof FormData) { let s = 0; for (const [, v] of b) s += (v instanceof Blob) ? v.size : String(v).length; return s; }
  if (typeof b === 'string') return b.length;
  if (b.byteLength !== undefined) return b.byteLength;
  return null;
};
const of = window.fetch;
window.fetch = function (res, init) {
  const url = (typeof res === 'string') ? res : (res && res.url) || String(res);
  if (init && init.body) m.uploads.push({url, bytes: sizeOf(init.body), t: performance.now()});
  return of.apply(this, arguments);
};
const os = XMLHttpRequest.prototype.send, oo = XMLHttpRequest.prototype.open;
XMLHttpRequest.prototype.open = function (method, url) { this.__url = url; return oo.apply(this, arguments); };
XMLHttpRequest.prototype.send = function (body) {
  if (body) m.uploads.push({url: this.__url, bytes: sizeOf(body), t: performance.now()});
  return os.apply(this, arguments);
};
input.addEventListener('change', () => {
  m.tChange = performance.now();
  const tick = () => {
    const r = document.querySelector('#results');
    if (r && r.dataset.state === 'error') { m.error = (document.querySelector('#error') || {}).textContent || 'error'; m.done = true; return; }
    if (r && r.dataset.state === 'ready' && r.dataset.reqid && r.dataset.reqid !== m.oldReqid) {
      if (m.tReady === undefined) m.tReady = performance.now();
      const img = r.querySelector('.result img.result-image');
      if (img && img.complete && img.naturalWidth > 0) {
        m.tFirst = performance.now();
        m.src = img.currentSrc || img.src;
        m.imName = img.closest('.result').dataset.imName;
        m.nResults = r.querySelectorAll('.result').length;
        m.naturalWidth = img.naturalWidth; m.naturalHeight = img.naturalHeight;
        m.done = true;
        return;
      }
    }
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
});
return m.oldReqid;
"""

BROWSER_JS_RESULT = r"""
const m = window.__ttfr;
const entries = performance.getEntriesByType('resource');
const up = entries.filter(e => e.name.includes('/uploadsearch')).pop();
const img = m.src ? entries.filter(e => e.name === m.src).pop() : null;
const t = (e) => e ? {start: e.startTime, requestStart: e.requestStart, responseStart: e.responseStart,
                      end: e.responseEnd, transfer: e.transferSize, body: e.encodedBodySize} : null;
return {tChange: m.tChange, tReady: m.tReady, tFirst: m.tFirst, src: m.src, imName: m.imName,
        nResults: m.nResults, naturalWidth: m.naturalWidth, naturalHeight: m.naturalHeight, error: m.error,
        uploads: m.uploads, upload: t(up), image: t(img),
        imagesRequested: entries.filter(e => e.name.includes('/images/') && e.startTime >= m.tChange).length,
        sizes: [...new Set(entries.filter(e => e.name.includes('/images/')).map(e => new URL(e.name).searchParams.get('size')))]};
"""


def browser_worker(base, photo, timeout):
    """Runs inside the venv (Selenium): one measurement in a fresh headless Chromium; prints JSON."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    opts = webdriver.ChromeOptions()
    opts.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,1000",
              "--no-first-run", "--disable-extensions", "--disable-background-networking"):
        opts.add_argument(a)
    profile = tempfile.mkdtemp(prefix="webpage-chrome-")
    opts.add_argument(f"--user-data-dir={profile}")
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=opts)
    try:
        t_nav = time.perf_counter()
        driver.get(base + "/")
        # the catalog browser first: wait until its page and pictures are there (or 20 s)
        def browsed(d):
            return d.execute_script(
                "const r = document.querySelector('#results');"
                "if (!r || !document.querySelector('#upload-input')) return false;"
                "if (r.dataset.state !== 'ready' && r.dataset.state !== 'idle') return false;"
                "return [...r.querySelectorAll('img')].every(i => i.complete);")
        try:
            WebDriverWait(driver, 20, poll_frequency=0.05).until(browsed)
        except Exception:
            pass
        page_ready_s = time.perf_counter() - t_nav
        time.sleep(0.3)
        driver.execute_script(BROWSER_JS_SETUP)
        driver.find_element(By.CSS_SELECTOR, "#upload-input").send_keys(photo)
        WebDriverWait(driver, timeout, poll_frequency=0.02).until(
            lambda d: d.execute_script("return !!window.__ttfr.done"))
        res = driver.execute_script(BROWSER_JS_RESULT)
        res["page_ready_s"] = page_ready_s
        res["chromium"] = driver.capabilities.get("browserVersion")
        print(json.dumps(res))
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def part_ttfr_browser(args, vsearch):
    out = {"runs": {}}
    vs = VSearch(vsearch, "browser")
    py = os.path.join(VENV, "bin", "python")
    for r in range(args.ttfr_reps):
        vs.start(empty_cache=True)
        for state in ("cold", "warm"):
            before = len(vs.cache_files())
            cpu0 = vs.cpu()
            cmd = ["taskset", "-c", str(CLIENT_CORE), py, os.path.abspath(__file__), "--_browser", vs.base, PHOTO]
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=180)
            if p.returncode != 0:
                raise RuntimeError(f"browser run failed:\n{p.stderr[-3000:]}")
            res = json.loads(p.stdout.strip().splitlines()[-1])
            res["server_cpu_s"] = vs.cpu() - cpu0
            res["cache_files_before_upload"] = before
            if res.get("error") or res.get("tFirst") is None:
                raise RuntimeError(f"the page showed an error: {res.get('error')}")
            res["ttfr_ms"] = res["tFirst"] - res["tChange"]
            res["ready_ms"] = res["tReady"] - res["tChange"]
            if res.get("upload"):
                res["resize_ms"] = res["upload"]["start"] - res["tChange"]
                res["upload_rt_ms"] = res["upload"]["end"] - res["upload"]["start"]
            if res.get("image"):
                res["picture_req_ms"] = res["image"]["end"] - res["image"]["start"]
            out["runs"].setdefault(state, []).append(res)
            ub = [u["bytes"] for u in res.get("uploads", []) if "uploadsearch" in (u.get("url") or "")]
            log(f"  browser {state}: first picture {res['ttfr_ms']:.0f} ms after change (results {res['ready_ms']:.0f} ms; "
                f"in-browser resize {res.get('resize_ms', float('nan')):.0f} ms; upload {ub} B; first {res.get('imName')}, "
                f"its request {res.get('picture_req_ms', float('nan')):.0f} ms; {res.get('imagesRequested')} pictures loaded by then)")
        vs.stop()
    return out


# ------------------------------------------------------------------ report
def f1(x, d=1):
    return "–" if x is None else f"{x:.{d}f}"


def runs(rs, key, d=0):
    return ", ".join(f"{x[key]:.{d}f}" for x in rs)


def ratio(a, b, d=2):
    return "–" if a is None or b is None or b == 0 else f"{a / b:.{d}f}×"


def build_report(res, args):
    L = [SECTION, ""]
    L.append(f"Run {res['date']} ({res['started_utc']} UTC) by `{res['command']}`, {res['wall_min']:.1f} min.")
    L.append("")
    L.append(f"- Machine: {res['machine']}; load average at start {res['load_start']}, at end {res['load_end']} "
             "(shared machine: builds may run on it; compare CPU seconds and the ratios of peers measured in the same run)")
    L.append(f"- vsearch: `{res['vsearch']}` ({res['vsearch_version']}, binary of {res['vsearch_mtime']}), commit {res['commit']}")
    L.append(f"- peer: {res.get('nginx_version')} (`worker_processes 1`, `sendfile on`, `tcp_nopush on`, access log on "
             "like vsearch's request log, `keepalive_requests 1000000`, `Cache-Control`/`nosniff` headers added); "
             f"wrk {res.get('wrk_version', '')}" + (f"; {res['chromium']}" if res.get("chromium") else ""))
    L.append(f"- Images: {res['images']['n']} JPEGs made with Pillow from the corpus (seed {SEED}: crop 80–100% of each side, "
             f"mirror half, gain 0.9–1.1, Lanczos upscale to a longer side of {SIDES[0]}–{SIDES[1]} px, gaussian luminance grain σ={NOISE_SIGMA:g}, "
             f"quality {QUALITY}), {res['images']['mp']:.0f} MP, {res['images']['mb']:.0f} MB in all. Upload: "
             f"`{PHOTO_SOURCE}` cropped to 3:4 and upscaled to {PHOTO_SIZE[0]}×{PHOTO_SIZE[1]} (12 MP), grain, quality {QUALITY}, "
             f"{res['images']['photo_bytes'] / 1e6:.1f} MB; 512 px version by `vsearch prepare` "
             f"({res['images']['photo512_bytes'] / 1e3:.0f} kB).")
    L.append(f"- Pinning: server (vsearch or nginx) `taskset -c {SERVER_CORE}`; clients (Python, wrk, Chromium) `taskset -c {CLIENT_CORE}`. "
             f"Medians of {args.reps} runs (thumbnails) and {args.ttfr_reps} (time to first result), runs interleaved.")
    if res.get("thumbnail_cache"):
        L.append(f"- vsearch thumbnail cache: {res['thumbnail_cache']}")
    if res.get("web_root"):
        L.append(f"- Page: {res['web_root']}.")
    L.append("")
    t = res.get("thumbs")
    if t:
        L.append("### Thumbnail route against nginx serving the same thumbnails")
        L.append("")
        cv, cn, b = t["cold"]["vsearch"], t["cold"]["nginx"], t["batch"]
        L.append(f"Cold: one client, sequential, one keep-alive connection, `GET /images/NAME?size={SIZE}` for each of the "
                 f"{res['images']['n']} images once, thumbnail cache emptied and server restarted before each pass "
                 "(sources in the page cache). nginx: the same pass over its files (pre-made by the batch job) right after a start. "
                 f"Batch: `vsearch thumbs SRC OUT --sizes {SIZE} --jobs 1 --force` on the server's core (CPU of the process, start-up included).")
        L.append("")
        L.append("| cold pass | p50 ms | p95 ms | max ms | server CPU-s | thumbnails / CPU-s | CPU ms / image |")
        L.append("|---|---:|---:|---:|---:|---:|---:|")
        if cv:
            cpu = med(x["cpu_s"] for x in cv)
            L.append(f"| vsearch route (makes the thumbnail) | {f1(med(x['p50'] for x in cv))} | {f1(med(x['p95'] for x in cv))} | "
                     f"{f1(med(x['max'] for x in cv))} | {f1(cpu, 2)} | {f1(med(x['per_cpu_s'] for x in cv))} | "
                     f"{f1(cpu / res['images']['n'] * 1000)} |")
        bc = med(x["cpu_s"] for x in b)
        L.append(f"| `vsearch thumbs --sizes {SIZE} --jobs 1` (batch) | – | – | – | {f1(bc, 2)} | "
                 f"{f1(med(x['per_cpu_s'] for x in b))} | {f1(bc / res['images']['n'] * 1000)} |")
        L.append(f"| nginx, first pass over pre-made files | {f1(med(x['p50'] for x in cn), 2)} | {f1(med(x['p95'] for x in cn), 2)} | "
                 f"{f1(med(x['max'] for x in cn), 2)} | {f1(med(x['cpu_s'] for x in cn), 2)} | – | "
                 f"{f1(med(x['cpu_s'] for x in cn) / res['images']['n'] * 1000, 2)} |")
        if cv:
            L.append("")
            L.append(f"Route/batch CPU per thumbnail: {ratio(med(x['cpu_s'] for x in cv), bc)}; cold route p50 / nginx p50: "
                     f"{ratio(med(x['p50'] for x in cv), med(x['p50'] for x in cn), 0)}. Files in the cache after a pass: "
                     f"{med(x['cache_files'] for x in cv):.0f}. Bytes: route {t['route_bytes_mean'] / 1e3:.1f} kB a thumbnail on average, "
                     f"batch file {t['nginx_bytes_mean'] / 1e3:.1f} kB; identical bytes in {t['identical_bytes']}/{res['images']['n']}.")
        L.append("")
        L.append(f"Warm: `wrk -t1 -c16 -d{args.duration}s --latency` with a Lua script cycling through the {res['images']['n']} URLs "
                 f"(vsearch `/images/NAME?size={SIZE}`, cache full; nginx `/NAME_thumb_WxH.jpg`), {args.warmup} s warm-up per "
                 "configuration; 304: the same with `If-None-Match` set to each URL's ETag (fetched first). Server CPU from "
                 "/proc/PID/task/*/schedstat (nginx: master + worker) over each run; `GET /health` (a small JSON answer, the cheapest "
                 "request vsearch has) with the same wrk settings is vsearch's per-request floor; busy = CPU-s / run time, for the server's core and for wrk's "
                 "(a server near 100% is the limit; wrk near 100% means the load generator is).")
        L.append("")
        L.append("| run | server | req/s | p50 ms | p99 ms | CPU-s / 10k req | bytes / response | server CPU busy | wrk CPU busy | req/s of the runs |")
        L.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
        for kind, label in (("warm", "200, warm"), ("304", "304"), ("floor", "`GET /health` (reference)")):
            for tag in ("vsearch", "nginx"):
                rs = t[kind].get(tag)
                if not rs:
                    continue
                L.append(f"| {label} | {tag} | {med(x['rps'] for x in rs):.0f} | {f1(med(x['p50'] for x in rs), 2)} | "
                         f"{f1(med(x['p99'] for x in rs), 2)} | {f1(med(x['cpu_per_10k'] for x in rs), 2)} | "
                         f"{med(x['bytes_per_req'] for x in rs):.0f} | {med(x['server_busy'] for x in rs):.0%} | "
                         f"{med(x['wrk_busy'] for x in rs):.0%} | {runs(rs, 'rps')} |")
        L.append("")
        ratios = []
        for kind, label in (("warm", "200"), ("304", "304")):
            v, n = t[kind]["vsearch"], t[kind]["nginx"]
            if v and n:
                ratios.append(f"{label}: req/s {ratio(med(x['rps'] for x in v), med(x['rps'] for x in n))}, "
                              f"p50 {ratio(med(x['p50'] for x in v), med(x['p50'] for x in n))}, "
                              f"p99 {ratio(med(x['p99'] for x in v), med(x['p99'] for x in n))}, "
                              f"CPU per request {ratio(med(x['cpu_per_10k'] for x in v), med(x['cpu_per_10k'] for x in n))}")
        if ratios:
            L.append("vsearch / nginx — " + "; ".join(ratios) + ".")
            L.append("")
        if t.get("profile"):
            pr = t["profile"]
            L.append(f"Where vsearch's CPU goes in a 304 run (`--profile`: `perf record -F 1999 -g` of the server over one "
                     f"{args.duration} s run; share of the samples). By library, self time: "
                     + ", ".join(f"{d} {v:.0f}%" for d, v in pr["dso"][:6]) + ". Inclusive: "
                     + "; ".join(f"{label.strip()} {v:.1f}%" for label, v in pr["frames"] if v is not None)
                     + " (an async function's awaited calls run as other jobs, so its inclusive share counts its own part only). "
                     "Top symbols, self: " + ", ".join(f"`{d}` {v:.1f}%" for d, v in pr.get("top", [])) + ".")
            L.append("")
        if t.get("vsearch_headers"):
            L.append(f"Headers: vsearch {t['vsearch_headers']}; nginx {t['nginx_headers']}. "
                     f"vsearch VmHWM after the runs: {t.get('vsearch_vmhwm_mib', 0):.0f} MiB.")
            L.append("")
    s = res.get("ttfr_server")
    if s:
        L.append("### Time to first result picture, without a browser")
        L.append("")
        L.append(f"Python `http.client` on core {CLIENT_CORE}, a new connection per measurement: `POST /uploadsearch?limit=24` "
                 f"(multipart field `image`), then `GET /images/FIRST?size={SIZE}` for the first result. Cold: server restarted "
                 "with an empty thumbnail cache; warm: the next upload on the same server (the thumbnail is cached). "
                 f"The 512 px file is made by `vsearch prepare` (fit 512, JPEG quality 97), "
                 f"median {med(x['wall_s'] for x in s['prepare']) * 1000:.0f} ms wall / "
                 f"{med(x['cpu_s'] for x in s['prepare']) * 1000:.0f} ms CPU for the 12 MP file (process start-up included), not in the totals.")
        L.append("")
        L.append("| upload | bytes sent | cache | search ms | thumbnail ms | total ms | server CPU ms | first result | totals of the runs |")
        L.append("|---|---:|---|---:|---:|---:|---:|---|---|")
        for tag, label in (("12mp", "12 MP as is"), ("512", "512 px (prepared)")):
            for state in ("cold", "warm"):
                rs = s["runs"].get(f"{tag}|{state}", [])
                if rs:
                    L.append(f"| {label} | {rs[0]['upload_bytes']:,} | {state} | {f1(med(x['search_ms'] for x in rs))} | "
                             f"{f1(med(x['thumb_ms'] for x in rs))} | {f1(med(x['total_ms'] for x in rs))} | "
                             f"{f1(med(x['server_cpu_s'] for x in rs) * 1000, 0)} | {rs[0]['first']} | "
                             f"{runs(rs, 'total_ms')} |")
        a, b2 = s["runs"].get("12mp|cold"), s["runs"].get("512|cold")
        if a and b2:
            L.append("")
            L.append(f"12 MP / 512 px: bytes {a[0]['upload_bytes'] / b2[0]['upload_bytes']:.0f}×, server CPU per upload "
                     f"{ratio(med(x['server_cpu_s'] for x in a), med(x['server_cpu_s'] for x in b2), 1)}, "
                     f"total cold {ratio(med(x['total_ms'] for x in a), med(x['total_ms'] for x in b2), 1)}.")
        L.append("")
    br = res.get("ttfr_browser")
    if br:
        L.append("### Time to first result picture in the browser (the page)")
        L.append("")
        L.append(f"Headless Chromium ({res.get('chromium', '')}) driven by Selenium, a fresh profile per measurement, on core "
                 f"{CLIENT_CORE}: open `/`, wait for the catalog browser and its pictures, add a `change` listener to "
                 "`#upload-input` and wrap `fetch`/`XMLHttpRequest.send` (to see what is uploaded), `send_keys` the 12 MP file; "
                 "time (`performance.now()`) from `change` to the first `.result img.result-image` with `complete && "
                 "naturalWidth > 0` once `#results` is `ready` with a new reqid, polled every animation frame (≤ 16.7 ms late). "
                 "Resize = from `change` to the start of the `/uploadsearch` request; upload round trip and the first picture's "
                 "request = start to end of those requests (Resource Timing); pictures loaded by then = thumbnails whose response "
                 "had ended when the first picture was complete; server CPU = vsearch's over the whole measurement (page load included).")
        L.append("")
        L.append("| cache | first picture ms | results ready ms | in-browser resize ms | upload round trip ms | first picture's request ms | bytes uploaded | pictures loaded by then | server CPU ms | first pictures of the runs |")
        L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
        for state in ("cold", "warm"):
            rs = br["runs"].get(state, [])
            if rs:
                ub = [u["bytes"] for u in rs[0].get("uploads", []) if "uploadsearch" in (u.get("url") or "")]
                L.append(f"| {state} | {f1(med(x['ttfr_ms'] for x in rs), 0)} | {f1(med(x['ready_ms'] for x in rs), 0)} | "
                         f"{f1(med(x.get('resize_ms') for x in rs), 0)} | {f1(med(x.get('upload_rt_ms') for x in rs), 0)} | "
                         f"{f1(med(x.get('picture_req_ms') for x in rs), 0)} | "
                         f"{ub[0] if ub else '?'} | {med(x.get('imagesRequested') for x in rs):.0f} | "
                         f"{f1(med(x['server_cpu_s'] for x in rs) * 1000, 0)} | {runs(rs, 'ttfr_ms')} |")
        L.append("")
        first = br["runs"].get("cold", [{}])[0]
        L.append(f"First result `{first.get('imName')}` (`{urllib.parse.urlsplit(first.get('src', '')).path}?"
                 f"{urllib.parse.urlsplit(first.get('src', '')).query}`); thumbnail sizes the page asked for: "
                 f"{', '.join(first.get('sizes') or [])} (window 1280×1000 at DPR 1: the grid's `srcset` picks 400w; a phone at DPR 2+ "
                 "would ask for the 800 px one).")
        L.append("")
    if res.get("skipped"):
        L.append("Not measured in this run: " + "; ".join(res["skipped"]) + ".")
        L.append("")
    if res.get("falls_short"):
        L.append("**What falls short.** " + " ".join(res["falls_short"]))
        L.append("")
    return "\n".join(L) + "\n"


def falls_short(res):
    """Data-driven notes for the report's 'what falls short' paragraph."""
    notes = []
    t = res.get("thumbs")
    if t and t["warm"]["vsearch"] and t["warm"]["nginx"]:
        v, n = med(x["rps"] for x in t["warm"]["vsearch"]), med(x["rps"] for x in t["warm"]["nginx"])
        notes.append(f"Warm, vsearch serves {v / n:.2f}× nginx's requests per second "
                     f"({med(x['cpu_per_10k'] for x in t['warm']['vsearch']) / med(x['cpu_per_10k'] for x in t['warm']['nginx']):.1f}× "
                     "its CPU per request).")
        fl = t["floor"]["vsearch"]
        if fl:
            h = med(x["cpu_per_10k"] for x in fl)
            w = med(x["cpu_per_10k"] for x in t["warm"]["vsearch"])
            notes.append(f"The route itself is not what costs: `GET /health` takes {h * 100:.0f} µs of CPU a request, "
                         f"a warm thumbnail {w * 100:.0f} µs, nginx {med(x['cpu_per_10k'] for x in t['warm']['nginx']) * 100:.0f} µs; "
                         "the gap is the server's per-request floor (HTTP stack, task hops, request log).")
        if t["304"]["vsearch"] and t["304"]["nginx"]:
            v3, n3 = med(x["rps"] for x in t["304"]["vsearch"]), med(x["rps"] for x in t["304"]["nginx"])
            notes.append(f"304s: {v3 / n3:.2f}× nginx.")
    if t and t["cold"]["vsearch"]:
        cv = med(x["cpu_s"] for x in t["cold"]["vsearch"])
        bc = med(x["cpu_s"] for x in t["batch"])
        if cv > 1.2 * bc:
            notes.append(f"The route spends {cv / bc:.2f}× the batch job's CPU per 400 px thumbnail.")
        if t.get("identical_bytes") is not None and t["identical_bytes"] < res["images"]["n"]:
            notes.append(f"Only {t['identical_bytes']}/{res['images']['n']} route thumbnails are byte-identical to the "
                         "batch job's files, so the peer does not serve exactly the same bytes for the others.")
    br = res.get("ttfr_browser")
    if br and br["runs"].get("cold"):
        c, w = br["runs"]["cold"], br["runs"].get("warm") or br["runs"]["cold"]
        after_c = med(x["ttfr_ms"] - x["ready_ms"] for x in c)
        after_w = med(x["ttfr_ms"] - x["ready_ms"] for x in w)
        resize = med(x.get("resize_ms") for x in c + w)
        total = med(x["ttfr_ms"] for x in c + w)
        if after_c > 2 * after_w + 50:
            notes.append(f"In the browser the cold first picture comes {after_c:.0f} ms after the results (warm: {after_w:.0f} ms): "
                         "the page asks for the first row's pictures at once and the server, on one core, makes them "
                         "concurrently, so the first one is not made first.")
        if resize is not None and total:
            notes.append(f"In the browser most of the time to first result is the page's own work on the 12 MP file: decoding "
                         f"and resizing it to 512 px takes {resize:.0f} ms of the {total:.0f} ms (medians over cold and warm); "
                         f"the server's part (search {med(x.get('upload_rt_ms') for x in c + w):.0f} ms, first picture "
                         f"{med(x.get('picture_req_ms') for x in c):.0f} ms cold, {med(x.get('picture_req_ms') for x in w):.0f} ms "
                         f"warm) is small beside it, and cold and warm differ by less than the resize's own spread from one "
                         f"Chromium to the next ({min(x.get('resize_ms') or 0 for x in c + w):.0f}–"
                         f"{max(x.get('resize_ms') or 0 for x in c + w):.0f} ms). Headless Chromium on one shared core of a "
                         "server CPU is no phone: a phone's decode of a 12 MP JPEG is likely slower.")
    if t and t["cold"]["vsearch"]:
        ms = med(x["cpu_s"] for x in t["cold"]["vsearch"]) / res["images"]["n"] * 1000
        notes.append(f"Cold, each thumbnail costs {ms:.0f} ms of CPU (sources of 1600–3000 px): a page of 24 results never "
                     f"seen before costs ~{24 * ms / 1000:.1f} CPU-s to show, on a server making them for every visitor at once; "
                     "`vsearch thumbs` ahead of time (or a first visit) removes it.")
    s12, s512 = (res.get("ttfr_server") or {}).get("runs", {}).get("12mp|cold"), (res.get("ttfr_server") or {}).get("runs", {}).get("512|cold")
    if s12 and s512:
        notes.append(f"Uploading the 12 MP file as is sends {s12[0]['upload_bytes'] / s512[0]['upload_bytes']:.0f}× the bytes and "
                     f"costs the server {med(x['server_cpu_s'] for x in s12) / max(med(x['server_cpu_s'] for x in s512), 1e-9):.1f}× "
                     "the CPU of the 512 px upload (decoding 12 MP, even at a reduced DCT scale).")
        if br and br["runs"].get("cold"):
            allb = br["runs"]["cold"] + (br["runs"].get("warm") or [])
            resize = med(x.get("resize_ms") for x in allb)
            saved_server = med(x["search_ms"] for x in s12) - med(x["search_ms"] for x in s512)
            ub = [u["bytes"] for u in allb[0].get("uploads", []) if "uploadsearch" in (u.get("url") or "")]
            page_bytes = ub[0] if ub else s512[0]["upload_bytes"]
            net = resize - saved_server
            if resize and net > 0:
                mbit = (s12[0]["upload_bytes"] - page_bytes) * 8 / 1e6 / (net / 1000)
                notes.append(f"On loopback the resize does not pay: uploading the 12 MP file as is shows the first picture in "
                             f"{med(x['total_ms'] for x in s12):.0f} ms (cold, no browser), while the page spends {resize:.0f} ms "
                             f"resizing before it sends anything. The resize costs {net:.0f} ms net of the {saved_server:.0f} ms "
                             f"of server time it saves and spares {(s12[0]['upload_bytes'] - page_bytes) / 1e6:.1f} MB: it wins "
                             f"below ~{mbit:.0f} Mbit/s of uplink, i.e. on most mobile and home uplinks, so resizing in the browser "
                             "stays the right default (an estimate from these figures: nothing here measures a real uplink).")
    if res.get("web_root"):
        notes.append("This binary's embedded page answered 404 (`GET /`), although the server prints the page's "
                     "address: the page had to be served with `--web-root` from the source folder.")
    load = float(res["load_start"].split()[0])
    contended = [x for kind in ("warm", "304") for tag in ("vsearch", "nginx") for x in (t or {}).get(kind, {}).get(tag, [])
                 if x["server_busy"] < 0.85 and x["wrk_busy"] < 0.85]
    if contended:
        notes.append(f"Other work shared the machine during {len(contended)} of the wrk runs (neither the server's core nor "
                     "wrk's was busy ≥ 85%, so the scheduler, not either program, set the pace): their req/s and latencies "
                     "understate what the server can do (nginx most, since it needs the least CPU); CPU per request is the "
                     "figure to compare.")
    elif load > 1.5:
        notes.append(f"The machine was busy (load average {load:.1f} at the start on 2 cores, {res.get('load_end', '?').split()[0]} "
                     "at the end with this benchmark's own server and clients): "
                     "req/s and latency tails (p95/p99) depend on the scheduler more than on the servers; the CPU seconds per "
                     "request and per thumbnail are the figures to compare.")
    notes.append("One machine, loopback, 2 shared cores: no network latency or bandwidth limit is modelled, so the bytes the "
                 "512 px resize saves show up only as server CPU and local copy time here; on a phone uplink they are most of "
                 "the time to first result.")
    return notes


# ------------------------------------------------------------------ main
def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="1 run each, 4 s wrk runs, 2 TTFR runs")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--ttfr-reps", type=int, default=5)
    ap.add_argument("--duration", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--only", default="thumbs,ttfr-server,ttfr-browser")
    ap.add_argument("--vsearch", help="this binary (default: the newer of .build-perf and .build release binaries)")
    ap.add_argument("--record", action="store_true", help="replace this benchmark's section of bench/RESULTS.md")
    ap.add_argument("--profile", action="store_true",
                    help="also `perf record -g` vsearch during one more 304 run and report where its CPU goes")
    ap.add_argument("--_browser", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.profile and not shutil.which("perf"):
        apt_install("linux-perf")
    if args._browser:
        browser_worker(args._browser[0], args._browser[1], 120)
        return
    if args.quick:
        args.reps, args.ttfr_reps, args.duration, args.warmup = 1, 2, 4, 1
    only = set(args.only.split(","))
    started = time.time()
    os.makedirs(WORK, exist_ok=True)
    ensure_tools("ttfr-browser" in only)
    vsearch = pick_vsearch(args.vsearch)
    from benchlib import git_rev, machine, replace_section
    res = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
           "started_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%H:%M"),
           "machine": machine(), "commit": git_rev(), "load_start": loadavg(), "vsearch": os.path.relpath(vsearch, ROOT),
           "vsearch_version": subprocess.run([vsearch, "--version"], capture_output=True, text=True).stdout.strip(),
           "vsearch_mtime": datetime.datetime.fromtimestamp(os.path.getmtime(vsearch), datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
           "nginx_version": Nginx.version().replace("nginx version: ", ""),
           "ready_flag": os.path.exists(READY_FLAG), "skipped": [], "args": vars(args),
           "command": " ".join(["python3 bench/webpage.py"] + sys.argv[1:])}
    wv = subprocess.run(["wrk", "-v"], capture_output=True, text=True)
    res["wrk_version"] = (wv.stdout + wv.stderr).split()[1] if (wv.stdout + wv.stderr).split() else ""
    log(f"vsearch: {vsearch} ({res['vsearch_version']}, {res['vsearch_mtime']}); {READY_FLAG} "
        f"{'exists' if res['ready_flag'] else 'does not exist yet'}; load {res['load_start']}")

    info = make_images()
    names = info["names"]
    res["images"] = {"n": len(names), "mp": sum(w * h for w, h in info["sizes"]) / 1e6,
                     "mb": sum(os.path.getsize(os.path.join(SRC, n + ".jpg")) for n in names) / 1e6,
                     "photo_bytes": os.path.getsize(PHOTO)}
    log(f"images: {len(names)}, {res['images']['mp']:.0f} MP, {res['images']['mb']:.0f} MB; upload {res['images']['photo_bytes']:,} B")
    index_catalog(vsearch)
    nginx_files = batch_thumbs(vsearch)
    missing = [n for n in names if n not in nginx_files]
    if missing:
        raise SystemExit(f"no {SIZE} px batch thumbnail for {missing[:5]}")
    subprocess.run([vsearch, "prepare", PHOTO, PHOTO512], check=True, stdout=subprocess.DEVNULL)
    res["images"]["photo512_bytes"] = os.path.getsize(PHOTO512)

    vs = VSearch(vsearch, "probe").start(empty_cache=True)
    try:
        thumbs_ok, page_ok, notes = probe_routes(vs, names)
        if thumbs_ok:
            vs.cache_files()
    finally:
        vs.stop()
    res["thumbnail_cache"] = (f"`{vs.cache_option} DIR` (emptied before each cold run)" if vs.cache_option else
                              (f"no option; found under {os.path.relpath(vs.found_cache, ROOT)} (emptied before each cold run)"
                               if vs.found_cache else None))
    web_root = os.path.join(ROOT, "Sources", "VisualSearchServer", "WebPage")
    if thumbs_ok and not page_ok and os.path.isdir(web_root) and "--web-root" in subprocess.run(
            [vsearch, "serve", "--help"], capture_output=True, text=True).stdout:
        VSearch.extra_args = ["--web-root", web_root]
        vs.start(empty_cache=True)
        try:
            _, page_ok, notes2 = probe_routes(vs, names)
        finally:
            vs.stop()
        if page_ok:
            res["web_root"] = ("this binary's embedded page is not served (`GET /` answers 404 \"No such endpoint\"), "
                               "so every server of this run serves the page's files from "
                               "`Sources/VisualSearchServer/WebPage` with `--web-root`")
            log("  " + res["web_root"])
        else:
            VSearch.extra_args = []
            notes += notes2
    if not thumbs_ok:
        log("vsearch has no thumbnail route yet (" + "; ".join(notes) + "): measuring the nginx half only")
        res["skipped"].append(f"vsearch's thumbnail route and time to first result ({'; '.join(notes)} — binary of "
                              f"{res['vsearch_mtime']})")
    elif not page_ok:
        res["skipped"].append("the browser time to first result (" + "; ".join(notes) + ")")

    if "thumbs" in only:
        log("thumbnails: route vs nginx")
        res["thumbs"] = part_thumbs(args, vsearch, names, nginx_files, thumbs_ok)
    if "ttfr-server" in only and thumbs_ok:
        log("time to first result, without a browser")
        res["ttfr_server"] = part_ttfr_server(args, vsearch)
    if "ttfr-browser" in only and thumbs_ok and page_ok:
        log("time to first result, in the browser")
        res["ttfr_browser"] = part_ttfr_browser(args, vsearch)
        first = res["ttfr_browser"]["runs"].get("cold", [{}])[0]
        res["chromium"] = f"Chromium {first.get('chromium', '?')}"
    res["load_end"] = loadavg()
    res["wall_min"] = (time.time() - started) / 60
    res["falls_short"] = falls_short(res)
    slim = json.loads(json.dumps(res))
    for part in ("cold",):
        for tag in ("vsearch", "nginx"):
            for r in (slim.get("thumbs") or {}).get(part, {}).get(tag, []):
                r.pop("hashes", None)
                r.pop("etags", None)
    with open(RESULTS_JSON, "w") as f:
        json.dump(slim, f, indent=1)
    report = build_report(res, args)
    with open(REPORT_MD, "w") as f:
        f.write(report)
    print("\n" + report)
    log(f"raw numbers: {os.path.relpath(RESULTS_JSON, ROOT)}; report: {os.path.relpath(REPORT_MD, ROOT)}")
    if args.record:
        replace_section(os.path.join(HERE, "RESULTS.md"), SECTION, report)
        log("bench/RESULTS.md: section replaced")


if __name__ == "__main__":
    main()
