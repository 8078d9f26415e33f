#!/usr/bin/env python3
"""The deployment operators use, tested on loopback: nginx in front of two
`vsearch serve` replicas on one PostgreSQL catalog (deploy/nginx/).

What it starts, each on a free 127.0.0.1 port, and stops again on exit:
  - a PostgreSQL 18 + pgvector cluster of its own (scripts/postgres.sh with
    VSEARCH_PG_BASE=/tmp/vsearch-deploy-pg-UID-HASH: never the test suite's),
    with a fresh database holding corpus/ indexed as the catalog;
  - two `vsearch serve` replicas on that catalog, with keys and
    --client-address-header X-Forwarded-For;
  - nginx from Debian (apt-get installs nginx-light when it is missing) with
    deploy/nginx/vsearch.conf.template rendered, its own prefix, pid, logs and
    temp dirs in the work dir (never the system's nginx).

What it checks, through the proxy:
  1. the official ViSearch Python SDK (PyPI visearch 0.5.2, sha256-pinned, in
     .build-tools/deploy-venv): search by im_name, upload search with a corpus
     image, colour search, recommendation — each status OK with results; then
     object detection (issue 38; needs the learned model, scripts/install-model.sh):
     on a picture of three corpus things on a white background, composed with
     Pillow (the SDK's own dependency) in the work dir, the SDK's
     discoversearch gives >= 2 objects, best first, each with a type, a score
     in 0...1, a box inside the picture and results; uploadsearch with
     detection=all lists product_types and product_types_list and searches
     the best object; detection={a type found} searches that object, and
     detection={a type not in the picture} the whole image (vsearch's choice:
     docs/wire-protocol.md, "Object detection");
  2. the client address: the replicas limit by the address nginx forwards
     (clients on 127.0.0.2 and 127.0.0.3 all reach vsearch from nginx's
     127.0.0.1, yet one is limited and the other not), and a forged
     X-Forwarded-For does not change it;
  3. nginx's own limits: a burst beyond limit_req gets 429 (JSON, Retry-After),
     a body over client_max_body_size 413, /metrics is not public;
  4. a rolling restart: while clients send searches and uploads continuously
     (several in parallel), each replica in turn gets SIGTERM, finishes its
     requests in flight and exits, starts again on the same port and is
     healthy; nginx takes it back before the other one restarts. Every
     request's outcome is counted: any that is not 200 + status OK fails the
     script.

Usage: scripts/deploy-test.py [--vsearch PATH] [--workers N] [--keep]
  --vsearch PATH   the vsearch binary (default: `swift build -c release
                   --product vsearch`, then that binary)
  --workers N      clients sending requests during the restarts (default 6)
  --keep           keep the work dir (logs, rendered config) even on success

Exit status 0 when every check passed. Needs root or sudo only to install
nginx (and python3-venv) when missing. No wall-clock latency is asserted.
"""

import argparse
import base64
import hashlib
import http.client
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TEMPLATE = os.path.join(REPO, "deploy", "nginx", "vsearch.conf.template")
SDK_VERSION = "0.5.2"
SDK_SHA256 = "93404a5f8cf1aaa1f8e280089727ab6a2e8084f8102fef32519b5cd0ffaa722f"  # visearch-0.5.2.tar.gz
SDK_VENV = os.path.join(REPO, ".build-tools", "deploy-venv")
QUERY = "chelsea_cat"                      # a corpus image
UPLOAD = os.path.join(REPO, "corpus", "images", "chelsea_cat.jpg")
START = time.monotonic()


def say(message):
    print(f"[{time.monotonic() - START:6.1f}s] {message}", flush=True)


class CheckFailed(Exception):
    pass


def check(condition, message):
    if not condition:
        raise CheckFailed(message)
    say(f"  ok: {message}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def as_root(command):
    if os.geteuid() != 0:
        if not shutil.which("sudo"):
            raise CheckFailed(f"need root or sudo to run: {' '.join(command)}")
        command = ["sudo"] + command
    subprocess.run(command, check=True)


# ---------------------------------------------------------------- processes

class Processes:
    """Every process this script starts, stopped on exit by its own pid."""

    def __init__(self):
        self.running = {}   # name -> Popen

    def start(self, name, command, log_path, env=None):
        log = open(log_path, "ab")
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   env=env, start_new_session=True, close_fds=True)
        log.close()
        self.running[name] = process
        return process

    def stop(self, name, sig=signal.SIGTERM, timeout=60):
        process = self.running.pop(name, None)
        if process is None:
            return None
        if process.poll() is None:
            process.send_signal(sig)
            try:
                process.wait(timeout)
            except subprocess.TimeoutExpired:
                say(f"  {name} (pid {process.pid}) did not stop in {timeout} s: SIGKILL")
                process.kill()
                process.wait()
        return process.returncode

    def stop_all(self):
        for name in list(self.running):
            sig = signal.SIGQUIT if name == "nginx" else signal.SIGTERM   # nginx: graceful
            self.stop(name, sig, timeout=30)


