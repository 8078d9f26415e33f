"""The copy-detection evaluation set of bench/quality.py, in two parts that share no image and no
transform parameter:

- **tune**: the 102 images of corpus/images with the *tune* parameters of every transform. Every
  constant of vsearch's descriptor is chosen on this part only.
- **held-out**: images drawn (seeded) from Debian packages that corpus/ did not use — Open Clip Art
  (openclipart-png), Tux Paint stamps (tuxpaint-stamps-default) and the MATE desktop's photographs
  and artwork (mate-backgrounds) — flattened on white and reduced to ≤ 800 px like corpus/, with the
  *held-out* parameters of every transform (other border colours and widths, other text, other crops…).
  No constant was chosen on it; it is the part whose figures are reported against the targets.

Each part is its own catalog: a query is searched among its part's images only.

A transform is a name, a description and, per part, a function (rng, index, w, h, src) -> (convert args,
box or None). Queries are PNG (lossless) unless the transform is about JPEG.
"""
import glob
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CORPUS = os.path.join(ROOT, "corpus", "images")
FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf"
HELD_OUT_SEED = 20261124
HELD_OUT_COUNTS = {"openclipart": 150, "tuxpaint": 60}
APT_PACKAGES = ["imagemagick", "fonts-dejavu-core", "openclipart-png", "tuxpaint-stamps-default", "mate-backgrounds"]


# ------------------------------------------------------------------ the images of each part
def tune_sources():
    """(name, path) of corpus/images, sorted."""
    names = sorted(f for f in os.listdir(CORPUS) if f.lower().endswith((".jpg", ".png")))
    return [(os.path.splitext(f)[0], os.path.join(CORPUS, f)) for f in names]


def corpus_source_paths():
    """The package paths corpus/ took its images from (so the held-out part never repeats one)."""
    import csv
    with open(os.path.join(ROOT, "corpus", "catalog.csv"), newline="") as f:
        return {os.path.basename(row["source_path"]) for row in csv.DictReader(f)}


def held_out_candidates():
    """(name, package path) of the held-out images before reduction: a seeded draw from each package."""
    used = corpus_source_paths()
    rng = random.Random(HELD_OUT_SEED)
    out = []
    clip = sorted(p for p in glob.glob("/usr/share/openclipart/png/**/*.png", recursive=True)
                  if os.path.basename(p) not in used and os.path.getsize(p) > 4000)
    stamps = sorted(p for p in glob.glob("/usr/share/tuxpaint/stamps/**/*.png", recursive=True)
                    if os.path.basename(p) not in used and "/money/" not in p and os.path.getsize(p) > 4000)
    if len(clip) < HELD_OUT_COUNTS["openclipart"] or len(stamps) < HELD_OUT_COUNTS["tuxpaint"]:
        raise RuntimeError("held-out images missing: apt-get install " + " ".join(APT_PACKAGES))
    for p in _draw(rng, clip, HELD_OUT_COUNTS["openclipart"]):
        out.append(("hc_" + _slug(p), p))
    for p in _draw(rng, stamps, HELD_OUT_COUNTS["tuxpaint"]):
        out.append(("ht_" + _slug(p), p))
    # Transparent wallpapers flatten to plain white (Arc-Colors-Transparent, Stripes-Light, Silk, Spring,
    # Waves): blank pictures no method can tell apart, left out by their flattened contrast.
    mate = sorted(p for p in glob.glob("/usr/share/backgrounds/mate/**/*", recursive=True)
                  if p.lower().endswith((".jpg", ".png")) and "Elephants_" not in p and not _blank_when_flattened(p))
    for p in mate:
        out.append(("hm_" + _slug(p), p))
    seen, unique = set(), []
    for name, p in out:
        while name in seen:
            name += "_b"
        seen.add(name)
        unique.append((name, p))
    return unique


def _blank_when_flattened(path):
    """Whether the picture, flattened on white, is (nearly) one colour: standard deviation < 2%."""
    import subprocess
    r = subprocess.run(["convert", path + "[0]", "-background", "white", "-alpha", "remove", "-resize", "64x64",
                        "-format", "%[fx:standard_deviation]", "info:"], capture_output=True, text=True)
    try:
        return float(r.stdout.strip()) < 0.02
    except ValueError:
        return True


