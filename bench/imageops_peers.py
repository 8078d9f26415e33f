#!/usr/bin/env python3
"""One peer doing one ImageOps job over a list of images, in one process.

    python3 imageops_peers.py TOOL JOB LISTFILE OUTDIR [--threads N] [--vsearch PATH]

TOOL: pillow | opencv | pyvips | pyvips-filterall | vipsthumbnail | vsearch-prepare
JOB:  thumbs | prep512 | prep1024

Run by bench/imageops.py, which measures this process (and its children) with
wait4. Every peer works out the target sizes with the same rule as vsearch
(longer side N, other side rounded half up, at least 1 px; shrink only) from a
header read of its own, except vipsthumbnail, which sizes by itself (`-s N`)
and is checked like everyone else.

Outputs: thumbs -> OUTDIR/STEM_thumb_N.{jpg,png} (same format as the source);
prepare -> OUTDIR/STEM.jpg. Only the library under test is imported.
"""
import os
import struct
import subprocess
import sys

SIZES = [400, 800, 1200, 1600]
THUMB_Q = 85          # vsearch 0.85 -> libjpeg 85, 4:2:0
PNG_LEVEL = 6         # zlib level
PREP = {"prep512": (512, 97), "prep1024": (1024, 99)}  # vsearch 0.97 -> 97, 0.985 -> 99, both 4:4:4


