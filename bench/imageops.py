#!/usr/bin/env python3
"""ImageOps benchmark: vsearch's thumbnail job and upload preparation against
libvips (vipsthumbnail and pyvips), Pillow, Pillow-SIMD (AVX2) and OpenCV, on the same inputs,
in the same run.

    python3 bench/imageops.py            # everything (~10-15 min on 2 cores)
    python3 bench/imageops.py --reps 1 --skip-png-table   # a quick look
    python3 bench/imageops.py --record   # also put the report in bench/RESULTS.md (replacing the old one)

See bench/README.md. Measures CPU seconds (user+sys of the measured process
and every child it waited for, from wait4), wall seconds and peak RSS
(ru_maxrss); the median of --reps runs; every output's size, format and JPEG
quality is checked before anything is reported.
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WORK = os.path.join(HERE, "work")
INPUTS = os.path.join(WORK, "inputs")
OUT = os.path.join(WORK, "out")
VSEARCH = os.path.join(ROOT, ".build-bench", "release", "vsearch")
PEERS = os.path.join(HERE, "imageops_peers.py")
sys.path.insert(0, HERE)
import imageops_peers as P  # noqa: E402  (the rule and the header reader)
from benchlib import loadavg, machine, replace_section, sh  # noqa: E402  (bench/benchlib.py)

NCPU = os.cpu_count() or 1
APT_TOOLS = {"vipsthumbnail": "libvips-tools", "convert-im6.q16": "imagemagick-6.q16"}
PIP = {"PIL": "pillow", "cv2": "opencv-python-headless", "pyvips": "pyvips", "numpy": "numpy"}
# Pillow-SIMD replaces Pillow's `PIL` module, so it lives in a venv of its own; PyPI has only its
# source, built here with AVX2 (`CC="cc -mavx2"`, as its README asks; ~1 min). Its peer runs
# imageops_peers.py's Pillow code (draft + reducing_gap) under that venv's Python.
PILLOW_SIMD_VENV = os.path.join(WORK, "pillow-simd-venv")
PILLOW_SIMD_PY = os.path.join(PILLOW_SIMD_VENV, "bin", "python")

# ------------------------------------------------------------------ inputs
BG = "/usr/share/backgrounds"
WP = "/usr/share/wallpapers"
# (name in the set, Debian package, source file, how it is made)
#   copy: as shipped; prog: re-encoded progressive by ImageMagick (-interlace Plane -quality 92)
#   alpha: RGBA PNG with a radial alpha mask (transparent corners, opaque centre)
#   noiccp: the PNG's chunks copied except iCCP (pixels untouched): this file's profile is one libpng
#     warns about ("known incorrect sRGB profile"), which vsearch rejects; see compat_check()
#   up20: upscaled by ImageMagick to 5472x3648 (20 MP), then like the suffix
MAIN = [
    ("kleiber.jpg", "lomiri-wallpapers-20.04", f"{BG}/Kleiber_by_Lukas_Baubkus.jpg", "copy"),
    ("safelanding.jpg", "plasma-workspace-wallpapers", f"{WP}/SafeLanding/contents/images/5120x2880.jpg", "copy"),
    ("shell.jpg", "plasma-workspace-wallpapers", f"{WP}/Shell/contents/images/5120x2880.jpg", "copy"),
    ("string.jpg", "ukui-wallpapers", f"{BG}/string.jpg", "copy"),
    ("umang.jpg", "lomiri-wallpapers-20.04", f"{BG}/umang_by_Abhishek_Mudgal.jpg", "copy"),
    ("default2004.jpg", "ukui-wallpapers", f"{BG}/2004default.jpg", "copy"),
    ("wood.jpg", "mate-backgrounds", f"{BG}/mate/nature/Wood.jpg", "copy"),
    ("analogpattern.jpg", "lomiri-wallpapers-16.04", f"{BG}/analogpattern_by_Peter_Nerlich.jpg", "copy"),
    ("volna-prog.jpg", "plasma-workspace-wallpapers", f"{WP}/Volna/contents/images/5120x2880.jpg", "copy"),
    ("infinite-sea-prog.jpg", "lomiri-wallpapers-20.04", f"{BG}/Infinite-Sea_by_Aury88.jpg", "copy"),
    ("seeding-prog.jpg", "lomiri-wallpapers-20.04", f"{BG}/seeding_by_Clements_Engelhardt.jpg", "copy"),
    ("dragonfly-prog.jpg", "lomiri-wallpapers-20.04", f"{BG}/Dragonfly_by_Bolly.jpg", "copy"),
    ("sunset-prog.jpg", "lomiri-wallpapers-16.04", f"{BG}/sunset_by_Aitzol_Berasategi.jpg", "copy"),
    ("friends-portrait-prog.jpg", "lomiri-wallpapers-16.04", f"{BG}/friends_by_Aitzol_Berasategi.jpg", "copy"),
    ("honeywave-improg.jpg", "plasma-workspace-wallpapers", f"{WP}/Honeywave/contents/images/5120x2880.jpg", "prog"),
    ("fossa-improg.jpg", "lomiri-wallpapers-20.04", f"{BG}/Fossa_by_Jasper_Roks.jpg", "prog"),
    ("kay-rgba.png", "plasma-workspace-wallpapers", f"{WP}/Kay/contents/images/5120x2880.png", "copy"),
    ("goldfish-rgba.png", "ukui-wallpapers", f"{BG}/goldfish.png", "copy"),
    ("icecold-alpha.png", "plasma-workspace-wallpapers", f"{WP}/IceCold/contents/images/5120x2880.png", "alpha"),
    ("mouse-alpha.png", "ukui-wallpapers", f"{BG}/the-mouse.jpg", "alpha"),
    ("altai-rgb.png", "plasma-workspace-wallpapers", f"{WP}/Altai/contents/images/5120x2880.png", "noiccp"),
    ("canopee-rgb.png", "plasma-workspace-wallpapers", f"{WP}/Canopee/contents/images/3840x2160.png", "copy"),
]
MP20 = [
    ("kleiber-20mp.jpg", "lomiri-wallpapers-20.04", f"{BG}/Kleiber_by_Lukas_Baubkus.jpg", "copy"),
    ("painting-24mp.jpg", "lomiri-wallpapers-20.04", f"{BG}/Painting-Colors_by__herobrine7gamer.jpg", "copy"),
    ("elephants-18mp-prog.jpg", "mate-backgrounds", f"{BG}/mate/abstract/Elephants_5640x3172.jpg", "copy"),
    ("string-up20-prog.jpg", "ukui-wallpapers", f"{BG}/string.jpg", "up20prog"),
    ("patak-up20-alpha.png", "plasma-workspace-wallpapers", f"{WP}/Patak/contents/images/5120x2880.png", "up20alpha"),
    ("altai-up20-rgb.png", "plasma-workspace-wallpapers", f"{WP}/Altai/contents/images/5120x2880.png", "up20"),
]
SETS = {"main": MAIN, "mp20": MP20}
IM = "/usr/bin/convert-im6.q16"  # the real ImageMagick (a stand-in may shadow `convert` on PATH)


def ensure_tools():
    missing_apt = [pkg for tool, pkg in APT_TOOLS.items() if not shutil.which(tool) and not os.path.exists(f"/usr/bin/{tool}")]
    missing_apt += sorted({pkg for s in SETS.values() for _, pkg, src, _ in s if not os.path.exists(src)})
    if missing_apt:
        print("apt-get install", " ".join(missing_apt), flush=True)
        sh(["apt-get", "update", "-qq"])
        sh(["apt-get", "install", "-y", "-qq", "--no-install-recommends"] + sorted(set(missing_apt)),
           env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"), stdout=subprocess.DEVNULL)
    missing_pip = []
    for mod, pkg in PIP.items():
        try:
            __import__(mod)
        except ImportError:
            missing_pip.append(pkg)
    if missing_pip:
        print("pip install", " ".join(missing_pip), flush=True)
        sh([sys.executable, "-m", "pip", "install", "-q"] + missing_pip)
    ensure_pillow_simd()


def ensure_pillow_simd():
    """Builds Pillow-SIMD with AVX2 into bench/work/pillow-simd-venv unless it is there."""
    if os.path.exists(PILLOW_SIMD_PY) and subprocess.run(
            [PILLOW_SIMD_PY, "-c", "import PIL.Image"], capture_output=True).returncode == 0:
        return
    missing = [pkg for pkg in ("python3-venv", "python3-dev", "libjpeg62-turbo-dev", "zlib1g-dev", "gcc")
               if subprocess.run(["dpkg", "-s", pkg], capture_output=True).returncode != 0]
    if missing:
        sh(["apt-get", "install", "-y", "-qq", "--no-install-recommends"] + missing,
           env=dict(os.environ, DEBIAN_FRONTEND="noninteractive"), stdout=subprocess.DEVNULL)
    print("building Pillow-SIMD (AVX2) into", PILLOW_SIMD_VENV, flush=True)
    shutil.rmtree(PILLOW_SIMD_VENV, ignore_errors=True)
    sh(["/usr/bin/python3", "-m", "venv", PILLOW_SIMD_VENV])
    sh([PILLOW_SIMD_PY, "-m", "pip", "install", "-q", "--no-binary", "pillow-simd", "pillow-simd"],
       env=dict(os.environ, CC="cc -mavx2"))


def build_vsearch():
    print("swift build -c release --scratch-path .build-bench", flush=True)
    r = subprocess.run(["swift", "build", "-c", "release", "--scratch-path", ".build-bench"], cwd=ROOT,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        if not os.path.exists(VSEARCH):
            sys.exit("swift build failed:\n" + r.stdout[-3000:])
        print("WARNING: swift build failed (Sources being edited?); using the existing binary", flush=True)


def strip_png_chunk(src, dst, ctype):
    import struct
    with open(src, "rb") as f:
        data = f.read()
    out, pos = [data[:8]], 8
    while pos < len(data):
        (ln,) = struct.unpack(">I", data[pos:pos + 4])
        chunk = data[pos:pos + 12 + ln]
        if chunk[4:8] != ctype:
            out.append(chunk)
        pos += 12 + ln
    with open(dst, "wb") as f:
        f.write(b"".join(out))


def compat_check():
    """vsearch on real files that every peer reads: the shipped PNGs whose iCCP libpng warns about."""
    lines = []
    for src in (f"{WP}/Altai/contents/images/5120x2880.png", "/usr/share/backgrounds/mate/desktop/Float-into-MATE.png"):
        if not os.path.exists(src):
            continue
        d = os.path.join(OUT, "compat")
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        t = subprocess.run([VSEARCH, "thumbs", src, d, "--force", "--sizes", "400"], capture_output=True, text=True)
        tl = subprocess.run([VSEARCH, "thumbs", src, d, "--force", "--sizes", "400", "--lenient"], capture_output=True, text=True)
        p = subprocess.run([VSEARCH, "prepare", src, os.path.join(d, "p.jpg")], capture_output=True, text=True)
        err = (p.stderr or t.stdout + t.stderr).strip().splitlines()
        ok = t.returncode == 0 and p.returncode == 0
        lines.append(f"- {'OK' if ok else 'FAIL'} {src}: thumbs exit {t.returncode}, thumbs --lenient exit {tl.returncode}, "
                     f"prepare exit {p.returncode}" + (f" (`{err[-1].strip()}`)" if not ok and err else "")
                     + "; Pillow, OpenCV and libvips read it")
    return lines


def make_one(dst, src, how):
    tmp = dst + ".tmp" + os.path.splitext(dst)[1]
    if how == "copy":
        shutil.copyfile(src, tmp)
    elif how == "noiccp":
        strip_png_chunk(src, tmp, b"iCCP")
    elif how == "prog":
        sh([IM, src, "-interlace", "Plane", "-quality", "92", tmp])
    elif how in ("alpha", "up20alpha"):
        from PIL import Image
        w, h = Image.open(src).size
        pre = ["-resize", "5472x3648!"] if how == "up20alpha" else []
        if pre:
            w, h = 5472, 3648
        sh([IM, src] + pre + ["-alpha", "off", "(", "-size", f"{w}x{h}", "radial-gradient:white-black",
                              "-level", "10%,60%", ")", "-compose", "CopyOpacity", "-composite",
                              "-define", "png:compression-level=6", f"PNG32:{tmp}"])
    elif how == "up20":
        sh([IM, src, "-resize", "5472x3648!", "-define", "png:compression-level=6", tmp])
    elif how == "up20prog":
        sh([IM, src, "-resize", "5472x3648!", "-interlace", "Plane", "-quality", "92", tmp])
    else:
        raise ValueError(how)
    os.replace(tmp, dst)


def make_inputs():
    """(Re)creates the input sets from the installed packages; idempotent."""
    for name, spec in SETS.items():
        d = os.path.join(INPUTS, name)
        os.makedirs(d, exist_ok=True)
        for fn, _, src, how in spec:
            dst = os.path.join(d, fn)
            if not os.path.exists(dst):
                print(f"  making {name}/{fn} ({how})", flush=True)
                make_one(dst, src, how)
        # nothing else in the folder (vsearch thumbs walks it)
        keep = {fn for fn, *_ in spec}
        for fn in os.listdir(d):
            if fn not in keep:
                p = os.path.join(d, fn)
                shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)
    # the main set split by source format, for the per-format breakdown (hard links)
    for sub, ext in (("png", ".png"), ("jpeg", ".jpg")):
        d = os.path.join(INPUTS, sub)
        os.makedirs(d, exist_ok=True)
        for fn, *_ in MAIN:
            if fn.endswith(ext) and not os.path.exists(os.path.join(d, fn)):
                os.link(os.path.join(INPUTS, "main", fn), os.path.join(d, fn))


def describe_inputs(setname):
    from PIL import Image
    rows = []
    d = os.path.join(INPUTS, setname)
    for fn in sorted(os.listdir(d)):
        p = os.path.join(d, fn)
        im = Image.open(p)
        kind = im.format + ("-progressive" if im.info.get("progressive") or im.info.get("progression") else "")
        rows.append((fn, kind, im.mode, im.size, os.path.getsize(p)))
    return rows


# ------------------------------------------------------------- measuring
def measure(cmds, pin, env_extra=None):
    """Starts every command at once (shards), waits for all; returns (cpu_s, wall_s, rss_mb).
    cpu = user+sys of each process and its waited-for children (wait4); rss = sum of the
    processes' peak RSS (they run at the same time, so this is an upper bound of the peak)."""
    env = dict(os.environ)
    env.update(env_extra or {})
    t0 = time.perf_counter()
    procs = []
    for c in cmds:
        if pin:
            c = ["taskset", "-c", "0"] + c
        procs.append(subprocess.Popen(c, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
    cpu, rss, errs = 0.0, 0, []
    for pr in procs:
        _, status, ru = os.wait4(pr.pid, 0)
        pr.returncode = os.waitstatus_to_exitcode(status)
        cpu += ru.ru_utime + ru.ru_stime
        rss += ru.ru_maxrss
        err = pr.stderr.read().decode(errors="replace")
        pr.stderr.close()
        if pr.returncode != 0:
            errs.append(f"exit {pr.returncode}: {err.strip()[-400:]}")
    wall = time.perf_counter() - t0
    return cpu, wall, rss / 1024.0, errs


def shards(paths, n):
    """n lists balanced by pixel count (greedy, largest first)."""
    sized = sorted(paths, key=lambda p: -(lambda s: s[0] * s[1])(P.upright(p)[1]))
    out = [[] for _ in range(n)]
    load = [0] * n
    for p in sized:
        w, h = P.upright(p)[1]
        i = load.index(min(load))
        out[i].append(p)
        load[i] += w * h
    return out


def commands(tool, job, setname, cores, outdir, extra=None):
    """The command lines (one per process) for a tool/job/cores."""
    src = os.path.join(INPUTS, setname)
    paths = sorted(os.path.join(src, f) for f in os.listdir(src))
    if tool in VARIANTS:
        extra = VARIANTS[tool] + (extra or [])
        tool = "vsearch"
    if tool == "vsearch" and job == "thumbs":
        return [[VSEARCH, "thumbs", src, outdir, "--jobs", str(1 if cores == 1 else NCPU), "--force"] + (extra or [])]
    if tool == "vsearch" and job in ("prep512", "prep1024"):
        # Folder mode: one process for the whole set, like every peer.
        return [[VSEARCH, "prepare", src, outdir, "--jobs", str(1 if cores == 1 else NCPU)]
                + (["--high-quality"] if job == "prep1024" else []) + (extra or [])]
    peer = "vsearch-prepare" if tool == "vsearch" else tool
    python = sys.executable
    if tool == "pillow-simd":  # the same Pillow code, under the venv where PIL is Pillow-SIMD
        python, peer = PILLOW_SIMD_PY, "pillow"
    parts = [paths] if cores == 1 else shards(paths, NCPU)
    cmds = []
    for i, part in enumerate(parts):
        lst = os.path.join(WORK, f"list-{setname}-{i}-{len(parts)}.txt")
        with open(lst, "w") as f:
            f.write("\n".join(part) + "\n")
        cmds.append([python, PEERS, peer, job, lst, outdir, "--threads", "1", "--vsearch", VSEARCH])
    return cmds


# vsearch thumbs with other options, run in the main matrix (thumbs only) beside the default
# The fast end of the PNG frontier, beside the default (the cheapest setting no larger than Pillow's; issue 28).
VARIANTS = {"vsearch-l4adaptive": ["--png-level", "4", "--png-filter", "adaptive"]}

SINGLE_ENV = {"OMP_NUM_THREADS": "1", "VIPS_CONCURRENCY": "1", "OPENCV_FOR_THREADS_NUM": "1"}


# ------------------------------------------------------------ verifying
STD_LUMA = [16, 11, 10, 16, 24, 40, 51, 61, 12, 12, 14, 19, 26, 58, 60, 55, 14, 13, 16, 24, 40, 57, 69, 56,
            14, 17, 22, 29, 51, 87, 80, 62, 18, 22, 37, 56, 68, 109, 103, 77, 24, 35, 55, 64, 81, 104, 113, 92,
            49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99]


def luma_table(q):
    s = 5000 // q if q < 50 else 200 - 2 * q
    return sorted(min(255, max(1, (v * s + 50) // 100)) for v in STD_LUMA)


def jpeg_quality(im):
    t = sorted(im.quantization[0])
    for q in range(100, 0, -1):
        if luma_table(q) == t:
            return q
    return None


def verify(tool, job, setname, outdir, out_fmt=None):
    """Checks every expected output. Returns (n_sources, problems, bytes_by_format)."""
    from PIL import Image, JpegImagePlugin
    src = os.path.join(INPUTS, setname)
    problems, nbytes = [], {"jpeg": 0, "png": 0}
    files = set(os.listdir(outdir)) - {"manifest.jsonl"} if os.path.isdir(outdir) else set()
    seen = set()
    n = 0
    for fn in sorted(os.listdir(src)):
        n += 1
        fmt, (w, h), _ = P.upright(os.path.join(src, fn))
        alpha_src = False
        if fmt == "png":
            alpha_src = Image.open(os.path.join(src, fn)).mode in ("RGBA", "LA")
        st = os.path.splitext(fn)[0]
        if job == "thumbs":
            ofmt = out_fmt or fmt
            ext = "png" if ofmt == "png" else "jpg"
            exp = []
            for N, (tw, th) in P.thumb_targets(w, h):
                name = f"{st}_thumb_{tw}x{th}.{ext}" if tool.startswith("vsearch") else f"{st}_thumb_{N}.{ext}"
                exp.append((name, (tw, th), ofmt, 85 if ofmt == "jpeg" else None, alpha_src))
        else:
            side, q = P.PREP[job]
            exp = [(f"{st}.jpg", P.fit(w, h, side), "jpeg", q, alpha_src)]
        for name, size, efmt, q, alpha in exp:
            seen.add(name)
            p = os.path.join(outdir, name)
            if name not in files:
                problems.append(f"{name}: missing")
                continue
            nbytes[efmt] += os.path.getsize(p)
            im = Image.open(p)
            if im.size != size:
                problems.append(f"{name}: {im.size[0]}x{im.size[1]}, want {size[0]}x{size[1]}")
            if im.format.lower() != efmt:
                problems.append(f"{name}: {im.format}, want {efmt}")
                continue
            if efmt == "jpeg":
                got = jpeg_quality(im)
                if got != q:
                    problems.append(f"{name}: JPEG quality {got}, want {q}")
                samp = JpegImagePlugin.get_sampling(im)
                want = 2 if q < 90 else 0
                if samp != want:
                    problems.append(f"{name}: chroma sampling {samp}, want {want} (0=4:4:4, 2=4:2:0)")
                if alpha and "alpha" in st:  # transparent corners must turn white
                    px = im.convert("RGB").getpixel((0, 0))
                    if min(px) < 240:
                        problems.append(f"{name}: transparent corner flattened to {px}, want white")
            elif alpha and im.mode not in ("RGBA", "LA", "PA"):
                problems.append(f"{name}: alpha dropped ({im.mode})")
    extra = files - seen
    for name in sorted(extra):
        problems.append(f"{name}: unexpected output")
    return n, problems, nbytes


# ------------------------------------------------------------------ runs
def run_case(tool, job, setname, cores, rep, extra=None, tag="", out_fmt=None):
    outdir = os.path.join(OUT, f"{setname}-{tool}-{job}-{cores}{tag}")
    shutil.rmtree(outdir, ignore_errors=True)
    os.makedirs(outdir)
    cmds = commands(tool, job, setname, cores, outdir, extra)
    env = SINGLE_ENV  # every process single-threaded; "all cores" = 2 processes or vsearch --jobs 2
    cpu, wall, rss, errs = measure(cmds, pin=(cores == 1), env_extra=env)
    n, problems, nbytes = verify(tool, job, setname, outdir, out_fmt)
    return dict(tool=tool, job=job, set=setname, cores=cores, rep=rep, cpu=cpu, wall=wall, rss=rss,
                n=n, problems=errs + problems, bytes=nbytes, procs=len(cmds))


def median_rows(results):
    groups = {}
    for r in results:
        groups.setdefault((r["tool"], r["job"], r["set"], r["cores"]), []).append(r)
    rows = []
    for key, rs in groups.items():
        cpu = statistics.median(r["cpu"] for r in rs)
        rows.append(dict(tool=key[0], job=key[1], set=key[2], cores=key[3], n=rs[0]["n"], cpu=cpu,
                         cpus=[round(r["cpu"], 2) for r in rs],
                         wall=statistics.median(r["wall"] for r in rs), rss=max(r["rss"] for r in rs),
                         ips=rs[0]["n"] / cpu if cpu else 0, bytes=rs[-1]["bytes"],
                         problems=sorted({p for r in rs for p in r["problems"]}), procs=rs[0]["procs"]))
    return rows


def png_defaults():
    import re
    h = subprocess.run([VSEARCH, "thumbs", "make", "--help"], capture_output=True, text=True).stdout
    h = re.sub(r"\s+", " ", h)
    lv = re.search(r"--png-level <png-level> .*?\(default: (\w+)\)", h)
    fl = re.search(r"--png-filter <png-filter> .*?default: (\w+)\)", h)
    return f"--png-level {lv.group(1) if lv else '?'} --png-filter {fl.group(1) if fl else '?'}"


def startup_cost(reps=20):
    """CPU and wall of `vsearch --version` (process start-up), median of reps."""
    cpus, walls, rss = [], [], 0
    for _ in range(reps):
        c, w, r, _ = measure([[VSEARCH, "--version"]], pin=True)
        cpus.append(c)
        walls.append(w)
        rss = max(rss, r)
    pycpu = []
    for _ in range(5):
        c, _, _, _ = measure([[sys.executable, "-c", "pass"]], pin=True)
        pycpu.append(c)
    return statistics.median(cpus), statistics.median(walls), rss, statistics.median(pycpu)


def versions():
    v = {}
    v["vsearch"] = subprocess.run([VSEARCH, "--version"], capture_output=True, text=True).stdout.strip()
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "Sources", "Package.swift"], cwd=ROOT,
                           capture_output=True, text=True).stdout.strip()
    v["vsearch"] += f", built from {head}" + (" + uncommitted changes in Sources" if dirty else "")
    v["libvips"] = subprocess.run(["vips", "--version"], capture_output=True, text=True).stdout.strip()
    import PIL
    import cv2
    import pyvips
    v["Pillow"] = PIL.__version__
    if os.path.exists(PILLOW_SIMD_PY):
        simd = subprocess.run([PILLOW_SIMD_PY, "-c", "import PIL, PIL.features as f; print(PIL.__version__, "
                               "'libjpeg-turbo' if f.check_feature('libjpeg_turbo') else 'libjpeg')"],
                              capture_output=True, text=True).stdout.strip()
        v["Pillow-SIMD"] = f"{simd} (built from PyPI's source with CC='cc -mavx2' into bench/work/pillow-simd-venv)"
    v["OpenCV"] = cv2.__version__
    v["pyvips"] = f"{pyvips.__version__} (libvips {pyvips.version(0)}.{pyvips.version(1)}.{pyvips.version(2)})"
    v["Python"] = platform.python_version()
    return v


def fmt_bytes(b):
    return f"{b / 1e6:.2f} MB" if b else "-"


def table(rows, vs_ips):
    head = ["tool", "job", "cores", "imgs", "img/CPU-s", "CPU s (runs)", "wall s", "peak RSS MB",
            "JPEG out", "PNG out", "vsearch/peer", "check"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        ratio = vs_ips.get((r["job"], r["set"], r["cores"]))
        ratio_s = "-" if r["tool"].startswith("vsearch") or not ratio else f"{ratio / r['ips']:.2f}x"
        check = "OK" if not r["problems"] else f"FLAG {len(r['problems'])}"
        cores = "1 (taskset)" if r["cores"] == 1 else f"{NCPU}" + (" (--jobs)" if r["tool"].startswith("vsearch") and r["job"] == "thumbs" else f" ({r['procs']} procs)")
        label = r["tool"] if r["tool"] not in VARIANTS else "vsearch " + " ".join(VARIANTS[r["tool"]])
        lines.append("| " + " | ".join([
            label, r["job"], cores, str(r["n"]), f"{r['ips']:.2f}",
            f"{r['cpu']:.2f} ({', '.join(str(c) for c in r['cpus'])})", f"{r['wall']:.2f}", f"{r['rss']:.0f}",
            fmt_bytes(r["bytes"]["jpeg"]), fmt_bytes(r["bytes"]["png"]), ratio_s, check]) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=3, help="runs per case; the median CPU is reported (3)")
    ap.add_argument("--tools", default="vsearch,vipsthumbnail,pyvips,pillow,pillow-simd,opencv",
                    help="vsearch and peers: vipsthumbnail, pyvips, pillow, pillow-simd, opencv")
    ap.add_argument("--variants", default="vsearch-l4adaptive",
                    help="vsearch thumbs variants also run in the main matrix (thumbs only); '' for none")
    ap.add_argument("--jobs", default="thumbs,prep512,prep1024")
    ap.add_argument("--no-build", action="store_true", help="use the existing .build-bench binary")
    ap.add_argument("--skip-setup", action="store_true", help="don't check apt/pip packages")
    ap.add_argument("--skip-png-table", action="store_true")
    ap.add_argument("--skip-breakdown", action="store_true", help="skip the per-source-format table")
    ap.add_argument("--skip-mp20", action="store_true")
    ap.add_argument("--record", action="store_true", help="replace this benchmark's section of bench/RESULTS.md with the report")
    a = ap.parse_args()
    started = time.time()
    if not a.skip_setup:
        ensure_tools()
    if not a.no_build or not os.path.exists(VSEARCH):
        build_vsearch()
    make_inputs()
    tools = a.tools.split(",")
    variants = [v for v in a.variants.split(",") if v and "vsearch" in tools]
    jobs = a.jobs.split(",")
    for d in ("main", "mp20"):  # warm the page cache
        for fn in os.listdir(os.path.join(INPUTS, d)):
            with open(os.path.join(INPUTS, d, fn), "rb") as f:
                while f.read(1 << 22):
                    pass

    report = []
    date = subprocess.run(["date", "-u"], capture_output=True, text=True).stdout.strip()
    report.append(f"## ImageOps: thumbnails and upload preparation\n\nRun {date} by `python3 bench/imageops.py` "
                  f"(reps {a.reps}).\n")
    report.append(f"- Machine: {machine()}; load average at start {loadavg()} (shared machine: other work "
                  "may hold a core, so compare CPU seconds; all-cores wall times are only indicative)")
    for k, v in versions().items():
        report.append(f"- {k}: {v}")
    st_cpu, st_wall, st_rss, py_cpu = startup_cost()
    report.append(f"- Process start-up: `vsearch --version` {st_cpu * 1000:.1f} ms CPU, {st_wall * 1000:.1f} ms wall, "
                  f"{st_rss:.0f} MB RSS (median of 20); `python3 -c pass` {py_cpu * 1000:.1f} ms CPU (every tool, "
                  f"vsearch included, runs one process per set and pays this once)")
    inputs = describe_inputs("main")
    npx = sum(s[0] * s[1] for *_, s, _ in inputs)
    kinds = {}
    for _, kind, mode, _, _ in inputs:
        kinds[f"{kind} {mode}"] = kinds.get(f"{kind} {mode}", 0) + 1
    report.append(f"- Inputs (main): {len(inputs)} files, {npx / 1e6:.0f} MP in all: "
                  + ", ".join(f"{v} {k}" for k, v in sorted(kinds.items())))
    print("\n".join(report), flush=True)

    # ---- main matrix, reps interleaved so noise spreads over every tool
    results = []
    for rep in range(a.reps):
        for cores in (1, NCPU):
            for job in jobs:
                for tool in tools + (variants if job == "thumbs" else []):
                    r = run_case(tool, job, "main", cores, rep)
                    results.append(r)
                    print(f"  rep {rep} {tool:14} {job:8} cores {cores}: cpu {r['cpu']:.2f}s wall {r['wall']:.2f}s "
                          f"rss {r['rss']:.0f}MB {'OK' if not r['problems'] else 'FLAG ' + r['problems'][0]}", flush=True)
    rows = median_rows(results)
    order = {t: i for i, t in enumerate(tools + variants)}
    rows.sort(key=lambda r: (jobs.index(r["job"]), r["cores"], order[r["tool"]]))
    vs_ips = {(r["job"], r["set"], r["cores"]): r["ips"] for r in rows if r["tool"] == "vsearch"}
    report.append("\n### Main set: CPU efficiency (median CPU of the runs; images = source files)\n")
    report.append(table(rows, vs_ips))

    # ---- targets
    report.append("\n### Targets\n")
    verdicts = []

    def best_peer(job, cores):
        peers = [r for r in rows if r["job"] == job and r["cores"] == cores and not r["tool"].startswith("vsearch")]
        return max(peers, key=lambda r: r["ips"]) if peers else None

    for job, need in (("thumbs", 2.0), ("prep512", 1.25), ("prep1024", 1.25)):
        if job not in jobs or "vsearch" not in tools:
            continue
        for cores in (1, NCPU):
            bp = best_peer(job, cores)
            v = vs_ips.get((job, "main", cores))
            if not bp or not v:
                continue
            ratio = v / bp["ips"]
            ok = ratio >= need
            bytes_note = ""
            if job == "thumbs":
                # Equal output (issue 28): the lead counts only at PNG bytes no larger than the peer's.
                vrow = next(r for r in rows if r["tool"] == "vsearch" and r["job"] == job and r["cores"] == cores)
                vb, pb = vrow["bytes"]["png"], bp["bytes"]["png"]
                ok = ok and vb <= pb
                bytes_note = (f"; PNG bytes vsearch {fmt_bytes(vb)} vs {bp['tool']} {fmt_bytes(pb)} = {vb / pb:.3f} "
                              f"(must be <= 1)") if pb else ""
            verdicts.append(f"- {'PASS' if ok else 'FAIL'}: {job}, {cores} core(s): vsearch {v:.2f} img/CPU-s vs fastest "
                            f"peer {bp['tool']} {bp['ips']:.2f} = {ratio:.2f}x (target >= {need}x){bytes_note}")
    for var in variants:
        for cores in (1, NCPU):
            vr = next((r for r in rows if r["tool"] == var and r["job"] == "thumbs" and r["cores"] == cores), None)
            bp = best_peer("thumbs", cores)
            vv = next((r for r in rows if r["tool"] == "vipsthumbnail" and r["job"] == "thumbs" and r["cores"] == cores), None)
            if vr and bp:
                verdicts.append(f"- info: vsearch {' '.join(VARIANTS[var])}, thumbs, {cores} core(s): {vr['ips']:.2f} img/CPU-s = "
                                f"{vr['ips'] / bp['ips']:.2f}x {bp['tool']}"
                                + (f"; PNG bytes {vr['bytes']['png'] / vv['bytes']['png']:.3f} of vipsthumbnail's" if vv else ""))
    vt = next((r for r in rows if r["tool"] == "vsearch" and r["job"] == "thumbs" and r["cores"] == 1), None)
    vv = next((r for r in rows if r["tool"] == "vipsthumbnail" and r["job"] == "thumbs" and r["cores"] == 1), None)
    if vt and vv:
        pr = vt["bytes"]["png"] / vv["bytes"]["png"]
        verdicts.append(f"- {'PASS' if pr <= 1.05 else 'FAIL'}: thumbnail PNG bytes vsearch {fmt_bytes(vt['bytes']['png'])} vs "
                        f"vipsthumbnail compression 6 {fmt_bytes(vv['bytes']['png'])} = {pr:.3f} (target <= 1.05)")
        jq = [p for p in vt["problems"] if "JPEG quality" in p or "sampling" in p]
        verdicts.append(f"- {'PASS' if not jq else 'FAIL'}: thumbnail JPEGs at libjpeg quality 85, 4:2:0 "
                        f"(quantisation tables read back from every output)"
                        f" (JPEG bytes vsearch {fmt_bytes(vt['bytes']['jpeg'])}, vipsthumbnail {fmt_bytes(vv['bytes']['jpeg'])})")
    for r in rows:
        if r["problems"]:
            verdicts.append(f"- FLAG {r['tool']} {r['job']} cores {r['cores']}: {len(r['problems'])} problem(s), e.g. "
                            + "; ".join(r["problems"][:3]))
    if not any(r["problems"] for r in rows):
        verdicts.append("- Every output of every tool had the rule's dimensions and the expected format/quality.")

    # ---- 20 MP memory check
    if not a.skip_mp20:
        mp = []
        for tool in tools:
            for job in (["thumbs", "prep1024"] if tool == "vsearch" else ["thumbs"]):
                r = run_case(tool, job, "mp20", NCPU, 0)
                mp.append(r)
                print(f"  mp20 {tool:14} {job}: cpu {r['cpu']:.2f}s rss {r['rss']:.0f}MB", flush=True)
        mrows = median_rows(mp)
        mvs = {(r["job"], r["set"], r["cores"]): r["ips"] for r in mrows if r["tool"] == "vsearch"}
        desc = describe_inputs("mp20")
        report.append("\n### 20-megapixel set, all cores, peak RSS (1 run)\n")
        report.append("Inputs: " + "; ".join(f"{fn} {s[0]}x{s[1]} {k} {m}" for fn, k, m, s, _ in desc)
                      + ". `-up20-` files are upscaled by ImageMagick from smaller real wallpapers (no 20 MP PNG ships in Debian's wallpaper packages); the others are real.\n")
        report.append(table(mrows, mvs))
        vr = next((r for r in mrows if r["tool"] == "vsearch" and r["job"] == "thumbs"), None)
        if vr:
            verdicts.append(f"- {'PASS' if vr['rss'] <= 300 else 'FAIL'}: peak RSS of vsearch thumbs --jobs {NCPU} on the "
                            f"20 MP set {vr['rss']:.0f} MB (target <= 300 MB)")
        vp = next((r for r in mrows if r["tool"] == "vsearch" and r["job"] == "prep1024"), None)
        if vp:
            verdicts.append(f"- info: peak RSS of one `vsearch prepare --high-quality` process on the 20 MP set: "
                            f"{vp['rss'] / vp['procs']:.0f} MB per loop (sum over {vp['procs']} concurrent loops {vp['rss']:.0f} MB)")
    report.insert(report.index("\n### Targets\n") + 1, "\n".join(verdicts))

    # ---- per source format (1 core, 1 run): where the time goes
    bd = {}
    if not a.skip_breakdown:
        report.append("\n### By source format (1 core, 1 run each; 16 JPEG / 6 PNG sources of the main set)\n")
        bt = ["| job | sources | " + " | ".join(f"{t} CPU s" for t in tools) + " |", "|---|---|" + "---|" * len(tools)]
        for job in [j for j in ("thumbs", "prep512") if j in jobs]:
            for setname in ("jpeg", "png"):
                cells = []
                for tool in tools:
                    r = run_case(tool, job, setname, 1, 0)
                    bd[(tool, job, setname)] = r
                    cells.append(f"{r['cpu']:.2f}" + ("" if not r["problems"] else " FLAG"))
                    print(f"  breakdown {tool:14} {job} {setname}: cpu {r['cpu']:.2f}s", flush=True)
                bt.append(f"| {job} | {setname} | " + " | ".join(cells) + " |")
        report.append("\n".join(bt))
        peers_jpeg = [(t, bd[(t, "thumbs", "jpeg")]["cpu"]) for t in tools if t != "vsearch" and (t, "thumbs", "jpeg") in bd]
        if ("vsearch", "thumbs", "jpeg") in bd and peers_jpeg:
            t, c = min(peers_jpeg, key=lambda x: x[1])
            ratio = c / bd[("vsearch", "thumbs", "jpeg")]["cpu"]
            verdicts.append(f"- {'PASS' if ratio >= 1.5 else 'FAIL'}: thumbs, JPEG sources, 1 core: {ratio:.2f}x the fastest "
                            f"peer {t} ({c:.2f} vs {bd[('vsearch', 'thumbs', 'jpeg')]['cpu']:.2f} CPU s; target >= 1.5x)")
            report[report.index("\n### Targets\n") + 1] = "\n".join(verdicts)

    # ---- PNG trade-off table
    if not a.skip_png_table:
        report.append("\n### PNG trade-off (the 6 PNG sources, thumbs job, 1 core, 1 run each)\n")
        pt = ["| tool | setting | CPU s | img/CPU-s | PNG out | vs vipsthumbnail c6 | check |", "|---|---|---|---|---|---|---|"]
        labels = {"vipsthumbnail": "compression 6 (its default filter), 4 decodes per source",
                  "pyvips": "compression 6 (its default filter), cascade", "pillow": "compress_level 6",
                  "pillow-simd": "compress_level 6",
                  "opencv": "compression 6, default strategy"}
        cases = []
        for tool in [t for t in tools if t != "vsearch"]:
            r = bd.get((tool, "thumbs", "png")) or run_case(tool, "thumbs", "png", 1, 0)
            cases.append((tool, labels.get(tool, ""), r))
        cases.append(("pyvips-filterall", "compression 6, filter=all (libvips trying every row filter), cascade",
                      run_case("pyvips-filterall", "thumbs", "png", 1, 0)))
        ref = next((r for t, _, r in cases if t == "vipsthumbnail"), None)
        refb = ref["bytes"]["png"] if ref else 0
        grid = [(4, "none"), (4, "sub")] + [(lv, f) for lv in (1, 2, 4, 6, 7, 8) for f in ("up", "paeth", "adaptive")]
        for level, filt in grid:
            r = run_case("vsearch", "thumbs", "png", 1, 0, ["--png-level", str(level), "--png-filter", filt],
                         tag=f"-l{level}{filt}")
            cases.append(("vsearch", f"--png-level {level} --png-filter {filt}", r))
            print(f"  png table level {level} {filt}: cpu {r['cpu']:.2f}s png {r['bytes']['png']}", flush=True)
        r = run_case("vsearch", "thumbs", "png", 1, 0, ["--format", "jpeg"], tag="-jpeg", out_fmt="jpeg")
        cases.append(("vsearch", "--format jpeg (no PNG encoding: decode + resize + JPEG)", r))
        for tool, setting, r in cases:
            b = r["bytes"]["png"]
            pt.append(f"| {tool} | {setting} | {r['cpu']:.2f} | {r['n'] / r['cpu']:.2f} | "
                      f"{fmt_bytes(b) if b else fmt_bytes(r['bytes']['jpeg']) + ' JPEG'} | "
                      f"{(f'{b / refb:.3f}') if b and refb else '-'} | " + ("OK" if not r["problems"] else f"FLAG {r['problems'][0]}") + " |")
        report.append("\n".join(pt))
        # The bytes-per-CPU frontier: settings no other setting beats on both CPU and bytes.
        ours = [(setting, r["cpu"], r["bytes"]["png"]) for tool, setting, r in cases
                if tool == "vsearch" and r["bytes"]["png"] and not r["problems"]]
        frontier = [o for o in ours if not any(c <= o[1] and b <= o[2] and (c, b) != (o[1], o[2]) for _, c, b in ours)]
        frontier.sort(key=lambda o: o[1])
        report.append("\nFrontier (no other vsearch setting has both less CPU and fewer bytes): "
                      + "; ".join(f"`{st}` {c:.2f} s {fmt_bytes(b)}" for st, c, b in frontier) + ".")
        for peer in ("pillow-simd", "pillow"):
            pr = next((r for t, _, r in cases if t == peer), None)
            if pr and pr["bytes"]["png"]:
                fits = [o for o in ours if o[2] <= pr["bytes"]["png"]]
                if fits:
                    st, c, b = min(fits, key=lambda o: o[1])
                    report.append(f"\nCheapest vsearch setting no larger than {peer}'s {fmt_bytes(pr['bytes']['png'])}: `{st}`, "
                                  f"{c:.2f} CPU s, {fmt_bytes(b)} = {pr['cpu'] / c:.2f}x {peer}'s CPU ({pr['cpu']:.2f} s).")
                break
        report.append("\nSizes are the PNG bytes of all thumbnails of the 6 PNG sources; levels are libdeflate's (0...12). "
                      f"vsearch's defaults in this build: {png_defaults()}. "
                      "(Levels 9 and 10 were measured once by hand on this set, 2026-11-26: ~3.5x the CPU of level 7 for 1-4% "
                      "smaller files; left out to keep the run short.)")

    report.append("\n### Compatibility: shipped PNGs whose iCCP profile libpng warns about (\"known incorrect sRGB profile\")\n")
    report.extend(compat_check())

    # ---- flags in full
    allp = [(r["tool"], r["job"], r["set"], r["cores"], p) for r in rows for p in r["problems"]]
    if allp:
        report.append("\n### Problems found by the output check (first 40)\n")
        report.extend(f"- {t} {j} {s} cores {c}: {p}" for t, j, s, c, p in allp[:40])
    report.append(f"\nBenchmark wall time: {(time.time() - started) / 60:.1f} min; load average at the end {loadavg()}.\n")
    text = "\n".join(report)
    print("\n" + text)
    os.makedirs(WORK, exist_ok=True)
    with open(os.path.join(WORK, "imageops-report.md"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(WORK, "imageops-results.json"), "w") as f:
        json.dump(results, f, indent=1)
    if a.record:
        record(os.path.join(HERE, "RESULTS.md"), text)


def record(path, text):
    """Replaces this benchmark's section of RESULTS.md (keeping the others), or starts the file."""
    replace_section(path, "## ImageOps: thumbnails and upload preparation", text)


if __name__ == "__main__":
    main()
