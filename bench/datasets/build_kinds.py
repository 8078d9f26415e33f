"""Build the "same kind of thing" evaluation set of issue 25 from labelled images that Debian packages ship.

    python3 bench/datasets/build_kinds.py            # makes bench/work/kinds/ (git-ignored) if missing
    python3 bench/datasets/build_kinds.py --force    # remake it
    python3 bench/datasets/build_kinds.py --sheets   # also a contact sheet per kind (bench/work/kinds/sheets/)

Sources (apt-installed when missing; the versions used are written to bench/work/kinds/packages.txt):
- `tuxpaint-stamps-default` (GPL-2): Tux Paint's stamps, one folder per category (animals/birds,
  food/fruit, vehicles/…); most are photographs cut out on a transparent background, some are drawings
  (`cartoon/` sub-folders).
- `openclipart-png` (public domain, CC0 dedication): Open Clip Art drawings, one folder per category.

A kind is a list of (package, folder, recursive?, file-name filter) — some Open Clip Art folders hold more than
their name says (tools/ has umbrellas and phones), so a few kinds keep only file names that name the thing.
Images that corpus/ uses are left out (corpus/catalog.csv's source_path), and so are Tux Paint's `*mirror*`
stamps (the mirror image of another stamp); byte-identical files are kept once and near-identical ones (64-bit
difference hash within 3 bits of an earlier file of the kind, e.g. a recoloured copy) too. Each kind keeps at most MAX_PER_KIND images, a seeded draw.

Every image: first frame, flattened on white (alpha composited), RGB, longer side ≤ 800 px (Lanczos), JPEG
quality 92, named `<kind>__<n>.jpg`. Pictures that flatten to (nearly) one colour are left out.

Split by image, seeded, per kind: the first half of a seeded order (rounded up) is **tune**, the rest
**held-out**. Layout:

    bench/work/kinds/tune/<kind>__<n>.jpg      bench/work/kinds/held-out/<kind>__<n>.jpg
    bench/work/kinds/tune.csv                  bench/work/kinds/held-out.csv   (vsearch index --metadata)
    bench/work/kinds/labels.csv                (im_name, kind, split, source_package, source_path)
    bench/work/kinds/packages.txt

The held-out part is only ever evaluated (bench/similarity_eval.py --split held-out); nothing is chosen on it.
Needs Pillow (bench/.venv has it; any Python with Pillow works).
"""
import argparse
import csv
import glob
import hashlib
import os
import random
import re
import subprocess
import sys

from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
ROOT = os.path.dirname(BENCH)
OUT = os.path.join(BENCH, "work", "kinds")
SEED = 20261125
MAX_PER_KIND = 40
MIN_PER_KIND = 10
MAX_SIDE = 800
PACKAGES = ["tuxpaint-stamps-default", "openclipart-png"]
TUX = "/usr/share/tuxpaint/stamps"
CLIP = "/usr/share/openclipart/png"

# name -> list of (root, folder, recursive, regex on the file name or None)
_INSTR = r"guitar|violin|cello|trumpet|drum|harp|flute|oboe|saxophone|piano_geraint|xylophone|maracas|trombone|horn|dulcimer|derbouk|djamb|banjo|accordion|clarinet|tuba"
_TOOLS = (r"hammer|saw|drill|screwdriver|wrench|shovel|rake|trowel|axe_|chiave|mallot|nail_puller|lopper|shear|"
          r"cultivator|anvil|brush_roller|paint_roller_gerald|paint_brush|utensil|pliers|spaclu")
