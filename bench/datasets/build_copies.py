"""Build the copy-detection sets of issue 25 from photographs that Debian packages ship.

    python3 bench/datasets/build_copies.py            # makes bench/work/copies/ (git-ignored) if missing
    python3 bench/datasets/build_copies.py --force    # remake it

**Originals** (photographs): every full-frame wallpaper of `mate-backgrounds` (JPEG ones), `ukui-wallpapers`,
`lomiri-wallpapers-20.04` and `lomiri-wallpapers-16.04` (photos and a few artworks; one of MATE's three
Elephants sizes), plus Tux Paint stamps that are photographs (`tuxpaint-stamps-default`, not in a `cartoon/`
folder; cut-outs, flattened on white — a product shot on white), a seeded draw. Images that corpus/ or the
kinds set (build_kinds.py) uses are left out, and so is every picture whose difference hash, or its mirror
image's, is within NEAR bits of one already taken (originals and distractors alike: Tux Paint ships `*mirror*`
stamps, traffic lights in three colours, a clef in two versions — no copy detector can tell which sibling a
query came from). Split by original, seeded: half **tune**, half **held-out**
(the wallpapers and the stamps each split half and half).

**Distractors** (in the catalog, never a right answer): per part DISTRACTORS other pictures — the rest of Tux
Paint's stamps (drawings included) and Open Clip Art drawings, a seeded draw, none shared between parts.

Every catalog image: first frame, flattened on white, longer side ≤ 800 px, JPEG quality 92.

**Queries**: each original under every transform below, made with Pillow from the catalog image (the file a
shop would have), saved as JPEG quality 95 (`jpeg30` at quality 30), named `<original>@<transform>.jpg`:

| transform | what | why |
|---|---|---|
| rot5 | rotated 5° (tune: clockwise, held-out: counter-clockwise), canvas grown, corners white | the colour descriptor's weakest (issue: 0.93) |
| bright+25, bright-25 | brightness × 1.25 / × 0.75 | weak for colour (0.96) |
| contrast+40, contrast-40 | contrast × 1.4 / × 0.6 | a retouched copy |
| crop80 | the centre 80 % × 80 % | weak for colour (0.97) |
| crop70off | a 70 % × 70 % crop at a seeded off-centre position | a detail cut from the picture |
| down25 | downscaled to 25 % per side (box) | a thumbnail re-uploaded |
| jpeg30 | JPEG quality 30 | heavy recompression |
| hflip | mirrored left-right | shops mirror product shots; a CNN is not mirror-invariant by construction |
| grey | greyscale | a colour histogram cannot survive it; shows what the learned side adds |
| caption | a dark bar with white text over the bottom 12 % | a price tag or watermark banner |

Layout: `bench/work/copies/PART/catalog/*.jpg` (originals + distractors), `PART/catalog.csv` (vsearch
`index --metadata`: im_name, file, role), `PART/queries/*.jpg`, `PART/queries.csv` (query, transform, target),
`packages.txt`. Needs Pillow and DejaVu fonts (`fonts-dejavu-core`).
"""
import argparse
import csv
import glob
import hashlib
import os
import random
import subprocess
import sys

from PIL import Image, ImageDraw, ImageEnhance, ImageFont, ImageOps

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import build_kinds  # noqa: E402

BENCH = os.path.dirname(HERE)
ROOT = os.path.dirname(BENCH)
OUT = os.path.join(BENCH, "work", "copies")
SEED = 20261126
STAMP_ORIGINALS = 200
DISTRACTORS = 200
MAX_SIDE = 800
NEAR = 6  # bits of the 64-bit difference hash: closer pictures (or mirror images) count as the same one
PACKAGES = ["tuxpaint-stamps-default", "openclipart-png", "mate-backgrounds", "ukui-wallpapers",
            "lomiri-wallpapers-20.04", "lomiri-wallpapers-16.04", "fonts-dejavu-core"]
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
TRANSFORMS = ["rot5", "bright+25", "bright-25", "contrast+40", "contrast-40", "crop80", "crop70off", "down25",
              "jpeg30", "hflip", "grey", "caption"]
CAPTIONS = {"tune": ["SALE -30%", "NEW IN", "€19.99", "limited edition"],
            "held-out": ["BEST PRICE", "only today", "$24.50", "free delivery"]}


def ensure_packages():
    missing = [p for p in PACKAGES if subprocess.run(["dpkg", "-s", p], capture_output=True).returncode != 0]
    if missing:
        print("apt-get install", " ".join(missing), file=sys.stderr)
        subprocess.run(["apt-get", "install", "-y", "--no-install-recommends"] + missing, check=True)


