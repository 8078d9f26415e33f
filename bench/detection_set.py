"""Build the object-detection evaluation set of issue 38 ("Multiple Products Search") from package pictures only.

    /usr/bin/python3 bench/detection_set.py            # the full set into bench/work/detection/ (git-ignored)
    /usr/bin/python3 bench/detection_set.py --quick    # a small one (20 scenes a split) into bench/work/detection-quick/

Needs Pillow and numpy (Debian's python3-pil, python3-numpy: the system /usr/bin/python3 has them) and the
Debian packages of APT_PACKAGES (apt-get install -y them when missing; the script says which).

**Objects**: pictures with transparency from Tux Paint's stamps (tuxpaint-stamps-default, GPL-2) and Open Clip
Art (openclipart-png, public domain), grouped into KINDS by folder and file name (the table below: each kind
names the folders and a file-name pattern, and the detector types it accepts). Every candidate must have real
transparency (≥ 5 % of its pixels transparent, ≥ 2 % opaque), be ≤ 4000 px, not flatten to (nearly) one colour;
byte-identical files (Open Clip Art ships some in several folders) are kept once, and near-identical ones within a
kind (64-bit difference hash within 3 bits, e.g. a recoloured copy) too — bench/datasets/build_kinds.py's
helpers. Each kind keeps at most MAX_PER_KIND objects (a seeded draw) and needs MIN_PER_KIND.

**Splits by source object**: per kind, the first 60 % (rounded up) of a seeded order is *tune*, the rest
*held-out*; an object appears in the scenes of its split only. The photographic backgrounds are split too
(alternately in sorted order). Nothing is chosen on held-out.

**Scenes** (per split SCENES[split]): 1–5 objects (weights 15/30/30/15/10 %), each of another kind, the longer
side of each 18–55 % of the scene's shorter side, placed at random with at most 10 % overlap (of the smaller
tight box) between any two, on a plain background (even scenes: a uniform colour, half of them with faint
noise or a gradient ≤ 3 %) or a photographic one (odd scenes: MATE wallpapers and scikit-image's data
photographs that are not of one object, a random crop rescaled to the scene), scene sizes around 1 MP; JPEG
quality 90. **Single-object pictures** (SINGLES[split]): one object filling 70–95 % of a plain picture.
Ground truth: each object's tight box of alpha > 0.5 after scaling, [x1, y1, x2, y2] in scene pixels with x2, y2
exclusive (x2 − x1 is the width), its kind, source file and its own catalog image.

**Catalog**: every object's source picture flattened on white, ≤ 800 px, JPEG 92 (build_kinds.flatten, the
recipe of quality_set.reduce_args), named `<kind>__<slug>` — all objects of both splits, so each object's kind
has its other members as neighbours. `catalog/` + `catalog.csv` (im_name, category, split, source_package,
source_path, licence) for `vsearch index catalog --metadata catalog.csv`.

Everything goes to set.json (kinds with accepted types, objects, backgrounds, scenes and singles per split).
The same seed gives a byte-identical set: every random draw comes from random.Random seeded with a string.
"""
import argparse
import csv
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys

import numpy as np
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "datasets"))
import build_kinds  # noqa: E402  (flatten, dhash, blank, candidates, TUX, CLIP, PKG_OF, LICENCE)

SEED = 20261127
OUT = os.path.join(HERE, "work", "detection")
OUT_QUICK = os.path.join(HERE, "work", "detection-quick")
APT_PACKAGES = ["tuxpaint-stamps-default", "openclipart-png", "mate-backgrounds", "python3-skimage", "python3-pil",
                "python3-numpy"]
MAX_PER_KIND = 12
MIN_PER_KIND = 4
MAX_SOURCE_SIDE = 4000
TUNE_SHARE = 0.6
SCENES = {"tune": 150, "held-out": 100}
SINGLES = {"tune": 40, "held-out": 40}
QUICK_SCENES, QUICK_SINGLES = 20, 6
OBJECT_COUNT_WEIGHTS = {1: 15, 2: 30, 3: 30, 4: 15, 5: 10}
SCENE_SIZES = [(1024, 768), (768, 1024), (800, 1000), (1000, 800), (1200, 900), (900, 1200), (1152, 864),
               (1024, 1024), (1280, 800), (960, 960)]