_ROAD = r"chevrolet|celebirt|4wd|autos|big_truck|blazer|ambulans|bus1|bus2|bus_01|car\.png|hummer|old_car|old_truck|redcar|skoda|small_truck|trattore|shelby_cobra_car"
_PHONE = r"phone|telefon|telephone"
# boating/ is mostly knots and sailing-rule diagrams; plants/trees has saws, leaves and ferns
_BOAT = r"^(boat_|sailboat_illustration\.png|sailing_sunset|sailing_kids|trawler|the_mad_little_ship)"
_TREE = r"^(?!.*(bowsaw|pruner|leaf|leaves|fern|pinecone|rambutan|christmas_ball))"
KINDS = {
    "bird": [(TUX, "animals/birds", True, None), (CLIP, "animals/birds", False, None)],
    "fish": [(TUX, "animals/fish", True, None), (CLIP, "animals/fish", False, None)],
    "insect": [(TUX, "animals/insects", True, None), (CLIP, "animals/bugs", False, None)],
    "cat": [(TUX, "animals/mammals/cats", True, None), (CLIP, "animals/mammals/housecats", False, None),
            (CLIP, "animals/mammals/big_cats", False, None)],
    "horse": [(TUX, "animals/mammals/equines", True, None), (CLIP, "animals/mammals/horses", False, None)],
    "cattle_sheep_goat": [(TUX, "animals/mammals/bovines", True, None)],
    "dinosaur": [(TUX, "animals/dinosaur", True, None), (CLIP, "animals/dinosaurs", False, None)],
    "fruit": [(TUX, "food/fruit", True, None), (CLIP, "food/fruit", False, None)],
    "vegetable": [(TUX, "food/vegetables", True, None), (CLIP, "food/vegetables", False, None)],
    "dessert": [(TUX, "food/dessert", True, None), (CLIP, "food/desserts", False, None)],
    "drink": [(CLIP, "food/beverages", True, None)],
    "flower": [(TUX, "plants/flowers", True, None), (CLIP, "plants/flowers", False, None)],
    "tree": [(TUX, "plants/trees", True, _TREE), (CLIP, "plants/trees", True, _TREE)],
    "hand_tool": [(TUX, "household/tools", True, None), (CLIP, "tools", False, _TOOLS)],
    "musical_instrument": [(TUX, "hobbies/music", True, None), (CLIP, "recreation/music", False, _INSTR)],
    "road_vehicle": [(TUX, "vehicles/auto", True, None), (TUX, "vehicles/construction", True, None),
                     (TUX, "vehicles/emergency", True, None), (TUX, "vehicles/race", True, None),
                     (TUX, "vehicles/masstransit", True, None), (TUX, "vehicles/farming", True, None),
                     (CLIP, "transportation/vehicles", True, _ROAD)],
    "boat": [(TUX, "vehicles/ship", True, None), (CLIP, "transportation", True, _BOAT)],
    "house": [(TUX, "town/houses", True, None), (CLIP, "buildings/homes", False, None)],
    "hat": [(TUX, "clothes/hats", True, None), (CLIP, "people/clothing/hats", False, None)],
    # clock02..clock12 are clock01's face at other hours; the minute hand alone is no clock
    "clock": [(CLIP, "signs_and_symbols/clocks", False, r"^(?!clock(0[2-9]|1[0-2])\.png)(?!minute_hand)")],
    "telephone": [(CLIP, "office/telephone", False, None), (CLIP, "tools", False, _PHONE)],
    "computer_hardware": [(CLIP, "computer/hardware", False, None)],
}
PKG_OF = {TUX: "tuxpaint-stamps-default", CLIP: "openclipart-png"}
LICENCE = {TUX: "GPL-2 (Tux Paint stamps)", CLIP: "Public domain (Open Clip Art, CC0 dedication)"}


def ensure_packages():
    missing = [p for p in PACKAGES if subprocess.run(["dpkg", "-s", p], capture_output=True).returncode != 0]
    if missing:
        print("apt-get install", " ".join(missing), file=sys.stderr)
        subprocess.run(["apt-get", "install", "-y", "--no-install-recommends"] + missing, check=True)


def package_versions():
    out = {}
    for p in PACKAGES:
        r = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", p], capture_output=True, text=True)
        out[p] = r.stdout.strip()
    return out


def corpus_paths():
    with open(os.path.join(ROOT, "corpus", "catalog.csv"), newline="") as f:
        return {os.path.basename(r["source_path"]) for r in csv.DictReader(f)}


def candidates(spec, used):
    paths = []
    for root, folder, recursive, rx in spec:
        base = os.path.join(root, folder)
        pat = os.path.join(base, "**", "*.png") if recursive else os.path.join(base, "*.png")
        for p in sorted(glob.glob(pat, recursive=recursive)):
            name = os.path.basename(p)
            if name in used or (rx and not re.search(rx, name, re.I)):
                continue
            if "/unsorted/duplicates/" in p or "mirror" in name:  # Tux Paint ships some stamps mirrored too
                continue
            paths.append((root, p))
    return paths


def flatten(path):
    im = Image.open(path)
    im.seek(0)
    if im.mode in ("P", "PA", "LA", "L", "I", "I;16") or "transparency" in im.info:
        im = im.convert("RGBA")
    if im.mode == "RGBA":
        bg = Image.new("RGB", im.size, (255, 255, 255))
        bg.paste(im, mask=im.getchannel("A"))
        im = bg
    else:
        im = im.convert("RGB")
    if max(im.size) > MAX_SIDE:
        s = MAX_SIDE / max(im.size)
        im = im.resize((max(1, round(im.width * s)), max(1, round(im.height * s))), Image.LANCZOS)
    return im


