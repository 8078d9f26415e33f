"""The one library of helpers shared by the benchmarks in bench/: the machine and build a run describes,
bench/RESULTS.md (each benchmark owns one `## ` section and replaces only that one), percentiles and medians,
processes (start, stop, CPU seconds, build), and small parsing and logging helpers. A helper two scripts need
lives here, once; a script keeps only what is its own."""
import math
import os
import platform
import re
import socket
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def git_rev():
    """The commit benchmarked, noting uncommitted changes to what is built."""
    try:
        def git(*args):
            return subprocess.run(["git", *args], cwd=ROOT, check=True, capture_output=True, text=True).stdout.strip()
        dirty = git("status", "--porcelain", "--", "Sources", "Package.swift")
        return git("rev-parse", "--short", "HEAD") + (" + uncommitted changes in Sources/Package.swift" if dirty else "")
    except Exception:
        return "unknown"


def machine():
    """Cores, CPU model and SIMD flags, memory, architecture, kernel."""
    model, flags = "?", ""
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name") and model == "?":
                model = line.split(":", 1)[1].strip()
            elif line.startswith("flags") and not flags:
                fl = line.split()
                flags = ", ".join(x for x in ("avx2", "fma", "avx512f") if x in fl)
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    return (f"{os.cpu_count() or 1} cores (nproc), {model} ({flags}), {mem:.0f} GiB, "
            f"{platform.machine()}, Linux {platform.release()}")


def replace_section(path, title, text):
    """Writes `text` (which starts with the `## title` line) in place of the section `title`,
    appending it when absent; other sections are kept as they are."""
    old = open(path).read() if os.path.exists(path) else "# Benchmark results\n"
    lines = old.splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.rstrip() == title), None)
    if start is None:
        new = old.rstrip("\n") + "\n\n" + text.rstrip("\n") + "\n"
    else:
        end = next((j for j in range(start + 1, len(lines)) if lines[j].startswith("## ")), len(lines))
        rest = "".join(lines[end:])
        new = "".join(lines[:start]) + text.rstrip("\n") + "\n" + ("\n" + rest if rest else "")
    with open(path, "w") as f:
        f.write(new)


# Throughput benchmarks load the server from one address as fast as it answers: per-client limits
# (429 beyond 50 requests a second, 16 at once...) are for fairness between clients, not capacity,
# so they are off here. bench/load.py measures them.
UNLIMITED_CLIENT = ["--client-rate", "0", "--client-concurrency", "0", "--client-image-concurrency", "0",
                    "--max-client-connections", "0"]


def start_server(vsearch, catalog, core, log_path, flags=(), client_limits=False):
    """Starts `vsearch serve` (with `flags`) on a free loopback port, pinned to `core`, logging to
    `log_path`; returns (process, base URL) once it accepts connections. Raises RuntimeError, with
    the log's tail, when the server exits or does not listen within 15 s. The per-client limits are
    off (UNLIMITED_CLIENT) unless `client_limits`: then the server runs with its production defaults."""
    port = free_port()
    unlimited = [] if client_limits else UNLIMITED_CLIENT
    command = ["taskset", "-c", str(core), vsearch, "serve", "--catalog", catalog, "--port", str(port), *unlimited, *flags]
    with open(log_path, "w") as log:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=log)
    for _ in range(300):
        if process.poll() is not None:
            raise RuntimeError(f"`{' '.join(command)}` exited with {process.returncode}:\n{open(log_path).read()[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return process, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError(f"`{' '.join(command)}` did not accept connections within 15 s (log: {log_path})")


def write_section(record, title, text):
    """Prints a report and, with `record`, replaces its section of bench/RESULTS.md."""
    print("\n" + text)
    if record:
        replace_section(os.path.join(ROOT, "bench", "RESULTS.md"), title, text)


# ---------------------------------------------------------------- statistics
def pct(values, q, method="linear", empty=None):
    """The q-th percentile (q in 0..100) of `values` (None entries dropped; `empty` when nothing is left).
    Each method is the one its benchmarks have always used, so their figures stay comparable:
    - "linear": numpy's default (`np.percentile`, linear between the two closest ranks), computed the way
      numpy computes it, bit for bit (scale.py, learned_serve.py, webpage.py);
    - "round": the element at rank round(q/100 * (n - 1)), Python's round (detection.py, discover_speed.py);
    - "floor": the element at rank floor(n * q / 100), capped at n - 1 (load.py, abuse.py)."""
    xs = sorted(v for v in values if v is not None)
    if not xs:
        return empty
    n = len(xs)
    if method == "linear":
        k = (n - 1) * (q / 100)
        lo = math.floor(k)
        a, b, t = xs[lo], xs[min(lo + 1, n - 1)], k - lo
        return float(b - (b - a) * (1 - t) if t >= 0.5 else a + (b - a) * t)  # numpy's _lerp
    if method == "round":
        return xs[min(n - 1, int(round(q / 100 * (n - 1))))]
    if method == "floor":
        return xs[min(n - 1, int(n * q / 100))]
    raise ValueError(f"pct: unknown method {method!r}")


def med(values, empty=float("nan")):
    """statistics.median of `values` with None entries dropped; `empty` when nothing is left."""
    xs = [x for x in values if x is not None]
    return statistics.median(xs) if xs else empty


# ---------------------------------------------------------------- processes and the machine
def loadavg():
    """The 1, 5 and 15-minute load averages, as /proc/loadavg gives them ("0.52 0.61 0.70")."""
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def free_port():
    """A TCP port free on 127.0.0.1 at the time of asking."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def proc_cpu_seconds(pid, children=False):
    """User + system CPU seconds of process `pid` from /proc/PID/stat (with `children`: plus its waited-for
    children's)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    # fields[0] is field 3 (state): utime = 14, stime = 15, cutime = 16, cstime = 17
    ticks = int(fields[11]) + int(fields[12])
    if children:
        ticks += int(fields[13]) + int(fields[14])
    return ticks / os.sysconf("SC_CLK_TCK")


def stop_server(process, timeout=10):
    """SIGTERM (a server saves its graphs when they changed), then SIGKILL after `timeout` s; waits for the exit."""
    if process.poll() is None:
        process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def sh(cmd, **kw):
    """subprocess.run(cmd, check=True, **kw): a set-up command that must succeed."""
    return subprocess.run(cmd, check=True, **kw)


def build_vsearch(scratch, binary):
    """`swift build -c release --scratch-path SCRATCH` from the repository root. On failure: exits when `binary`
    does not exist, else warns and returns False (the existing binary is used); True when the build succeeded."""
    print(f"swift build -c release --scratch-path {scratch}", flush=True)
    r = subprocess.run(["swift", "build", "-c", "release", "--scratch-path", scratch], cwd=ROOT,
                       capture_output=True, text=True)
    if r.returncode != 0:
        if not os.path.exists(binary):
            sys.exit("swift build failed:\n" + (r.stdout + r.stderr)[-3000:])
        print("WARNING: swift build failed; using the existing binary\n" + (r.stdout + r.stderr)[-1500:], flush=True)
        return False
    return True


# ---------------------------------------------------------------- parsing and logging
def to_ms(text):
    """wrk's latency text ("812.00us", "1.20ms", "2.01s") in milliseconds."""
    value, unit = re.match(r"([\d.]+)(us|ms|s)", text).groups()
    return float(value) * {"us": 0.001, "ms": 1, "s": 1000}[unit]


def log(*args):
    """Progress to stderr, flushed (stdout is kept for the report)."""
    print(*args, file=sys.stderr, flush=True)