OBJECT_SIDE = (0.18, 0.55)    # an object's longer side, as a share of the scene's shorter side
MAX_OVERLAP = 0.10            # of the smaller tight box
SINGLE_FILL = (0.70, 0.95)
PLAIN_COLOURS = [(255, 255, 255), (255, 255, 255), (236, 236, 236), (214, 214, 214), (245, 238, 220),
                 (232, 220, 196), (250, 246, 240), (40, 40, 40), (28, 63, 140), (178, 34, 34), (46, 125, 50),
                 (255, 204, 0), (0, 131, 143), (106, 27, 154)]
JPEG_QUALITY = 90
TUX, CLIP = build_kinds.TUX, build_kinds.CLIP
SKIMAGE_DATA = "/usr/lib/python3/dist-packages/skimage/data"
MATE = "/usr/share/backgrounds/mate"
# Photographs without one dominant object (textures, landscapes, abstract art). Left out: scikit-image's
# astronaut, camera, chelsea (a cat), coffee (a cup), coins, horse, motorcycle, rocket, retina, moon and text pages;
# MATE's LadyBird, TwoWings, FreshFlower, YellowFlower (one creature or flower filling the picture), the Elephants
# (huge) and the transparent ones that flatten to white.
PHOTO_BACKGROUNDS = [os.path.join(SKIMAGE_DATA, f) for f in
                     ("brick.png", "grass.png", "gravel.png", "hubble_deep_field.jpg", "ihc.png")] + \
    [os.path.join(MATE, "nature", f) for f in
     ("Aqua.jpg", "Blinds.jpg", "Dune.jpg", "Garden.jpg", "GreenMeadow.jpg", "RainDrops.jpg", "Storm.jpg", "Wood.jpg")] + \
    [os.path.join(MATE, "abstract", f) for f in ("Flow.png", "Gulp.png")] + \
    [os.path.join(MATE, "desktop", f) for f in
     ("GreenTraditional.jpg", "Stripes.png", "MATE-Stripes-Dark.png", "Ubuntu-Mate-Cold-no-logo.png",
      "Ubuntu-Mate-Warm-no-logo.png", "Ubuntu-Mate-Radioactive-no-logo.png", "Float-into-MATE.png")]