def _draw(rng, paths, count, max_side=4000):
    """`count` paths in a seeded order, skipping files larger than max_side px (ImageMagick's
    default resource policy refuses some of the package's huge canvases)."""
    import subprocess
    order = list(paths)
    rng.shuffle(order)
    chosen = []
    for p in order:
        r = subprocess.run(["identify", "-ping", "-format", "%w %h", p + "[0]"], capture_output=True, text=True)
        try:
            w, h = map(int, r.stdout.split()[:2])
        except ValueError:
            continue
        if max(w, h) <= max_side:
            chosen.append(p)
        if len(chosen) == count:
            return chosen
    raise RuntimeError(f"only {len(chosen)} usable images of {count}")


def reduce_args(src, out):
    """convert arguments that make a held-out catalog image: first frame, flattened on white, ≤ 800 px, JPEG 92."""
    return [src + "[0]", "-background", "white", "-alpha", "remove", "-alpha", "off",
            "-resize", "800x800>", "-quality", "92", "-strip", out]


def _slug(path):
    base = os.path.splitext(os.path.basename(path))[0].lower()
    return "".join(c if c.isalnum() else "_" for c in base)[:40].strip("_")


# ------------------------------------------------------------------ transforms
def _crop_center(frac):
    def make(rng, i, w, h, src):
        return [src, "-gravity", "center", "-crop", f"{round(frac * 100)}%x{round(frac * 100)}%+0+0", "+repage"], None
    return make


def _crop_corner(frac):
    def make(rng, i, w, h, src):
        cw, ch = round(w * frac), round(h * frac)
        x = (w - cw) if i % 4 in (1, 3) else 0
        y = (h - ch) if i % 4 in (2, 3) else 0
        return [src, "-crop", f"{cw}x{ch}+{x}+{y}", "+repage"], None
    return make


def _crop_random(frac):
    def make(rng, i, w, h, src):
        cw, ch = round(w * frac), round(h * frac)
        x, y = rng.randint(0, w - cw), rng.randint(0, h - ch)
        return [src, "-crop", f"{cw}x{ch}+{x}+{y}", "+repage"], None
    return make


def _resize(percent):
    return lambda rng, i, w, h, src: ([src, "-resize", f"{percent}%"], None)


def _thumb(side):
    return lambda rng, i, w, h, src: ([src, "-resize", f"{side}x{side}>"], None)


def _jpeg(quality):
    return lambda rng, i, w, h, src: ([src, "-quality", str(quality)], None)


def _rotate(degrees, fill):
    return lambda rng, i, w, h, src: ([src, "-background", fill, "-rotate", str(degrees), "-gravity", "center",
                                       "-crop", f"{w}x{h}+0+0", "+repage"], None)


def _modulate(percent):
    return lambda rng, i, w, h, src: ([src, "-define", "modulate:colorspace=HSB", "-modulate", str(percent)], None)