def dhash(im):
    g = im.convert("L").resize((9, 8), Image.BILINEAR)
    px = list(g.get_flattened_data() if hasattr(g, 'get_flattened_data') else g.getdata())
    return sum(1 << i for i in range(64) if px[(i // 8) * 9 + i % 8] > px[(i // 8) * 9 + i % 8 + 1])


def blank(im):
    g = im.convert("L").resize((64, 64))
    px = list(g.get_flattened_data() if hasattr(g, 'get_flattened_data') else g.getdata())
    m = sum(px) / len(px)
    return (sum((v - m) ** 2 for v in px) / len(px)) ** 0.5 < 0.02 * 255


def build(force=False, sheets=False):
    if os.path.exists(os.path.join(OUT, "labels.csv")) and not force:
        print(f"{OUT} exists (--force to remake)")
        return
    ensure_packages()
    Image.MAX_IMAGE_PIXELS = 60_000_000
    used = corpus_paths()
    for part in ("tune", "held-out"):
        d = os.path.join(OUT, part)
        os.makedirs(d, exist_ok=True)
        for f in glob.glob(os.path.join(d, "*.jpg")):
            os.remove(f)
    rows = []
    seen_md5 = set()
    for kind, spec in KINDS.items():
        cands = candidates(spec, used)
        rng = random.Random(f"{SEED}:{kind}")
        order = list(cands)
        rng.shuffle(order)
        kept, hashes = [], []
        for root, p in order:
            if len(kept) == MAX_PER_KIND:
                break
            md5 = hashlib.md5(open(p, "rb").read()).hexdigest()
            if md5 in seen_md5:
                continue
            seen_md5.add(md5)
            try:
                im = flatten(p)
            except Exception as e:  # decompression bombs, broken files
                print(f"skip {p}: {e}", file=sys.stderr)
                continue
            if min(im.size) < 32 or blank(im):
                continue
            h = dhash(im)
            if any(bin(h ^ o).count("1") <= 3 for o in hashes):
                continue
            hashes.append(h)
            kept.append((root, p, im))
        if len(kept) < MIN_PER_KIND:
            raise RuntimeError(f"kind {kind}: only {len(kept)} images")
        n_tune = (len(kept) + 1) // 2
        for i, (root, p, im) in enumerate(kept):
            part = "tune" if i < n_tune else "held-out"
            name = f"{kind}__{i:02d}"
            im.save(os.path.join(OUT, part, name + ".jpg"), quality=92)
            rows.append({"im_name": name, "kind": kind, "split": part, "source_package": PKG_OF[root],
                         "source_path": p, "licence": LICENCE[root], "width": im.width, "height": im.height})
        print(f"{kind:20s} {len(kept):3d} of {len(cands):3d} candidates "
              f"(tune {n_tune}, held-out {len(kept) - n_tune})", file=sys.stderr)
    fields = ["im_name", "kind", "split", "source_package", "source_path", "licence", "width", "height"]
    with open(os.path.join(OUT, "labels.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    for part in ("tune", "held-out"):
        with open(os.path.join(OUT, part + ".csv"), "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=["im_name", "file", "category", "source_package", "licence"])
            w.writeheader()
            for r in rows:
                if r["split"] == part:
                    w.writerow({"im_name": r["im_name"], "file": f"{part}/{r['im_name']}.jpg", "category": r["kind"],
                                "source_package": r["source_package"], "licence": r["licence"]})
    vers = package_versions()
    with open(os.path.join(OUT, "packages.txt"), "w") as f:
        for p, v in vers.items():
            f.write(f"{p} {v}\n")
    print(f"{len(rows)} images in {len(KINDS)} kinds into {OUT} "
          f"(tune {sum(r['split'] == 'tune' for r in rows)}, held-out {sum(r['split'] == 'held-out' for r in rows)}); "
          + ", ".join(f"{p} {v}" for p, v in vers.items()), file=sys.stderr)
    if sheets:
        make_sheets(rows)


def make_sheets(rows):
    """One contact sheet per kind (tune images only: looking at held-out is not needed to check the labels)."""
    d = os.path.join(OUT, "sheets")
    os.makedirs(d, exist_ok=True)
    for kind in KINDS:
        ims = [os.path.join(OUT, "tune", r["im_name"] + ".jpg") for r in rows if r["kind"] == kind and r["split"] == "tune"]
        cols, cell = 10, 96
        sheet = Image.new("RGB", (cols * cell, ((len(ims) + cols - 1) // cols) * cell), "white")
        for i, p in enumerate(ims):
            im = Image.open(p)
            im.thumbnail((cell - 4, cell - 4))
            sheet.paste(im, ((i % cols) * cell + 2, (i // cols) * cell + 2))
        sheet.save(os.path.join(d, kind + ".png"))


def load_labels(part=None):
    """[(im_name, kind, path)] of one part (or both), from labels.csv."""
    with open(os.path.join(OUT, "labels.csv"), newline="") as f:
        return [(r["im_name"], r["kind"], os.path.join(OUT, r["split"], r["im_name"] + ".jpg"))
                for r in csv.DictReader(f) if part is None or r["split"] == part]


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--force", action="store_true")
    ap.add_argument("--sheets", action="store_true")
    a = ap.parse_args()
    build(a.force, a.sheets)