# kind -> accepted detector types, [(package root, folder, recursive, file-name regex or None)]
# The detector's vocabulary: fashion types (top, dress, bottom, outerwear, swimwear, shoe, bag, watch, eyewear,
# hat, tie, jewellery, sock, glove, scarf, umbrella), coarse groups (dog, cat, bird, fish, insect, butterfly, car,
# truck, bicycle, motorcycle, boat, aircraft, train, ball, guitar, piano, chair, table, sofa, bed, cup, bottle,
# clock, phone, computer, lamp, flower, fruit, vegetable, teddy bear, toy, musical instrument, tool, food), else an
# ImageNet class's first name in lower case.
# Not fish: crustaceans, sea mammals…; not birds: Tux (a cartoon mascot) and a hieroglyph; not flowers alone: trees, bouquets in vases
_FISH = r"^(?!.*(shrimp|crawfish|crayfish|lobster|seahorse|dolphin\.|whale|crab|octopus|starfish|urchin|jelly|squid|shell))"
_BIRD = r"^(?!.*(tux|penguin_with_spider|simbolo_egizio))"
_FLOWER = r"^(?!.*(tree|bouquet|vase))"
_HAT_OUT = r"^(?!.*(crown|propeller|jacob_leisler|magic_hat|turban))"
KINDS = {
    "hat": (["hat"], [(TUX, "clothes/hats", True, None), (TUX, "clothes", False, r"baseballcap"),
                      (CLIP, "people/clothing/hats", False, _HAT_OUT),
                      (CLIP, "people/clothing", False, r"^(adventurer_hat|pimp_hat|tophat|winter_hat)")]),
    "top": (["top", "outerwear"], [(TUX, "clothes", False, r"^t_(tshirt|poloshirt|shirt|jacket)\.png"),
                                   (CLIP, "people/clothing", False, r"^(t-shirt_0|camicia)")]),
    "shoe": (["shoe"], [(CLIP, "people/clothing", False, r"^(hiking_boot|tennis_shoe|thongs)")]),
    "bag": (["bag"], [(CLIP, "containers", False, r"^(paperbag|valigie_bags|borsa_estiva)"),
                      (CLIP, "people/clothing", False, r"^straw_tote"),
                      (CLIP, "transportation", False, r"suitcase")]),
    "cup": (["cup"], [(CLIP, "food/beverages", False, r"^(mug|cuppa|teacup|kubek)"),
                      (CLIP, "office", False, r"^cup_"), (TUX, "household/dishes", False, r"^mug\.png")]),
    "guitar": (["guitar", "musical instrument"],
               [(TUX, "hobbies/music/string", False, r"guitar"), (CLIP, "recreation/music", False, r"guitar")]),
    "violin": (["musical instrument", "violin", "cello"],
               [(TUX, "hobbies/music/string", False, r"^(violin|cello)"), (CLIP, "recreation/music", False, r"^(violin|cello)")]),
    "teddy_bear": (["teddy bear", "toy"], [(CLIP, "recreation/toys", False, r"teddy"),
                                          (TUX, "animals/mammals/bears", True, r"^(teddy_bear|edward_bear)")]),
    "ball": (["ball"], [(CLIP, "recreation/sports", False,
                         r"^(soccer_ball|volley-ball|baseball_(bw_)?ganson|baseball_anthony|[89]_ball|football_ball|flaming_soccer)"),
                        (TUX, "sports", False, r"^(basketball|cricketball|football|soccer|tennis_ball|australian_rules)")]),
    "apple": (["fruit"], [(CLIP, "food/fruit", False, r"^(an_apple|apple_(with_worm|bitten|mateya|martin|bw)|apple\.png|another_apple|cartoon_apple|eris_apple)"),
                          (TUX, "food/fruit", True, r"^apple_(green|granny|red|fuji|sierra)|^apple\.png")]),
    "banana": (["fruit"], [(CLIP, "food/fruit", False, r"^banana"), (TUX, "food/fruit", True, r"^banana")]),
    "orange": (["fruit"], [(CLIP, "food/fruit", False, r"^orange(_simple|_dave|\.png)"),
                           (TUX, "food/fruit", True, r"^(orange|sliced_orange)")]),
    "strawberry": (["fruit"], [(CLIP, "food/fruit", False, r"^strawberr"), (TUX, "food/fruit", True, r"^strawberr")]),
    "dog": (["dog"], [(CLIP, "animals/mammals/dogs", False, None), (CLIP, "animals/mammals", False, r"^dog_"),
                      (TUX, "animals/mammals/dogs", False, r"^dog\.png")]),
    "cat": (["cat"], [(CLIP, "animals/mammals/housecats", False, r"^(?!le_mie_tigri|cartoon_vgcats|cat_scrathing)")]),
    "bird": (["bird"], [(TUX, "animals/birds", True, _BIRD), (CLIP, "animals/birds", False, _BIRD)]),
    "fish": (["fish"], [(TUX, "animals/fish", True, _FISH), (CLIP, "animals/fish", False, _FISH)]),
    "butterfly": (["butterfly", "insect"], [(CLIP, "animals/bugs", False, r"butterfl"),
                                            (TUX, "animals/insects/cartoon", False, r"^butterfly"),
                                            (TUX, "seasonal/easter", False, r"^butterfly")]),
    "flower": (["flower"], [(TUX, "plants/flowers", True, _FLOWER), (CLIP, "plants/flowers", False, _FLOWER)]),
    "car": (["car"], [(TUX, "vehicles/auto", False, r"^(beetle|sedan|sportscar)"),
                      (CLIP, "transportation/vehicles", False,
                       r"^(1989_chevrolet|_chevrolet|car\.png|old_car|redcar|skoda_car|shelby_cobra_car|blazer|autos)")]),
    "aircraft": (["aircraft"], [(CLIP, "transportation/vehicles", False,
                                 r"^(aircraft|airplane|military_airplane|plane_silhouet)"),
                                (CLIP, "transportation", False, r"^airplane")]),
    "phone": (["phone"], [(CLIP, "office/telephone", False, r"^(?!telefono_email)")]),
    "computer": (["computer"], [(CLIP, "computer/hardware", False, r"^(laptop|computer[^_-]|computer\.png|computer-aj|desktop|workstation)")]),
    "pizza": (["pizza", "food"], [(CLIP, "food", False, r"^pizza")]),
    "clock": (["clock"], [(CLIP, "signs_and_symbols/clocks", False,
                           r"^(alarm_clock|analog|clock01|clock_michael|modern_clock|orologio)")]),
}


def ensure_packages():
    missing = [p for p in APT_PACKAGES if subprocess.run(["dpkg", "-s", p], capture_output=True).returncode != 0]
    if missing:
        sys.exit("missing Debian packages: apt-get install -y " + " ".join(missing))