def _border(colours, fractions):
    def make(rng, i, w, h, src):
        colour, frac = colours[i % len(colours)], fractions[(i // len(colours)) % len(fractions)]
        b = max(1, round(max(w, h) * frac))
        return [src, "-bordercolor", colour, "-border", f"{b}x{b}"], None
    return make


def _letterbox(colours, aspects):
    """Pads one axis only: to the aspect (w/h) given, the image centred, bars of a colour."""
    def make(rng, i, w, h, src):
        colour, aspect = colours[i % len(colours)], aspects[(i // len(colours)) % len(aspects)]
        if w / h < aspect:
            cw, ch = round(h * aspect), h
        else:
            cw, ch = w, round(w / aspect)
        if (cw, ch) == (w, h):          # already that shape: pad the other way
            cw, ch = w, round(h * 1.4)
        return [src, "-background", colour, "-gravity", "center", "-extent", f"{cw}x{ch}"], None
    return make


def _mirror():
    return lambda rng, i, w, h, src: ([src, "-flop"], None)


def _text(texts, colours, gravities, logo):
    """A caption (and optionally a 'logo' badge) drawn over the picture, sized to it."""
    def make(rng, i, w, h, src):
        text, colour = texts[i % len(texts)], colours[i % len(colours)]
        gravity = gravities[i % len(gravities)]
        size = max(10, round(min(w, h) * 0.11))
        args = [src, "-font", FONT, "-pointsize", str(size), "-fill", colour, "-stroke", "black",
                "-strokewidth", str(max(1, size // 18)), "-gravity", gravity, "-annotate", "+8+8", text]
        if logo:
            s = max(12, round(min(w, h) * 0.16))
            args += ["-stroke", "none", "-fill", "#1a73e8d0", "-draw",
                     f"roundrectangle {w - s - 10},{10} {w - 10},{10 + s} {s // 5},{s // 5}",
                     "-fill", "white", "-pointsize", str(max(8, s // 3)), "-gravity", "northeast",
                     "-annotate", f"+{10 + s // 8}+{10 + s // 3}", "LOGO"]
        return args, None
    return make


def _banner(colours, texts, product_side):
    """The product on a wide uniform banner (3:1) with a headline beside it; no box is given."""
    def make(rng, i, w, h, src):
        colour, text = colours[i % len(colours)], texts[i % len(texts)]
        bh = max(h, w // 2)
        bw = 3 * bh
        scale = bh * 0.9 / h
        pw, ph = round(w * scale), round(h * scale)
        x = round(bh * 0.1) if product_side == "left" else bw - pw - round(bh * 0.1)
        tx_gravity = "east" if product_side == "left" else "west"
        size = max(12, bh // 7)
        return ["-size", f"{bw}x{bh}", f"xc:{colour}", "(", src, "-resize", f"{pw}x{ph}!", ")",
                "-geometry", f"+{x}+{(bh - ph) // 2}", "-composite",
                "-font", FONT, "-pointsize", str(size), "-fill", "white", "-gravity", tx_gravity,
                "-annotate", f"+{bh // 6}+0", text], None
    return make


def _screenshot(chrome, product_frac):
    """The product in a web-page-like screenshot: a header bar, a side panel, text lines; no box."""
    def make(rng, i, w, h, src):
        sw, sh_ = round(w / product_frac), round(h / product_frac)
        header = max(8, sh_ // 10)
        side = max(8, sw // 6)
        x = side + (sw - side - w) // 2
        y = header + (sh_ - header - h) // 2
        draw = [f"fill {chrome} rectangle 0,0 {sw},{header}",
                f"fill #e8eaed rectangle 0,{header} {side},{sh_}"]
        for k in range(5):
            yy = header + 12 + k * max(8, sh_ // 14)
            draw.append(f"fill #9aa0a6 rectangle 6,{yy} {side - 6},{yy + max(3, sh_ // 60)}")
        args = ["-size", f"{sw}x{sh_}", "xc:white"]
        for d in draw:
            args += ["-draw", d]
        args += [src, "-geometry", f"+{max(side, x)}+{max(header, y)}", "-composite"]
        return args, None
    return make


def _canvas_box(colours):
    def make(rng, i, w, h, src):
        ox, oy = rng.randint(0, w), rng.randint(0, h)
        colour = rng.choice(colours)
        noise_seed = rng.randint(1, 2**31 - 1)
        return ["-size", f"{2 * w}x{2 * h}", f"xc:{colour}", "-seed", str(noise_seed),
                "-attenuate", "0.6", "+noise", "Gaussian", src, "-geometry", f"+{ox}+{oy}", "-composite"], \
            [ox, oy, ox + w, oy + h]
    return make


def _then(first, second_args):
    """A combination: `first`'s transform followed by extra convert operators."""
    def make(rng, i, w, h, src):
        args, box = first(rng, i, w, h, src)
        return args + second_args, box
    return make


def _mirror_then(first):
    def make(rng, i, w, h, src):
        args, box = first(rng, i, w, h, src)
        return args + ["-flop"], box
    return make


# name -> (description, tune, held-out, extension)
TRANSFORMS = {
    "crop_center": ("central crop: tune 80%, held-out 75% of each side",
                    _crop_center(0.80), _crop_center(0.75), "png"),
    "crop_offset": ("off-centre crop: tune 75% of each side at a corner (TL, TR, BL, BR cycling), held-out 80% "
                    "at a seeded random position", _crop_corner(0.75), _crop_random(0.80), "png"),
    "resize": ("downscale: tune 50%, held-out 33%", _resize(50), _resize(33), "png"),
    "thumb100": ("a 100 px thumbnail (longest side)", _thumb(100), _thumb(100), "png"),
    "jpeg": ("JPEG recompression: tune quality 30, held-out quality 20", _jpeg(30), _jpeg(20), "jpg"),
    "rotate": ("small rotation, cropped back to the size: tune 5° white fill, held-out −4° light-grey fill",
               _rotate(5, "white"), _rotate(-4, "#d8d8d8"), "png"),
    "bright": ("brighter (HSB value): tune +25%, held-out +35%", _modulate(125), _modulate(135), "png"),
    "dark": ("darker (HSB value): tune −25%, held-out −35%", _modulate(75), _modulate(65), "png"),
    "border": ("uniform border on every side: tune gray50/#40c040/#e0e0e0 × 8%/15% of the long side; held-out "
               "black/white/navy/wheat/firebrick × 5%/12%/20%",
               _border(["gray50", "#40c040", "#e0e0e0"], [0.08, 0.15]),
               _border(["black", "white", "#1e3a8a", "#f5deb3", "#b22222"], [0.05, 0.12, 0.20]), "png"),
    "letterbox": ("bars on one axis to another aspect (centred): tune black/white to 1:1 and 16:9; held-out "
                  "dark slate/pink/olive/#202020 to 4:3, 1:1 and 9:16",
                  _letterbox(["black", "white"], [1.0, 16 / 9]),
                  _letterbox(["#2f4f4f", "#ffc0cb", "#808000", "#202020"], [4 / 3, 1.0, 9 / 16]), "png"),
    "mirror": ("horizontal mirror (`-flop`)", _mirror(), _mirror(), "png"),
    "text": ("caption over the picture (DejaVu Sans Bold, 11% of the short side, black stroke): tune 'SALE -50%' "
             "white/yellow bottom-right or south; held-out 'NEW IN'/'Only 9.99' red/white top-left or north with a "
             "blue 'LOGO' badge in the top-right corner",
             _text(["SALE -50%"], ["white", "yellow"], ["southeast", "south"], logo=False),
             _text(["NEW IN", "Only 9.99"], ["#e53935", "white"], ["northwest", "north"], logo=True), "png"),
    "banner": ("the picture at 90% of the height of a 3:1 uniform banner with a white headline beside it, no box: "
               "tune picture on the left, banner #0b3d91/#c62828/#2e7d32; held-out picture on the right, banner "
               "#6a1b9a/#ef6c00/#00838f/#37474f",
               _banner(["#0b3d91", "#c62828", "#2e7d32"], ["Summer sale", "Shop now"], "left"),
               _banner(["#6a1b9a", "#ef6c00", "#00838f", "#37474f"], ["New season", "Free delivery"], "right"), "png"),
    "screenshot": ("the picture inside a web-page-like screenshot (header bar, side panel with text lines, white "
                   "page), no box: tune picture 60% of the page's side, dark header; held-out 55%, blue header",
                   _screenshot("#202124", 0.60), _screenshot("#1a73e8", 0.55), "png"),
    "canvas_box": ("pasted at a seeded random offset into a 2W×2H noisy canvas of a seeded colour, searched with "
                   "the pasted rectangle as the box (ViSearch `box`); the peers crop that box",
                   _canvas_box(["#3060a0", "#a03030", "#30a050", "#d0b020"]),
                   _canvas_box(["#602080", "#208080", "#d07020", "#505050"]), "png"),
    "mirror+crop": ("combination: mirror, then the part's off-centre crop",
                    _mirror_then(_crop_corner(0.75)), _mirror_then(_crop_random(0.80)), "png"),
    "border+jpeg": ("combination: the part's border, then JPEG quality 40 (tune) / 35 (held-out)",
                    _then(_border(["gray50", "#40c040", "#e0e0e0"], [0.08, 0.15]), ["-quality", "40"]),
                    _then(_border(["black", "white", "#1e3a8a", "#f5deb3", "#b22222"], [0.05, 0.12, 0.20]),
                          ["-quality", "35"]), "jpg"),
    "thumb+dark": ("combination: a 160 px thumbnail, darker (tune −20%, held-out −30%)",
                   _then(_thumb(160), ["-define", "modulate:colorspace=HSB", "-modulate", "80"]),
                   _then(_thumb(160), ["-define", "modulate:colorspace=HSB", "-modulate", "70"]), "png"),
}
TNAMES = list(TRANSFORMS)
PARTS = ("tune", "held-out")


def plan(part, images, size_of, seed, out_dir):
    """The queries of one part: dicts with transform, source, path, args, box."""
    rng = random.Random(seed + (0 if part == "tune" else 7919))
    queries = []
    for i, (name, src) in enumerate(images):
        w, h = size_of(src)
        for t in TNAMES:
            desc, tune, held, ext = TRANSFORMS[t]
            make = tune if part == "tune" else held
            args, box = make(rng, i, w, h, src)
            queries.append({"part": part, "transform": t, "source": name,
                            "path": os.path.join(out_dir, part, t, f"{name}.{ext}"), "args": args, "box": box})
    return queries