# ---------------------------------------------------------------- HTTP helpers

class Client:
    """One keep-alive HTTP/1.1 connection from a chosen loopback source address."""

    def __init__(self, port, source="127.0.0.1", timeout=60):
        self.port, self.source, self.timeout = port, source, timeout
        self.connection = None

    def request(self, method, path, body=None, headers=None):
        """(status, headers, body). No retry of its own: any error is the request's outcome."""
        if self.connection is None:
            self.connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=self.timeout,
                                                         source_address=(self.source, 0))
        try:
            self.connection.request(method, path, body=body, headers=headers or {})
            response = self.connection.getresponse()
            data = response.read()
        except BaseException:
            self.close()
            raise
        if response.getheader("Connection", "").lower() == "close":
            self.close()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, data

    def close(self):
        if self.connection is not None:
            self.connection.close()
            self.connection = None


def basic(access, secret):
    return "Basic " + base64.b64encode(f"{access}:{secret}".encode()).decode()


def multipart(fields, file_field, file_name, file_bytes):
    boundary = "vsearch-deploy-" + secrets.token_hex(8)
    parts = []
    for name, value in fields.items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{file_field}"; filename="{file_name}"\r\n'
                 f"Content-Type: image/jpeg\r\n\r\n".encode() + file_bytes + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def wait_health(port, what, timeout=90, process=None):
    deadline = time.monotonic() + timeout
    last = "no answer"
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            raise CheckFailed(f"{what} exited ({process.returncode}) before answering /health")
        try:
            client = Client(port, timeout=5)
            status, _, data = client.request("GET", "/health")
            client.close()
            if status == 200 and json.loads(data).get("status") == "OK":
                return json.loads(data)
            last = f"HTTP {status}"
        except (OSError, http.client.HTTPException, ValueError) as error:
            last = str(error)
        time.sleep(0.2)
    raise CheckFailed(f"{what} did not answer /health in {timeout} s ({last})")


# ---------------------------------------------------------------- set-up steps

def ensure_nginx():
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)
    if nginx:
        return nginx
    say("nginx is missing: installing Debian's nginx-light")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    # Installing the package must not start the system's nginx on port 80:
    # a policy-rc.d that refuses (exit 101) while apt runs, unless one exists.
    policy = "/usr/sbin/policy-rc.d"
    made_policy = False
    if os.geteuid() == 0 and not os.path.exists(policy):
        with open(policy, "w") as f:
            f.write("#!/bin/sh\n# written by vsearch scripts/deploy-test.py while apt-get runs\nexit 101\n")
        os.chmod(policy, 0o755)
        made_policy = True
    try:
        sudo = [] if os.geteuid() == 0 else ["sudo"]
        subprocess.run(sudo + ["apt-get", "update", "-qq"], check=True, env=env)
        if subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", "nginx-light"], env=env,
                          stdout=subprocess.DEVNULL).returncode != 0:
            subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", "nginx"], env=env,
                           stdout=subprocess.DEVNULL, check=True)
    finally:
        if made_policy:
            os.remove(policy)
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not os.access(nginx, os.X_OK):
        raise CheckFailed("nginx was installed but is not on PATH or in /usr/sbin")
    return nginx


def ensure_vsearch(path):
    if path:
        path = os.path.abspath(path)
        if not os.access(path, os.X_OK):
            raise CheckFailed(f"--vsearch {path} is not an executable")
        return path
    say("building vsearch (swift build -c release --product vsearch)")
    subprocess.run(["swift", "build", "-c", "release", "--product", "vsearch"], cwd=REPO, check=True)
    bin_path = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"], cwd=REPO, check=True,
                              capture_output=True, text=True).stdout.strip()
    return os.path.join(bin_path, "vsearch")