def package_versions():
    out = {}
    for p in APT_PACKAGES:
        r = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", p], capture_output=True, text=True)
        out[p] = r.stdout.strip()
    return out


def _slug(path):
    base = os.path.splitext(os.path.basename(path))[0].lower()
    return "".join(c if c.isalnum() else "_" for c in base)[:36].strip("_")


def load_rgba(path):
    im = Image.open(path)
    im.seek(0)
    return im.convert("RGBA")


def usable(im):
    """Real transparency (≥ 5 % transparent, ≥ 2 % opaque pixels), not huge; and within its tight box neither a
    filled rectangle (> 92 % opaque: a picture on a square, an icon) nor line art (< 12 % opaque: outlines that
    vanish on a photograph)."""
    if max(im.size) > MAX_SOURCE_SIDE or min(im.size) < 32:
        return False
    a = np.asarray(im.getchannel("A")) >= 128
    if (~a).mean() < 0.05 or a.mean() < 0.02:
        return False
    rows, cols = np.flatnonzero(a.any(1)), np.flatnonzero(a.any(0))
    inside = a[rows[0]:rows[-1] + 1, cols[0]:cols[-1] + 1].mean()
    return 0.12 <= inside <= 0.92


def tight(im):
    """The object cropped to the bounding box of its alpha > 0.5."""
    a = im.getchannel("A").point(lambda v: 255 if v > 127 else 0)
    return im.crop(a.getbbox())


def choose_objects():
    """{kind: [(root, path), ...]} — the kept objects of each kind in a seeded order."""
    Image.MAX_IMAGE_PIXELS = 60_000_000
    seen_md5 = set()
    chosen = {}
    for kind, (accepted, spec) in KINDS.items():
        cands = build_kinds.candidates(spec, set())
        rng = random.Random(f"{SEED}:objects:{kind}")
        order = sorted(set(cands))
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
                im = load_rgba(p)
            except Exception as e:  # decompression bombs, broken files
                print(f"skip {p}: {e}", file=sys.stderr)
                continue
            if not usable(im):
                continue
            flat = build_kinds.flatten(p)
            if build_kinds.blank(flat):
                continue
            h = build_kinds.dhash(flat)
            if any(bin(h ^ o).count("1") <= 3 for o in hashes):
                continue
            hashes.append(h)
            kept.append((root, p))
        if len(kept) < MIN_PER_KIND:
            raise RuntimeError(f"kind {kind}: only {len(kept)} usable objects")
        chosen[kind] = kept
    return chosen


# ---------------------------------------------------------------- backgrounds
def plain_background(rng, w, h):
    colour = rng.choice(PLAIN_COLOURS)
    style = rng.choice(["flat", "flat", "noise", "gradient"])
    base = np.empty((h, w, 3), np.float32)
    base[:] = colour
    desc = "rgb(%d,%d,%d)" % colour
    if style == "noise":
        sigma = rng.uniform(0.01, 0.03) * 255 / 2     # ≈ 95 % of the noise within ± 3 %
        nrng = np.random.RandomState(rng.randrange(2**31))
        base += nrng.normal(0, sigma, size=base.shape).astype(np.float32)
        desc += f" noise σ={sigma / 255:.3f}"
    elif style == "gradient":
        amp = rng.uniform(0.01, 0.03) * 255
        horizontal = rng.random() < 0.5
        ramp = np.linspace(-amp, amp, w if horizontal else h, dtype=np.float32)
        base += ramp[None, :, None] if horizontal else ramp[:, None, None]
        desc += f" gradient ±{amp / 255:.3f} {'horizontal' if horizontal else 'vertical'}"
    return Image.fromarray(np.clip(np.rint(base), 0, 255).astype(np.uint8), "RGB").convert("RGBA"), desc


def photo_background(rng, path, w, h):
    Image.MAX_IMAGE_PIXELS = 60_000_000
    src = Image.open(path)
    src.seek(0)
    if src.mode in ("RGBA", "LA", "PA") or "transparency" in src.info:
        src = src.convert("RGBA")
        bg = Image.new("RGB", src.size, (255, 255, 255))
        bg.paste(src, mask=src.getchannel("A"))
        src = bg
    src = src.convert("RGB")
    sw, sh = src.size
    aspect = w / h
    cw_max = min(sw, sh * aspect)
    frac = rng.uniform(0.6, 1.0)
    cw = cw_max * frac
    ch = cw / aspect
    x0 = rng.uniform(0, sw - cw)
    y0 = rng.uniform(0, sh - ch)
    box = (round(x0), round(y0), round(x0 + cw), round(y0 + ch))
    out = src.crop(box).resize((w, h), Image.LANCZOS)
    return out.convert("RGBA"), f"{os.path.relpath(path, '/')} crop {list(box)}"