# ---------------------------------------------------------------- the rule
def fit(w, h, n):
    """The size inside n x n (shrink only), other side rounded half up, >= 1."""
    if max(w, h) <= n:
        return (w, h)
    if w >= h:
        return (n, max(1, (2 * h * n + w) // (2 * w)))
    return (max(1, (2 * w * n + h) // (2 * h)), n)


def thumb_targets(w, h):
    """[(N, (tw, th))] largest first, for every N with max(w, h) > N."""
    return [(n, fit(w, h, n)) for n in sorted(SIZES, reverse=True) if max(w, h) > n]


# ------------------------------------------------- a header reader without deps
def _exif_orientation(seg):
    if seg[:6] != b"Exif\0\0":
        return 1
    t = seg[6:]
    if len(t) < 8:
        return 1
    e = "<" if t[:2] == b"II" else ">"
    off = struct.unpack(e + "I", t[4:8])[0]
    if off + 2 > len(t):
        return 1
    n = struct.unpack(e + "H", t[off:off + 2])[0]
    for i in range(n):
        p = off + 2 + 12 * i
        if p + 12 > len(t):
            break
        tag, typ, cnt = struct.unpack(e + "HHI", t[p:p + 8])
        if tag == 0x112:
            return struct.unpack(e + "H", t[p + 8:p + 10])[0]
    return 1


def header(path):
    """(format, stored_w, stored_h, orientation) for JPEG or PNG."""
    with open(path, "rb") as f:
        head = f.read(32)
        if head[:8] == b"\x89PNG\r\n\x1a\n":
            w, h = struct.unpack(">II", head[16:24])
            return ("png", w, h, 1)
        if head[:2] != b"\xff\xd8":
            raise ValueError(f"{path}: not JPEG or PNG")
        f.seek(2)
        orient = 1
        while True:
            b = f.read(1)
            while b and b != b"\xff":
                b = f.read(1)
            m = f.read(1)
            while m == b"\xff":
                m = f.read(1)
            if not m:
                raise ValueError(f"{path}: no SOF")
            m = m[0]
            if m in (0xD8, 0x01) or 0xD0 <= m <= 0xD7:
                continue
            ln = struct.unpack(">H", f.read(2))[0]
            if m == 0xE1:
                orient = _exif_orientation(f.read(ln - 2)) or 1
                continue
            if 0xC0 <= m <= 0xCF and m not in (0xC4, 0xC8, 0xCC):
                _, h, w = struct.unpack(">BHH", f.read(5))
                return ("jpeg", w, h, orient)
            f.seek(ln - 2, 1)


def upright(path):
    fmt, w, h, o = header(path)
    return (fmt, (h, w) if o in (5, 6, 7, 8) else (w, h), o)


def stem(path):
    return os.path.splitext(os.path.basename(path))[0]


# ------------------------------------------------------------------ Pillow
def run_pillow(job, paths, out, threads):
    from PIL import Image, ImageOps
    for p in paths:
        im = Image.open(p)
        fmt = im.format
        o = im.getexif().get(0x112, 1) if fmt == "JPEG" else 1
        w, h = (im.height, im.width) if o in (5, 6, 7, 8) else im.size
        if job == "thumbs":
            targets = thumb_targets(w, h)
            if not targets:
                continue
            largest = targets[0][1]
        else:
            side, q = PREP[job]
            largest = fit(w, h, side)
        if fmt == "JPEG":  # shrink-on-load: DCT scaling to >= the largest target
            req = (largest[1], largest[0]) if o in (5, 6, 7, 8) else largest
            im.draft("RGB", req)
        if o != 1:
            im = ImageOps.exif_transpose(im)
        alpha = im.mode in ("RGBA", "LA", "PA") or (im.mode == "P" and "transparency" in im.info)
        want = "RGBA" if alpha else "RGB"
        if im.mode != want:
            im = im.convert(want)
        if job == "thumbs":
            ext = "png" if fmt == "PNG" else "jpg"
            cur = im
            for n, size in targets:  # cascade: each size from the previous one
                cur = cur.resize(size, Image.LANCZOS, reducing_gap=2.0)
                dst = os.path.join(out, f"{stem(p)}_thumb_{n}.{ext}")
                if ext == "png":
                    cur.save(dst, "PNG", compress_level=PNG_LEVEL)
                else:
                    cur.save(dst, "JPEG", quality=THUMB_Q, subsampling=2)
        else:
            cur = im.resize(largest, Image.LANCZOS, reducing_gap=2.0) if largest != im.size else im
            if cur.mode == "RGBA":  # JPEG has no alpha: composite over white, as vsearch does
                bg = Image.new("RGB", cur.size, (255, 255, 255))
                bg.paste(cur, mask=cur.getchannel("A"))
                cur = bg
            cur.save(os.path.join(out, stem(p) + ".jpg"), "JPEG", quality=q, subsampling=0)


# ------------------------------------------------------------------ OpenCV
def run_opencv(job, paths, out, threads):
    import cv2
    import numpy as np
    cv2.setNumThreads(threads)
    reduced = {1: cv2.IMREAD_COLOR, 2: cv2.IMREAD_REDUCED_COLOR_2, 4: cv2.IMREAD_REDUCED_COLOR_4,
               8: cv2.IMREAD_REDUCED_COLOR_8}
    jpeg_thumb = [cv2.IMWRITE_JPEG_QUALITY, THUMB_Q, cv2.IMWRITE_JPEG_SAMPLING_FACTOR,
                  cv2.IMWRITE_JPEG_SAMPLING_FACTOR_420]
    png_thumb = [cv2.IMWRITE_PNG_COMPRESSION, PNG_LEVEL, cv2.IMWRITE_PNG_STRATEGY,
                 cv2.IMWRITE_PNG_STRATEGY_DEFAULT]

    def flatten_white(img):
        if img.ndim == 3 and img.shape[2] == 4:
            a = img[:, :, 3:4].astype(np.uint16)
            rgb = img[:, :, :3].astype(np.uint16)
            return ((rgb * a + 255 * (255 - a) + 127) // 255).astype(np.uint8)
        return img

    for p in paths:
        fmt, (w, h), o = upright(p)
        if job == "thumbs":
            targets = thumb_targets(w, h)
            if not targets:
                continue
            largest = targets[0][1]
        else:
            side, q = PREP[job]
            largest = fit(w, h, side)
        if fmt == "jpeg":  # largest DCT reduction whose result still covers the largest target
            k = 1
            for cand in (8, 4, 2):
                if -(-w // cand) >= largest[0] and -(-h // cand) >= largest[1]:
                    k = cand
                    break
            img = cv2.imread(p, reduced[k])  # applies EXIF orientation
        else:
            img = cv2.imread(p, cv2.IMREAD_UNCHANGED)  # keeps alpha
            if img.dtype != np.uint8:
                img = (img >> 8).astype(np.uint8)
        if job == "thumbs":
            ext = "png" if fmt == "png" else "jpg"
            cur = img
            for n, size in targets:
                cur = cv2.resize(cur, size, interpolation=cv2.INTER_AREA)
                dst = os.path.join(out, f"{stem(p)}_thumb_{n}.{ext}")
                cv2.imwrite(dst, cur, png_thumb if ext == "png" else jpeg_thumb)
        else:
            cur = img if (img.shape[1], img.shape[0]) == largest else \
                cv2.resize(img, largest, interpolation=cv2.INTER_AREA)
            cur = flatten_white(cur)
            cv2.imwrite(os.path.join(out, stem(p) + ".jpg"), cur,
                        [cv2.IMWRITE_JPEG_QUALITY, q, cv2.IMWRITE_JPEG_SAMPLING_FACTOR,
                         cv2.IMWRITE_JPEG_SAMPLING_FACTOR_444])


# ----------------------------------------------- libvips through pyvips (cascade)
def run_pyvips(job, paths, out, threads, png_filter=None):
    import pyvips
    pyvips.cache_set_max(0)
    for p in paths:
        fmt, (w, h), o = upright(p)
        if job == "thumbs":
            targets = thumb_targets(w, h)
            if not targets:
                continue
            ext = "png" if fmt == "png" else "jpg"
            cur = None
            for i, (n, (tw, th)) in enumerate(targets):
                if cur is None:  # shrink-on-load from the file, exact size of the rule
                    cur = pyvips.Image.thumbnail(p, tw, height=th, size="force")
                else:            # cascade from the previous size, in memory
                    cur = cur.thumbnail_image(tw, height=th, size="force")
                if i + 1 < len(targets):
                    cur = cur.copy_memory()
                dst = os.path.join(out, f"{stem(p)}_thumb_{n}.{ext}")
                if ext == "png":
                    opts = {"filter": png_filter} if png_filter else {}
                    cur.pngsave(dst, compression=PNG_LEVEL, strip=True, **opts)
                else:
                    cur.jpegsave(dst, Q=THUMB_Q, strip=True)
        else:
            side, q = PREP[job]
            tw, th = fit(w, h, side)
            im = pyvips.Image.thumbnail(p, tw, height=th, size="force")
            if im.hasalpha():
                im = im.flatten(background=[255, 255, 255])
            im.jpegsave(os.path.join(out, stem(p) + ".jpg"), Q=q, strip=True,
                        subsample_mode="off")


# ------------------------------------------------ vipsthumbnail, the CLI as shipped
def run_vipsthumbnail(job, paths, out, threads):
    """One vipsthumbnail process per (size, output format) over all the files it
    applies to: it decodes each source once per size (shrink-on-load each time),
    it has no cascade."""
    info = [(p,) + upright(p) for p in paths]
    calls = []
    if job == "thumbs":
        for n in SIZES:
            for fmt, ext, opts in (("jpeg", "jpg", f"[Q={THUMB_Q},strip]"),
                                   ("png", "png", f"[compression={PNG_LEVEL},strip]")):
                files = [p for p, f, (w, h), o in info if f == fmt and max(w, h) > n]
                if files:
                    calls.append(["vipsthumbnail", "-s", str(n), "-o",
                                  os.path.join(out, f"%s_thumb_{n}.{ext}{opts}")] + files)
    else:
        side, q = PREP[job]
        files = [p for p, *_ in info]
        calls.append(["vipsthumbnail", "-s", f"{side}x{side}>", "-o",
                      os.path.join(out, f"%s.jpg[Q={q},strip,background=255,subsample-mode=off]")] + files)
    for c in calls:
        subprocess.run(c, check=True)


# ------------------------------------------- vsearch prepare, one process per file
def run_vsearch_prepare(job, paths, out, threads, vsearch):
    extra = ["--high-quality"] if job == "prep1024" else []
    for p in paths:
        subprocess.run([vsearch, "prepare", p, os.path.join(out, stem(p) + ".jpg")] + extra,
                       check=True, stdout=subprocess.DEVNULL)


def main(argv):
    import argparse
    ap = argparse.ArgumentParser()
    ap.add_argument("tool")
    ap.add_argument("job", choices=["thumbs", "prep512", "prep1024"])
    ap.add_argument("listfile")
    ap.add_argument("outdir")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--vsearch")
    a = ap.parse_args(argv)
    with open(a.listfile) as f:
        paths = [line.strip() for line in f if line.strip()]
    os.makedirs(a.outdir, exist_ok=True)
    if a.tool == "vsearch-prepare":
        return run_vsearch_prepare(a.job, paths, a.outdir, a.threads, a.vsearch)
    if a.tool == "pyvips-filterall":  # libvips with every PNG row filter tried (its default is none)
        return run_pyvips(a.job, paths, a.outdir, a.threads, png_filter="all")
    fn = {"pillow": run_pillow, "opencv": run_opencv, "pyvips": run_pyvips,
          "vipsthumbnail": run_vipsthumbnail}[a.tool]
    fn(a.job, paths, a.outdir, a.threads)


if __name__ == "__main__":
    main(sys.argv[1:])