def package_files(pkg, exts=(".jpg", ".jpeg", ".png")):
    r = subprocess.run(["dpkg", "-L", pkg], capture_output=True, text=True, check=True)
    return sorted(p for p in r.stdout.split() if p.lower().endswith(exts) and os.path.isfile(p))


def wallpapers():
    out = []
    for pkg in ["mate-backgrounds", "ukui-wallpapers", "lomiri-wallpapers-20.04", "lomiri-wallpapers-16.04"]:
        for p in package_files(pkg):
            if pkg == "mate-backgrounds" and (not p.lower().endswith(".jpg") or "Elephants_" in p):
                continue  # MATE's PNGs are transparent or flat artwork; Elephants ships in three sizes
            if "/usr/share/backgrounds/" not in p:
                continue
            out.append((pkg, p))
    return out


def used_elsewhere():
    used = {os.path.basename(p) for p in build_kinds.corpus_paths()}
    labels = os.path.join(build_kinds.OUT, "labels.csv")
    if not os.path.exists(labels):
        build_kinds.build()
    with open(labels, newline="") as f:
        used |= {os.path.basename(r["source_path"]) for r in csv.DictReader(f)}
    return used


def transform(name, im, rng, part):
    w, h = im.size
    if name == "rot5":
        return im.rotate(-5 if part == "tune" else 5, resample=Image.BICUBIC, expand=True, fillcolor=(255, 255, 255))
    if name == "bright+25":
        return ImageEnhance.Brightness(im).enhance(1.25)
    if name == "bright-25":
        return ImageEnhance.Brightness(im).enhance(0.75)
    if name == "contrast+40":
        return ImageEnhance.Contrast(im).enhance(1.4)
    if name == "contrast-40":
        return ImageEnhance.Contrast(im).enhance(0.6)
    if name == "crop80":
        return im.crop((round(w * 0.1), round(h * 0.1), round(w * 0.9), round(h * 0.9)))
    if name == "crop70off":
        cw, ch = round(w * 0.7), round(h * 0.7)
        x, y = rng.choice([(0, 0), (w - cw, 0), (0, h - ch), (w - cw, h - ch)])
        x += rng.randint(-(x // 4), (w - cw - x) // 4) if w > cw else 0
        y += rng.randint(-(y // 4), (h - ch - y) // 4) if h > ch else 0
        return im.crop((x, y, x + cw, y + ch))
    if name == "down25":
        return im.resize((max(1, round(w / 4)), max(1, round(h / 4))), Image.BOX)
    if name in ("jpeg30", ):
        return im
    if name == "hflip":
        return ImageOps.mirror(im)
    if name == "grey":
        return im.convert("L").convert("RGB")
    if name == "caption":
        out = im.copy()
        d = ImageDraw.Draw(out)
        bar = max(12, round(h * 0.12))
        d.rectangle((0, h - bar, w, h), fill=(20, 20, 20))
        font = ImageFont.truetype(FONT, max(8, round(bar * 0.6)))
        d.text((round(w * 0.04), h - bar + round(bar * 0.18)), rng.choice(CAPTIONS[part]), fill=(255, 255, 255), font=font)
        return out
    raise ValueError(name)


def build(force=False):
    if os.path.exists(os.path.join(OUT, "held-out", "queries.csv")) and not force:
        print(f"{OUT} exists (--force to remake)")
        return
    ensure_packages()
    Image.MAX_IMAGE_PIXELS = 60_000_000
    used = used_elsewhere()
    rng = random.Random(SEED)
    walls = [(pkg, p) for pkg, p in wallpapers() if os.path.basename(p) not in used]
    stamps_all = sorted(p for p in glob.glob(os.path.join(build_kinds.TUX, "**", "*.png"), recursive=True)
                        if os.path.basename(p) not in used and "/money/" not in p and "/alphabets/" not in p)
    photos = [p for p in stamps_all if "/cartoon/" not in p]
    rng.shuffle(walls)
    rng.shuffle(photos)
    clip = sorted(p for p in glob.glob(os.path.join(build_kinds.CLIP, "**", "*.png"), recursive=True)
                  if os.path.basename(p) not in used and "/icons/" not in p and "/stars/" not in p
                  and "/flags/" not in p and "/gradients/" not in p and "/patterns/" not in p)
    rng.shuffle(clip)

    seen, made, hashes = set(), {}, []

    def load(p):
        if "mirror" in os.path.basename(p):
            return None
        md5 = hashlib.md5(open(p, "rb").read()).hexdigest()
        if md5 in seen:
            return None
        try:
            im = build_kinds.flatten(p)
        except Exception as e:
            print(f"skip {p}: {e}", file=sys.stderr)
            return None
        if min(im.size) < 64 or build_kinds.blank(im):
            return None
        # near-duplicates (either way round) of a picture already taken: a copy detector cannot tell which
        # sibling was the source (Tux Paint's traffic lights in three colours, clefs, recoloured stamps)
        h, hm = build_kinds.dhash(im), build_kinds.dhash(ImageOps.mirror(im))
        if any(bin(h ^ o).count("1") <= NEAR or bin(hm ^ o).count("1") <= NEAR for o in hashes):
            return None
        seen.add(md5)
        hashes.append(h)
        return im

    def take(pool, n, pkg_of):
        got = []
        while pool and len(got) < n:
            p = pool.pop(0)
            im = load(p if isinstance(p, str) else p[1])
            if im is not None:
                got.append((pkg_of(p), p if isinstance(p, str) else p[1], im))
        return got

    wall_ims = take(walls, len(walls), lambda p: p[0])
    stamp_ims = take(photos, STAMP_ORIGINALS, lambda p: "tuxpaint-stamps-default")
    parts = {"tune": [], "held-out": []}
    for group in (wall_ims, stamp_ims):
        half = (len(group) + 1) // 2
        parts["tune"] += group[:half]
        parts["held-out"] += group[half:]
    rest_stamps = [p for p in stamps_all if p not in {s for _, s, _ in stamp_ims}]
    rng.shuffle(rest_stamps)
    distract_pool = [("tuxpaint-stamps-default", p) for p in rest_stamps[:DISTRACTORS]] + \
                    [("openclipart-png", p) for p in clip[:8 * DISTRACTORS]]
    rng.shuffle(distract_pool)
    for part in ("tune", "held-out"):
        d = os.path.join(OUT, part)
        for sub in ("catalog", "queries"):
            os.makedirs(os.path.join(d, sub), exist_ok=True)
            for f in glob.glob(os.path.join(d, sub, "*.jpg")):
                os.remove(f)
        distract = take(distract_pool, DISTRACTORS, lambda p: p[0])
        rows, qrows = [], []
        prng = random.Random(f"{SEED}:{part}")
        for i, (pkg, p, im) in enumerate(parts[part]):
            name = f"o{i:03d}"
            im.save(os.path.join(d, "catalog", name + ".jpg"), quality=92)
            rows.append({"im_name": name, "file": f"catalog/{name}.jpg", "role": "original",
                         "source_package": pkg, "source_path": p})
            src = Image.open(os.path.join(d, "catalog", name + ".jpg")).convert("RGB")
            for t in TRANSFORMS:
                q = transform(t, src, prng, part)
                qname = f"{name}@{t}"
                q.save(os.path.join(d, "queries", qname + ".jpg"), quality=30 if t == "jpeg30" else 95)
                qrows.append({"query": qname, "file": f"queries/{qname}.jpg", "transform": t, "target": name})
        for i, (pkg, p, im) in enumerate(distract):
            name = f"d{i:03d}"
            im.save(os.path.join(d, "catalog", name + ".jpg"), quality=92)
            rows.append({"im_name": name, "file": f"catalog/{name}.jpg", "role": "distractor",
                         "source_package": pkg, "source_path": p})
        with open(os.path.join(d, "catalog.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        with open(os.path.join(d, "queries.csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(qrows[0]))
            w.writeheader()
            w.writerows(qrows)
        made[part] = (len(parts[part]), len(distract), len(qrows),
                      sum(1 for r in rows if r["role"] == "original" and r["source_package"] != "tuxpaint-stamps-default"))
    with open(os.path.join(OUT, "packages.txt"), "w") as f:
        for p in PACKAGES:
            v = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", p], capture_output=True, text=True).stdout
            f.write(f"{p} {v}\n")
    for part, (no, nd, nq, nw) in made.items():
        print(f"{part}: {no} originals ({nw} wallpapers, {no - nw} stamps), {nd} distractors, {nq} queries",
              file=sys.stderr)


def load_part(part):
    """(catalog rows, query rows) of one part."""
    d = os.path.join(OUT, part)
    with open(os.path.join(d, "catalog.csv"), newline="") as f:
        cat = list(csv.DictReader(f))
    with open(os.path.join(d, "queries.csv"), newline="") as f:
        qs = list(csv.DictReader(f))
    return cat, qs


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--force", action="store_true")
    build(ap.parse_args().force)