# ---------------------------------------------------------------- placement
def scaled(im, longer):
    s = longer / max(im.size)
    return im.resize((max(1, round(im.width * s)), max(1, round(im.height * s))), Image.LANCZOS)


def alpha_box(im, x, y):
    a = im.getchannel("A").point(lambda v: 255 if v > 127 else 0)
    b = a.getbbox()
    return [x + b[0], y + b[1], x + b[2], y + b[3]]


def overlap_ok(box, placed):
    for o in placed:
        iw = min(box[2], o[2]) - max(box[0], o[0])
        ih = min(box[3], o[3]) - max(box[1], o[1])
        if iw > 0 and ih > 0:
            smaller = min((box[2] - box[0]) * (box[3] - box[1]), (o[2] - o[0]) * (o[3] - o[1]))
            if iw * ih > MAX_OVERLAP * smaller:
                return False
    return True


def save_jpeg(im, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    im.convert("RGB").save(path, "JPEG", quality=JPEG_QUALITY, optimize=False, progressive=False)


def make_scene(rng, index, objects, sprites, photos, out, split):
    """One scene; returns its ground-truth record."""
    w, h = rng.choice(SCENE_SIZES)
    plain = index % 2 == 0
    if plain:
        canvas, bg_desc = plain_background(rng, w, h)
    else:
        canvas, bg_desc = photo_background(rng, rng.choice(photos), w, h)
    counts, weights = zip(*OBJECT_COUNT_WEIGHTS.items())
    n = rng.choices(counts, weights)[0]
    kinds = sorted(objects)
    picked = rng.sample(kinds, min(n, len(kinds)))
    placed, truth = [], []
    for kind in picked:
        name = rng.choice(objects[kind])
        longer = rng.uniform(*OBJECT_SIDE) * min(w, h)
        for attempt in range(4):
            sprite = scaled(sprites[name], longer)
            if sprite.width > w or sprite.height > h:
                longer *= 0.85
                continue
            spot = None
            for _ in range(150):
                x, y = rng.randint(0, w - sprite.width), rng.randint(0, h - sprite.height)
                box = alpha_box(sprite, x, y)
                if overlap_ok(box, placed):
                    spot = (x, y, box)
                    break
            if spot:
                x, y, box = spot
                canvas.alpha_composite(sprite, (x, y))
                placed.append(box)
                truth.append({"object": name, "kind": kind, "box": box, "catalog_name": name})
                break
            longer *= 0.85
    rel = os.path.join("scenes", split, f"s{index:03d}.jpg")
    save_jpeg(canvas, os.path.join(out, rel))
    return {"file": rel, "width": w, "height": h, "background": "plain" if plain else "photo",
            "background_source": bg_desc, "objects": truth}


def make_single(rng, index, name, kind, sprites, out, split):
    w, h = rng.choice(SCENE_SIZES)
    canvas, bg_desc = plain_background(rng, w, h)
    fill = rng.uniform(*SINGLE_FILL)
    sp = sprites[name]
    s = min(fill * w / sp.width, fill * h / sp.height)
    sprite = sp.resize((max(1, round(sp.width * s)), max(1, round(sp.height * s))), Image.LANCZOS)
    x = rng.randint(0, w - sprite.width)
    y = rng.randint(0, h - sprite.height)
    canvas.alpha_composite(sprite, (x, y))
    rel = os.path.join("singles", split, f"o{index:03d}.jpg")
    save_jpeg(canvas, os.path.join(out, rel))
    return {"file": rel, "width": w, "height": h, "background": "single", "background_source": bg_desc,
            "fill": round(fill, 4), "objects": [{"object": name, "kind": kind, "box": alpha_box(sprite, x, y),
                                                 "catalog_name": name}]}


# ---------------------------------------------------------------- the set
def build(quick=False):
    ensure_packages()
    out = OUT_QUICK if quick else OUT
    for sub in ("catalog", "scenes", "singles"):
        shutil.rmtree(os.path.join(out, sub), ignore_errors=True)
    os.makedirs(os.path.join(out, "catalog"), exist_ok=True)
    chosen = choose_objects()

    objects, kinds, sprites = {}, {}, {}
    by_split = {"tune": {}, "held-out": {}}
    used_names = set()
    for kind, members in chosen.items():
        n_tune = -(-len(members) * 6 // 10)   # ceil(60 %)
        names = []
        for i, (root, p) in enumerate(members):
            name = f"{kind}__{_slug(p)}"
            while name in used_names:
                name += "_b"
            used_names.add(name)
            split = "tune" if i < n_tune else "held-out"
            flat = build_kinds.flatten(p)
            flat.save(os.path.join(out, "catalog", name + ".jpg"), "JPEG", quality=92)
            sprites[name] = tight(load_rgba(p))
            objects[name] = {"kind": kind, "split": split, "source_package": build_kinds.PKG_OF[root],
                             "source_path": p, "licence": build_kinds.LICENCE[root],
                             "catalog": f"catalog/{name}.jpg"}
            by_split[split].setdefault(kind, []).append(name)
            names.append(name)
        kinds[kind] = {"accepted_types": KINDS[kind][0], "objects": names}

    with open(os.path.join(out, "catalog.csv"), "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(["im_name", "category", "split", "source_package", "source_path", "licence"])
        for name, o in objects.items():
            w.writerow([name, o["kind"], o["split"], o["source_package"], o["source_path"], o["licence"]])

    photos = sorted(p for p in PHOTO_BACKGROUNDS if os.path.exists(p))
    photo_split = {"tune": photos[0::2], "held-out": photos[1::2]}
    splits = {}
    for split in ("tune", "held-out"):
        n_scenes = QUICK_SCENES if quick else SCENES[split]
        n_single = QUICK_SINGLES if quick else SINGLES[split]
        scenes = [make_scene(random.Random(f"{SEED}:{split}:scene:{i}"), i, by_split[split], sprites,
                             photo_split[split], out, split) for i in range(n_scenes)]
        pool = [(name, kind) for kind in sorted(by_split[split]) for name in by_split[split][kind]]
        random.Random(f"{SEED}:{split}:singles").shuffle(pool)
        singles = [make_single(random.Random(f"{SEED}:{split}:single:{i}"), i, *pool[i % len(pool)], sprites, out, split)
                   for i in range(n_single)]
        splits[split] = {"objects": sorted(n for names in by_split[split].values() for n in names),
                         "photo_backgrounds": [os.path.relpath(p, "/") for p in photo_split[split]],
                         "scenes": scenes, "singles": singles}

    doc = {"about": "issue 38 detection evaluation set, made by bench/detection_set.py" + (" --quick" if quick else ""),
           "seed": SEED, "box_format": "[x1, y1, x2, y2] scene pixels, x2/y2 exclusive; tight box of alpha > 0.5",
           "packages": package_versions(), "kinds": kinds, "objects": objects, "splits": splits}
    with open(os.path.join(out, "set.json"), "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    summary(doc, out)
    return doc


def summary(doc, out):
    print(f"{len(doc['objects'])} objects in {len(doc['kinds'])} kinds → {out}")
    for kind, k in doc["kinds"].items():
        t = sum(doc["objects"][n]["split"] == "tune" for n in k["objects"])
        print(f"  {kind:12s} {len(k['objects']):2d} (tune {t}, held-out {len(k['objects']) - t})  accepts {k['accepted_types']}")
    for split, s in doc["splits"].items():
        sc = s["scenes"]
        per = [len(x["objects"]) for x in sc]
        print(f"{split}: {len(s['objects'])} objects; {len(sc)} scenes ({sum(x['background'] == 'plain' for x in sc)} plain, "
              f"{sum(x['background'] == 'photo' for x in sc)} photo), {sum(per)} objects placed "
              f"(1–5: {[per.count(i) for i in range(1, 6)]}); {len(s['singles'])} single-object pictures; "
              f"{len(s['photo_backgrounds'])} photographic backgrounds")
    h = hashlib.sha256(open(os.path.join(out, "set.json"), "rb").read()).hexdigest()
    print(f"set.json sha256 {h}")


def load(quick=False):
    with open(os.path.join(OUT_QUICK if quick else OUT, "set.json")) as f:
        return json.load(f)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help=f"{QUICK_SCENES} scenes and {QUICK_SINGLES} singles a split, "
                                                         f"into {os.path.relpath(OUT_QUICK, ROOT)}")
    a = ap.parse_args()
    build(a.quick)
