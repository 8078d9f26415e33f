"""Helpers shared by the benchmarks in bench/: the machine and build a run describes,
and bench/RESULTS.md, where each benchmark owns one `## ` section and replaces only that one."""
import os
import platform
import socket
import subprocess
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
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
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