def ensure_sdk(work):
    """The official ViSearch Python SDK in its own venv; returns the venv's python."""
    python = os.path.join(SDK_VENV, "bin", "python")
    probe = "import visearch, sys; sys.exit(0 if visearch.__version__ == %r else 1)" % SDK_VERSION
    if os.access(python, os.X_OK) and subprocess.run([python, "-c", probe], capture_output=True).returncode == 0:
        return python
    say(f"installing the ViSearch Python SDK {SDK_VERSION} into {os.path.relpath(SDK_VENV, REPO)}")
    shutil.rmtree(SDK_VENV, ignore_errors=True)
    if subprocess.run([sys.executable, "-m", "venv", SDK_VENV], capture_output=True).returncode != 0:
        shutil.rmtree(SDK_VENV, ignore_errors=True)
        say("python3 -m venv failed: installing python3-venv")
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        sudo = [] if os.geteuid() == 0 else ["sudo"]
        subprocess.run(sudo + ["apt-get", "update", "-qq"], check=True, env=env)
        subprocess.run(sudo + ["apt-get", "install", "-y", "-qq", "python3-venv"], check=True, env=env,
                       stdout=subprocess.DEVNULL)
        subprocess.run(["/usr/bin/python3", "-m", "venv", SDK_VENV], check=True)
    pip = [python, "-m", "pip", "-q", "--disable-pip-version-check"]
    download = os.path.join(work, "sdk")
    subprocess.run(pip + ["download", "--no-deps", "--no-binary", ":all:", "-d", download,
                          f"visearch=={SDK_VERSION}"], check=True)
    archive = os.path.join(download, f"visearch-{SDK_VERSION}.tar.gz")
    with open(archive, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    if digest != SDK_SHA256:
        raise CheckFailed(f"visearch-{SDK_VERSION}.tar.gz has sha256 {digest}, expected {SDK_SHA256}")
    # Its dependencies (requests, six, simplejson, pillow) as pip resolves them.
    subprocess.run(pip + ["install", archive], check=True)
    if subprocess.run([python, "-c", probe]).returncode != 0:
        raise CheckFailed(f"visearch {SDK_VERSION} did not install into {SDK_VENV}")
    return python


def start_postgres(work):
    """A PostgreSQL cluster of this script's own, with a fresh database; returns (env, url).
    postgres.sh's progress goes to WORK/postgres.sh.log."""
    uid = os.getuid()
    repo_hash = hashlib.sha256(REPO.encode()).hexdigest()[:8]
    env = dict(os.environ, VSEARCH_PG_BASE=f"/tmp/vsearch-deploy-pg-{uid}-{repo_hash}")
    script = os.path.join(REPO, "scripts", "postgres.sh")
    with open(os.path.join(work, "postgres.sh.log"), "ab") as log:
        subprocess.run([script, "start"], env=env, check=True, stdout=subprocess.DEVNULL, stderr=log)
        subprocess.run([script, "psql", "-q", "-d", "postgres", "-c",
                        "DROP DATABASE IF EXISTS vsearch_test WITH (FORCE)"], env=env, check=True,
                       stdout=subprocess.DEVNULL, stderr=log)
        url = subprocess.run([script, "start"], env=env, check=True, stdout=subprocess.PIPE, stderr=log,
                             text=True).stdout.strip()
    return env, url


def stop_postgres(env):
    subprocess.run([os.path.join(REPO, "scripts", "postgres.sh"), "stop"], env=env,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


# ---------------------------------------------------------------- the deployment

class Deployment:
    def __init__(self, work, vsearch, nginx, catalog, processes):
        self.work, self.vsearch, self.nginx, self.catalog, self.processes = work, vsearch, nginx, catalog, processes
        self.access = "deploy"
        self.secret = secrets.token_hex(16)
        self.keys = os.path.join(work, "keys")
        fd = os.open(self.keys, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(f"{self.access}:{self.secret}\n")
        self.replica_ports = [free_port(), free_port()]
        self.proxy_port = free_port()
        self.nginx_dir = os.path.join(work, "nginx")
        self.access_log = os.path.join(self.nginx_dir, "vsearch.access.log")

    # -- replicas

    def replica_command(self, port):
        return [self.vsearch, "serve", "--catalog", self.catalog, "--host", "127.0.0.1", "--port", str(port),
                "--keys-file", self.keys, "--client-address-header", "X-Forwarded-For",
                "--similarity", "color", "--thumbnail-cache", os.path.join(self.work, "thumbnails"),
                # Small refusal budget so that check 2 can see per-address limiting
                # through nginx's larger limit_req burst (production: the defaults).
                "--client-refusal-rate", "0.5", "--client-refusal-burst", "6", "--client-refusal-delay", "0"]

    def start_replica(self, index):
        port = self.replica_ports[index]
        process = self.processes.start(f"replica-{index + 1}", self.replica_command(port),
                                       os.path.join(self.work, f"replica-{index + 1}.log"))
        wait_health(port, f"replica {index + 1} (127.0.0.1:{port})", process=process)
        return process

    # -- nginx

    def render(self):
        os.makedirs(os.path.join(self.nginx_dir, "temp"), exist_ok=True)
        with open(TEMPLATE) as f:
            text = f.read()
        values = {
            "VSEARCH_LISTEN": f"127.0.0.1:{self.proxy_port}",
            "VSEARCH_REPLICA_1": f"127.0.0.1:{self.replica_ports[0]}",
            "VSEARCH_REPLICA_2": f"127.0.0.1:{self.replica_ports[1]}",
            "VSEARCH_LOG_DIR": self.nginx_dir,
        }
        for name, value in values.items():
            text = text.replace("${%s}" % name, value)   # as envsubst with the list of names does
        left = re.findall(r"\$\{VSEARCH_[A-Z0-9_]*\}", text)
        if left:
            raise CheckFailed(f"placeholders left in the template: {sorted(set(left))}")
        with open(os.path.join(self.nginx_dir, "vsearch.conf"), "w") as f:
            f.write(text)
        temp = os.path.join(self.nginx_dir, "temp")
        user = ""
        if os.geteuid() == 0:
            # Workers drop to nobody; they need their temp dirs (request bodies
            # over client_body_buffer_size, large responses).
            user = "user nobody nogroup;\n"
            os.chmod(self.work, 0o711)
            os.chmod(self.nginx_dir, 0o755)
        for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
            os.makedirs(os.path.join(temp, sub), exist_ok=True)
            if os.geteuid() == 0:
                shutil.chown(os.path.join(temp, sub), "nobody", "nogroup")
        # The main file the system's /etc/nginx/nginx.conf would be: only what
        # a private instance needs around the http-context file under test.
        main = f"""# Written by scripts/deploy-test.py: a private nginx around deploy/nginx/vsearch.conf.template.
{user}worker_processes 2;
pid {self.nginx_dir}/nginx.pid;
error_log {self.nginx_dir}/error.log info;
events {{ worker_connections 1024; }}
http {{
    default_type application/octet-stream;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
    include {self.nginx_dir}/vsearch.conf;
}}
"""
        with open(os.path.join(self.nginx_dir, "nginx.conf"), "w") as f:
            f.write(main)

    def nginx_command(self, *extra):
        return [self.nginx, "-p", self.nginx_dir + "/", "-c", os.path.join(self.nginx_dir, "nginx.conf"), *extra]

    def start_nginx(self):
        test = subprocess.run(self.nginx_command("-t", "-q"), capture_output=True, text=True)
        if test.returncode != 0:
            raise CheckFailed("nginx -t refused the rendered config:\n" + test.stderr)
        say("  ok: nginx -t accepts the rendered config")
        process = self.processes.start("nginx", self.nginx_command("-g", "daemon off;"),
                                       os.path.join(self.nginx_dir, "stderr.log"))
        return wait_health(self.proxy_port, f"nginx (127.0.0.1:{self.proxy_port})", process=process)

    def access_log_lines(self, offset=0):
        try:
            with open(self.access_log, "rb") as f:
                f.seek(offset)
                return f.read().decode(errors="replace").splitlines()
        except FileNotFoundError:
            return []

    def access_log_size(self):
        try:
            return os.path.getsize(self.access_log)
        except FileNotFoundError:
            return 0


# ---------------------------------------------------------------- checks

SDK_CHECK = r"""
import json, os, sys
from visearch import client
api = client.ViSearchAPI(os.environ["VS_ACCESS"], os.environ["VS_SECRET"], host=os.environ["VS_HOST"])
query, upload = sys.argv[1], sys.argv[2]
answers = {
    "search (im_name)": api.search(query, limit=5, score=True),
    "uploadsearch (image file)": api.uploadsearch(image_path=upload, limit=5, score=True),
    "colorsearch": api.colorsearch("967056", limit=5),
    "recommendation": api.recommendation(query, limit=5),
}
print(json.dumps({name: {"status": a.get("status"), "method": a.get("method"), "error": a.get("error"),
                         "result": [r.get("im_name") for r in a.get("result") or []]}
                  for name, a in answers.items()}))
"""


def check_sdk(deployment, python):
    say("check 1: the ViSearch Python SDK through the proxy")
    env = dict(os.environ, VS_ACCESS=deployment.access, VS_SECRET=deployment.secret,
               VS_HOST=f"http://127.0.0.1:{deployment.proxy_port}/")
    run = subprocess.run([python, "-c", SDK_CHECK, QUERY, UPLOAD], env=env, capture_output=True, text=True,
                         timeout=300)
    if run.returncode != 0:
        raise CheckFailed("the SDK check failed:\n" + run.stderr[-3000:])
    for name, answer in json.loads(run.stdout).items():
        check(answer["status"] == "OK" and answer["result"],
              f"SDK {name}: status {answer['status']}, {len(answer['result'])} results "
              f"({', '.join(answer['result'][:3])}…)")
        if name != "colorsearch" and name != "recommendation":
            check(answer["result"][0] == QUERY, f"SDK {name}: the query image {QUERY} comes first")


# Three corpus pictures (Tux Paint stamps on white) on a white canvas, far
# enough apart for each to be one object: where each went is the truth.
SCENE_SIZE = (1200, 700)
SCENE = [   # (corpus image, (left, top), width or None, height or None)
    ("tp_clothes_hats_sombrero", (40, 60), 360, None),
    ("tp_hobbies_music_string_guitar_electric", (520, 140), None, 420),
    ("tp_vehicles_emergency_firetruck", (700, 420), 460, None),
]

SDK_DISCOVER_CHECK = r"""
import json, os, sys
from PIL import Image
from visearch import client
corpus, scene_path, layout = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
canvas = Image.new("RGB", tuple(layout["size"]), "white")
placed = []
for name, (left, top), width, height in layout["items"]:
    with Image.open(os.path.join(corpus, name + ".jpg")) as picture:
        picture = picture.convert("RGB")
        w, h = picture.size
        size = (width, round(h * width / w)) if width else (round(w * height / h), height)
        canvas.paste(picture.resize(size, Image.LANCZOS), (left, top))
        placed.append({"im_name": name, "box": [left, top, left + size[0], top + size[1]]})
canvas.save(scene_path, "JPEG", quality=92)
api = client.ViSearchAPI(os.environ["VS_ACCESS"], os.environ["VS_SECRET"], host=os.environ["VS_HOST"])
answers = {
    "placed": placed,
    "discoversearch": api.discoversearch(image=scene_path, result_limit=5),
    "uploadsearch": api.uploadsearch(image_path=scene_path, limit=5, score=True),
    "uploadsearch detection=all": api.uploadsearch(image_path=scene_path, limit=5, score=True, detection="all"),
    "uploadsearch detection=hat": api.uploadsearch(image_path=scene_path, limit=5, score=True, detection="hat"),
    "uploadsearch detection=dress": api.uploadsearch(image_path=scene_path, limit=5, score=True, detection="dress"),
}
print(json.dumps(answers))
"""


def iou(a, b):
    inter = max(0, min(a[2], b[2]) - max(a[0], b[0])) * max(0, min(a[3], b[3]) - max(a[1], b[1]))
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def names(answer):
    return [r.get("im_name") for r in answer.get("result") or []]


def check_sdk_detection(deployment, python):
    say("check 1b: object detection through the SDK (discoversearch, uploadsearch with detection)")
    env = dict(os.environ, VS_ACCESS=deployment.access, VS_SECRET=deployment.secret,
               VS_HOST=f"http://127.0.0.1:{deployment.proxy_port}/")
    scene = os.path.join(deployment.work, "scene.jpg")
    layout = json.dumps({"size": SCENE_SIZE, "items": SCENE})
    run = subprocess.run([python, "-c", SDK_DISCOVER_CHECK, os.path.join(REPO, "corpus", "images"), scene, layout],
                         env=env, capture_output=True, text=True, timeout=300)
    if run.returncode != 0:
        raise CheckFailed("the SDK detection check failed:\n" + run.stderr[-3000:])
    answers = json.loads(run.stdout)
    width, height = SCENE_SIZE

    discover = answers["discoversearch"]
    objects = discover.get("objects") or []
    check(discover.get("status") == "OK", f"SDK discoversearch: status {discover.get('status')} {discover.get('error') or ''}")
    if discover.get("offline_note"):
        raise CheckFailed(f"SDK discoversearch: no object detection on the replicas ({discover['offline_note']}); "
                          "install the model with scripts/install-model.sh")
    for o in objects:
        say(f"    {o.get('type')} score {o.get('score')} box {o.get('box')}: {', '.join(names(o)[:3])}")
    check(len(objects) >= 2, f"SDK discoversearch: {len(objects)} objects in a picture of {len(SCENE)} things (>= 2)")
    for i, o in enumerate(objects):
        box = o.get("box") or []
        check(isinstance(o.get("type"), str) and o["type"]
              and isinstance(o.get("score"), (int, float)) and 0 <= o["score"] <= 1
              and len(box) == 4 and all(isinstance(v, int) for v in box)
              and 0 <= box[0] < box[2] <= width and 0 <= box[1] < box[3] <= height
              and names(o) and isinstance(o.get("total"), int) and isinstance(o.get("attributes"), dict),
              f"SDK discoversearch object {i + 1}: type {o.get('type')!r}, score {o.get('score')} in 0...1, "
              f"box {box} inside {width}x{height}, {len(names(o))} results, total and attributes")
    scores = [o["score"] for o in objects]
    check(scores == sorted(scores, reverse=True), f"SDK discoversearch: objects ranked best first ({scores})")
    check(isinstance(discover.get("object_types_list"), list) and discover["object_types_list"],
          f"SDK discoversearch: object_types_list lists {len(discover.get('object_types_list') or [])} types")
    found = 0
    for item in answers["placed"]:
        best = max(objects, key=lambda o: iou(o["box"], item["box"]))
        overlap = iou(best["box"], item["box"])
        found += overlap >= 0.5
        say(f"    placed {item['im_name']} at {item['box']}: best object {best['type']} {best['box']} "
            f"(IoU {overlap:.2f}), its first result {names(best)[0]}")
    check(found >= 2, f"SDK discoversearch: {found} of the {len(SCENE)} placed things found as objects (IoU >= 0.5)")

    plain = answers["uploadsearch"]
    detect_all = answers["uploadsearch detection=all"]
    kinds = detect_all.get("product_types") or []
    check(detect_all.get("status") == "OK" and names(detect_all),
          f"SDK uploadsearch detection=all: status {detect_all.get('status')}, {len(names(detect_all))} results")
    check(kinds and all(isinstance(k.get("type"), str) and 0 <= k.get("score", -1) <= 1 and len(k.get("box") or []) == 4
                        and isinstance(k.get("attributes"), dict) for k in kinds),
          f"SDK uploadsearch detection=all: product_types {[(k.get('type'), k.get('score')) for k in kinds]}")
    types_list = detect_all.get("product_types_list")
    check(isinstance(types_list, list) and types_list and all("type" in t and "attributes_list" in t for t in types_list),
          f"SDK uploadsearch detection=all: product_types_list present ({len(types_list or [])} types)")
    check([k["type"] for k in kinds][:len(objects)] == [o["type"] for o in objects],
          "SDK uploadsearch detection=all: product_types name the objects discoversearch found, in its order "
          "(discover stops at detection_limit 5, product_types lists every object)")
    check(names(detect_all)[0] == names(objects[0])[0],
          f"SDK uploadsearch detection=all searches the best object: first result {names(detect_all)[0]}, "
          f"as the best object's in discoversearch")
    hat = answers["uploadsearch detection=hat"]
    hats = [o for o in objects if o["type"] == "hat"]
    if hats:
        check(hat.get("status") == "OK" and names(hat)[:1] == names(hats[0])[:1],
              f"SDK uploadsearch detection=hat searches the hat: first result {names(hat)[:1]}")
    else:
        say("    (no hat among the objects: detection=hat not compared)")
    dress = answers["uploadsearch detection=dress"]
    check(dress.get("status") == "OK" and names(dress) == names(plain)
          and [k["type"] for k in dress.get("product_types") or []] == [k["type"] for k in kinds],
          "SDK uploadsearch detection=dress (no dress in the picture): the whole image is searched (the same "
          "results as without detection) and product_types lists what was found")


def is_vsearch_answer(headers):
    return "x-log-id" in headers          # set by vsearch on every answer; nginx's own answers lack it


def check_client_address(deployment):
    say("check 2: the replicas limit by the client address nginx forwards (X-Forwarded-For)")
    bad_event = (b'{"not":"a batch"}', {"Content-Type": "application/json"})
    limited, other = "127.0.0.2", "127.0.0.3"

    def send(source, extra_headers=None):
        client = Client(deployment.proxy_port, source=source)
        try:
            return client.request("POST", "/v3/events", body=bad_event[0], headers={**bad_event[1], **(extra_headers or {})})
        finally:
            client.close()

    # A client that keeps sending what vsearch refuses (400) is limited (429)
    # once its refusal budget (--client-refusal-burst 6 per replica) is spent.
    outcomes, consecutive = [], 0
    for _ in range(40):
        status, headers, _ = send(limited)
        outcomes.append(status)
        consecutive = consecutive + 1 if status == 429 and is_vsearch_answer(headers) else 0
        if consecutive >= 4:
            break
    check(consecutive >= 4, f"{limited} sending malformed events: {outcomes.count(400)}× 400, then vsearch's 429 "
                            f"(outcomes {outcomes})")
    # Another address, reaching the replicas from the same nginx, is not limited.
    statuses = [send(other)[0] for _ in range(3)]
    check(statuses == [400, 400, 400], f"{other} through the same nginx is not limited: {statuses}")
    # The address vsearch limits is the one nginx appended, whatever the client wrote.
    forged = [send(limited, {"X-Forwarded-For": other})[0] for _ in range(3)]
    check(forged == [429, 429, 429], f"{limited} forging 'X-Forwarded-For: {other}' is still limited: {forged}")


def check_nginx_limits(deployment):
    say("check 3: nginx's limits")
    auth = {"Authorization": basic(deployment.access, deployment.secret)}
    source = "127.0.0.4"
    results, lock = [], threading.Lock()

    def burst(count):
        client = Client(deployment.proxy_port, source=source)
        for _ in range(count):
            status, headers, data = client.request("GET", f"/search?im_name={QUERY}&limit=3", headers=auth)
            with lock:
                results.append((status, is_vsearch_answer(headers), headers.get("retry-after"), data))
        client.close()

    threads = [threading.Thread(target=burst, args=(20,)) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ok = sum(1 for s, v, _, _ in results if s == 200 and v)
    refused = [(r, d) for s, v, r, d in results if s == 429 and not v]
    other = sorted({s for s, v, _, _ in results if not ((s == 200 and v) or (s == 429 and not v))})
    check(refused and ok >= 60 and not other,
          f"a burst of {len(results)} searches from {source}: {ok}× 200 (the burst of 60 and the rate), "
          f"{len(refused)}× 429 from nginx, nothing else {other or ''}")
    retry_after, body = refused[0]
    check(retry_after == "1" and json.loads(body).get("status") == "fail",
          "nginx's 429 is the ViSearch error JSON with Retry-After: 1")

    # A body over client_max_body_size is refused from its Content-Length, before it is sent.
    connection = socket.create_connection(("127.0.0.1", deployment.proxy_port), timeout=30,
                                          source_address=("127.0.0.5", 0))
    connection.sendall(b"POST /uploadsearch HTTP/1.1\r\nHost: vsearch\r\nContent-Type: image/jpeg\r\n"
                       b"Content-Length: 17825792\r\n\r\n")
    response = connection.recv(4096).decode(errors="replace")
    connection.close()
    check(response.startswith("HTTP/1.1 413") and '"status":"fail"' in response,
          "a 17 MiB upload is refused by nginx with 413 (client_max_body_size 16m), as JSON")

    client = Client(deployment.proxy_port, source="127.0.0.5")
    status, _, _ = client.request("GET", "/metrics", headers=auth)
    client.close()
    check(status == 404, "/metrics is not served through the proxy (scrape each replica directly)")


class Traffic:
    """Clients sending searches and uploads through the proxy until stopped,
    each from its own loopback address, paced like a busy shopper (at most
    10 requests a second, under the proxy's per-address limits)."""

    def __init__(self, deployment, workers):
        self.deployment = deployment
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.outcomes = {}          # (endpoint, outcome) -> count
        self.failures = []          # (time, endpoint, outcome, detail)
        self.done = [0] * workers
        with open(UPLOAD, "rb") as f:
            self.upload = f.read()
        self.threads = [threading.Thread(target=self.run, args=(i,), daemon=True) for i in range(workers)]

    def start(self):
        for t in self.threads:
            t.start()

    def stop(self):
        self.stopping.set()
        for t in self.threads:
            t.join(120)

    def total(self):
        with self.lock:
            return sum(self.outcomes.values())

    def record(self, endpoint, outcome, detail=""):
        with self.lock:
            self.outcomes[(endpoint, outcome)] = self.outcomes.get((endpoint, outcome), 0) + 1
            if outcome != "ok":
                self.failures.append((round(time.monotonic() - START, 1), endpoint, outcome, detail[:200]))

    def run(self, index):
        d = self.deployment
        client = Client(d.proxy_port, source=f"127.0.0.{20 + index}", timeout=120)
        auth = {"Authorization": basic(d.access, d.secret)}
        names = ["chelsea_cat", "astronaut", "coffee_cup", "falcon9_rocket", "cameraman"]
        step = index
        while not self.stopping.is_set():
            began = time.monotonic()
            step += 1
            name = names[step % len(names)]
            endpoint = "POST /uploadsearch" if step % 3 == 0 else "GET /search"
            try:
                if endpoint == "POST /uploadsearch":
                    body, content_type = multipart({"limit": "5", "score": "true"}, "image", "query.jpg", self.upload)
                    status, headers, data = client.request("POST", "/uploadsearch", body=body,
                                                           headers={**auth, "Content-Type": content_type})
                else:
                    status, headers, data = client.request("GET", f"/search?im_name={name}&limit=5", headers=auth)
                answer = json.loads(data) if data.startswith(b"{") else {}
                if status == 200 and answer.get("status") == "OK" and answer.get("result"):
                    self.record(endpoint, "ok")
                    self.done[index] += 1
                else:
                    self.record(endpoint, f"HTTP {status}", data.decode(errors="replace"))
            except Exception as error:      # counted, never lost
                client.close()
                self.record(endpoint, type(error).__name__, str(error))
            time.sleep(max(0.0, 0.1 - (time.monotonic() - began)))
        client.close()


def check_rolling_restart(deployment, workers):
    say(f"check 4: rolling restart of both replicas behind the proxy, {workers} clients sending requests")
    check_offset = deployment.access_log_size()
    traffic = Traffic(deployment, workers)
    traffic.start()
    deadline = time.monotonic() + 60
    while min(traffic.done) < 3 and not traffic.failures and time.monotonic() < deadline:
        time.sleep(0.2)
    if traffic.failures:
        traffic.stop()
        for failure in traffic.failures[:10]:
            say(f"    failure: {failure}")
    check(min(traffic.done) >= 3 and not traffic.failures,
          f"all {workers} clients get answers ({traffic.total()} requests so far)")
    first_stop = None
    for index in range(2):
        port = deployment.replica_ports[index]
        name = f"replica-{index + 1}"
        before = traffic.total()
        stopped_at = time.monotonic()
        first_stop = first_stop or stopped_at
        process = deployment.processes.running[name]
        say(f"  SIGTERM {name} (pid {process.pid}, 127.0.0.1:{port})")
        code = deployment.processes.stop(name, signal.SIGTERM, timeout=60)
        check(code == 0, f"{name} finished its requests in flight and exited 0 "
                         f"in {time.monotonic() - stopped_at:.1f} s")
        log_offset = deployment.access_log_size()
        deployment.start_replica(index)
        say(f"  {name} restarted on the same port, /health OK, {time.monotonic() - stopped_at:.1f} s after SIGTERM")
        # The next replica may stop only once nginx sends requests to this one
        # again (after fail_timeout, one live request tries it): else both
        # would count as failed at once.
        deadline = time.monotonic() + 60
        served = 0
        while time.monotonic() < deadline:
            served = sum(1 for line in deployment.access_log_lines(log_offset)
                         if re.search(r" 200 .*upstream=(?:[^ ]*, )?127\.0\.0\.1:%d upstream_status=(?:[^ ]*, )?200 " % port,
                                      line))
            if served >= 10:
                break
            time.sleep(0.5)
        check(served >= 10, f"nginx sends requests to {name} again ({served} answered by it)")
        say(f"  {traffic.total() - before} requests answered while {name} restarted")
    window = time.monotonic() - first_stop
    time.sleep(2)
    traffic.stop()
    total = traffic.total()
    say("  outcomes of every request sent during the check:")
    for (endpoint, outcome), count in sorted(traffic.outcomes.items()):
        say(f"    {endpoint:20} {outcome:16} {count}")
    for failure in traffic.failures[:20]:
        say(f"    failure: {failure}")
    lines = deployment.access_log_lines(check_offset)
    retried = [line for line in lines if re.search(r"upstream=[^ ]+, ", line)]
    refused = [line for line in retried if re.search(r"upstream_status=502, ", line)]
    answered_503 = [line for line in lines if re.search(r"upstream_status=(?:[^ ]*, )?503", line)]
    say(f"  nginx passed {len(retried)} request(s) on to the other replica after a failed attempt: "
        f"{len(refused)} could not be sent or got no answer (connection refused or closed: 502 in the log), "
        f"{len(answered_503)} were answered 503 by a replica")
    for line in (answered_503 + refused)[:6]:
        say(f"    {line}")
    check(not traffic.failures, f"{total} requests in {window:.0f} s of restarts and around them, "
                                f"{len(traffic.failures)} failed")
    # Graceful shutdown: a replica finishes what it accepted. A 503 from the
    # stopping replica (nginx hid it by retrying) means it did not.
    check(not answered_503, "no request was answered 503 by a stopping replica (requests in flight finished)")


# ---------------------------------------------------------------- main

def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vsearch", help="the vsearch binary (default: swift build -c release --product vsearch)")
    parser.add_argument("--workers", type=int, default=6, help="clients during the restarts (default 6)")
    parser.add_argument("--keep", action="store_true", help="keep the work dir even on success")
    args = parser.parse_args()

    # SIGTERM/SIGHUP end the run like Ctrl-C: through the finally below.
    def interrupted(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGHUP, interrupted)

    work = tempfile.mkdtemp(prefix="vsearch-deploy-")
    processes = Processes()
    pg_env = None
    passed = False
    try:
        say(f"work dir {work}")
        nginx = ensure_nginx()
        say(f"nginx: {subprocess.run([nginx, '-v'], capture_output=True, text=True).stderr.strip()} ({nginx})")
        vsearch = ensure_vsearch(args.vsearch)
        say(f"vsearch: {vsearch}")
        python = ensure_sdk(work)
        say("starting PostgreSQL (scripts/postgres.sh, a cluster of this script's own)")
        pg_env, catalog = start_postgres(work)
        say(f"  catalog {catalog}")
        subprocess.run([vsearch, "index", os.path.join(REPO, "corpus", "images"),
                        "--metadata", os.path.join(REPO, "corpus", "catalog.csv"),
                        "--catalog", catalog, "--color-only", "--quiet"], check=True)
        deployment = Deployment(work, vsearch, nginx, catalog, processes)
        for index in range(2):
            deployment.start_replica(index)
            say(f"replica {index + 1}: vsearch serve on 127.0.0.1:{deployment.replica_ports[index]}")
        deployment.render()
        health = deployment.start_nginx()
        say(f"nginx on 127.0.0.1:{deployment.proxy_port} → both replicas; /health through it: {health}")
        check(health.get("images") == 102, "the catalog behind the proxy holds the 102 corpus images")

        check_sdk(deployment, python)
        check_sdk_detection(deployment, python)
        check_client_address(deployment)
        check_nginx_limits(deployment)
        check_rolling_restart(deployment, args.workers)
        passed = True
    except CheckFailed as failure:
        say(f"FAILED: {failure}")
    except subprocess.CalledProcessError as error:
        say(f"FAILED: {' '.join(map(str, error.cmd))} exited {error.returncode}")
    except KeyboardInterrupt as interruption:
        say(f"interrupted ({interruption})")
    finally:
        say("stopping what this script started")
        processes.stop_all()
        if pg_env is not None:
            stop_postgres(pg_env)
        if passed and not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            for log in ("postgres.sh.log", "replica-1.log", "replica-2.log", "nginx/error.log"):
                path = os.path.join(work, log)
                if not passed and os.path.exists(path):
                    with open(path, errors="replace") as f:
                        tail = f.read().splitlines()[-8:]
                    say(f"  last lines of {log}:")
                    for line in tail:
                        say(f"    {line}")
            say(f"  logs and the rendered config are in {work}")
    say(f"{'PASSED' if passed else 'FAILED'} in {time.monotonic() - START:.0f} s")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
