#!/usr/bin/env python3
"""Generate the colour-profile, metadata and new-format fixtures of vsearch.

    python3 Tests/Fixtures/make_fixtures.py

Writes (and overwrites) only:

  Tests/Fixtures/colour/             tagged images + NAME.expected.png + source.png
                                     + README.tsv (numbers) + README.md
  Tests/Fixtures/metadata/           EXIF/GPS/XMP/IPTC/COM fixtures + README.md
  Tests/Fixtures/badinput/formats/   WebP, HEIC, AVIF and GIF files, valid and damaged
  Tests/Fixtures/badinput/README.tsv the rows of formats/ (replaced on every run,
                                     every other row is left exactly as it is)
  Tests/Fixtures/badinput/README.md  the "formats/" paragraph (replaced on every run)

Needs: Python 3 with Pillow (ImageCms = Little CMS 2, WebP, AVIF) and numpy;
the libheif tools heif-enc / heif-convert (libheif 1.15: x265 for HEIC) and
vips (8.14; only to decode the 16-bit PNG, whose data Pillow holds as 8 bits).
For that 16-bit PNG the script calls liblcms2 itself through ctypes (the copy
bundled with Pillow, else the system one) on doubles.

Deterministic: no clocks, no randomness without a fixed seed, single-threaded
AVIF encoding; two runs give byte-identical files (checked by running it twice
and comparing sha256 sums).  Inputs are photos of corpus/images (public domain
and CC0 only, see corpus/catalog.csv):

  astronaut.jpg       Public domain (NASA)         colour/ source.png
  coffee_cup.jpg      CC0-1.0 (Rachel Michetti)    badinput/formats/
  chelsea_cat.jpg     CC0-1.0 (Stefan van der Walt) metadata/, formats/
  falcon9_rocket.jpg  Public domain (SpaceX)       formats/ (animation frames)

Colour references ("expected") are made by Little CMS through Pillow's
ImageCms from the *tagged file itself*: the file is decoded, its embedded
profile is read back from the file, and

    ImageCms.profileToProfile(im, embedded, sRGB,
        renderingIntent=ImageCms.Intent.RELATIVE_COLORIMETRIC,
        flags=ImageCms.Flags.BLACKPOINTCOMPENSATION)

with sRGB = ImageCms.createProfile("sRGB") (Little CMS's built-in sRGB).
Profiles that are not on the machine (Display P3, a gamma-1.8 gray, the
profile equivalent to a PNG's gAMA+cHRM) are written by icc_matrix_trc() /
icc_gray() below: ICC v4.3 matrix/TRC profiles with parametric curves,
loaded and used by Little CMS like any other profile.  See colour/README.md,
metadata/README.md and the formats/ rows of badinput/README.tsv.

Takes about 11 s.
"""

from __future__ import annotations

import hashlib
import io
import random
import shutil
import struct
import subprocess
import tempfile
import time
import zlib
from pathlib import Path

import numpy as np
from PIL import Image, ImageCms, ImageDraw, PngImagePlugin
from PIL.TiffImagePlugin import IFDRational

HERE = Path(__file__).resolve().parent            # Tests/Fixtures
REPO = HERE.parent.parent
CORPUS = REPO / "corpus" / "images"
COLOUR = HERE / "colour"
METADATA = HERE / "metadata"
BADINPUT = HERE / "badinput"
FORMATS = BADINPUT / "formats"

COLORD = Path("/usr/share/color/icc/colord")
GHOSTSCRIPT = Path("/usr/share/color/icc/ghostscript")

INTENT = ImageCms.Intent.RELATIVE_COLORIMETRIC
BPC = ImageCms.Flags.BLACKPOINTCOMPENSATION
SRGB = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB"))

COLOUR_LONG_SIDE = 256      # 18 cases x (tagged file + expected.png) must stay well under 3 MB
FORMATS_LONG_SIDE = 240
FORMAT_FILE_LIMIT = 60_000

TMP = Path(tempfile.mkdtemp(prefix="vsearch-fixtures-"))


# --------------------------------------------------------------------------- helpers

def run(*args: str) -> subprocess.CompletedProcess:
    result = subprocess.run(args, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({result.returncode}):\n{result.stdout}\n{result.stderr}")
    return result


def photo(name: str, long_side: int, crop: tuple[int, int, int, int] | None = None) -> Image.Image:
    im = Image.open(CORPUS / f"{name}.jpg").convert("RGB")
    if crop:
        im = im.crop(crop)
    scale = long_side / max(im.size)
    size = (round(im.width * scale) // 2 * 2, round(im.height * scale) // 2 * 2)   # even: HEIC 4:2:0
    return im.resize(size, Image.LANCZOS)


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def save(im: Image.Image, path: Path, fmt: str, **params) -> Path:
    buffer = io.BytesIO()
    im.save(buffer, fmt, **params)
    return write(path, buffer.getvalue())


def save_png(im: Image.Image, path: Path, **params) -> Path:
    return save(im, path, "PNG", optimize=True, **params)


def rgb_array(im: Image.Image) -> np.ndarray:
    return np.asarray(im.convert("RGB"), dtype=np.int16)


def diff(a: Image.Image | np.ndarray, b: Image.Image | np.ndarray) -> tuple[float, int]:
    a = a if isinstance(a, np.ndarray) else rgb_array(a)
    b = b if isinstance(b, np.ndarray) else rgb_array(b)
    assert a.shape == b.shape, (a.shape, b.shape)
    d = np.abs(a.astype(np.int32) - b.astype(np.int32))
    return round(float(d.mean()), 2), int(d.max())


def to_srgb(im: Image.Image, profile: ImageCms.ImageCmsProfile) -> Image.Image:
    """The reference conversion: embedded profile -> Little CMS built-in sRGB."""
    out = ImageCms.profileToProfile(im, profile, SRGB, renderingIntent=INTENT, outputMode="RGB", flags=BPC)
    out.info.pop("icc_profile", None)            # expected.png files carry no profile
    return out


def from_srgb(im: Image.Image, profile: ImageCms.ImageCmsProfile, mode: str) -> Image.Image:
    out = ImageCms.profileToProfile(im, SRGB, profile, renderingIntent=INTENT, outputMode=mode, flags=BPC)
    out.info.pop("icc_profile", None)            # embedded explicitly where wanted
    return out


class LittleCMS:
    """Little CMS called directly (ctypes) on doubles, for the 16-bit PNG, whose data Pillow holds only
    as 8 bits.  Loads the liblcms2 bundled with Pillow (the library behind ImageCms) when there is one."""

    TYPE_RGB_DBL = (1 << 22) | (4 << 16) | (3 << 3)       # FLOAT_SH(1) | COLORSPACE_SH(PT_RGB) | CHANNELS_SH(3)
    NOOPTIMIZE = 0x0100

    def __init__(self):
        import ctypes
        import ctypes.util
        import PIL
        libs = sorted((Path(PIL.__file__).parent.parent / "pillow.libs").glob("liblcms2*.so*"))
        path = str(libs[0]) if libs else ctypes.util.find_library("lcms2")
        lib = ctypes.CDLL(path)
        lib.cmsOpenProfileFromMem.restype = ctypes.c_void_p
        lib.cmsOpenProfileFromMem.argtypes = [ctypes.c_char_p, ctypes.c_uint32]
        lib.cmsCreateTransform.restype = ctypes.c_void_p
        lib.cmsCreateTransform.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_void_p, ctypes.c_uint32,
                                           ctypes.c_uint32, ctypes.c_uint32]
        lib.cmsDoTransform.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint32]
        lib.cmsDeleteTransform.argtypes = [ctypes.c_void_p]
        lib.cmsCloseProfile.argtypes = [ctypes.c_void_p]
        self.lib = lib
        self.version = lib.cmsGetEncodedCMMversion()

    def transform(self, rgb: np.ndarray, source_icc: bytes, target_icc: bytes) -> np.ndarray:
        """rgb: float64 0..1, shape (..., 3); relative colorimetric + BPC, no optimisation (full precision)."""
        lib = self.lib
        src = lib.cmsOpenProfileFromMem(source_icc, len(source_icc))
        dst = lib.cmsOpenProfileFromMem(target_icc, len(target_icc))
        assert src and dst
        xf = lib.cmsCreateTransform(src, self.TYPE_RGB_DBL, dst, self.TYPE_RGB_DBL, int(INTENT),
                                    int(BPC) | self.NOOPTIMIZE)
        assert xf
        inp = np.ascontiguousarray(rgb, dtype=np.float64)
        out = np.empty_like(inp)
        lib.cmsDoTransform(xf, inp.ctypes.data, out.ctypes.data, inp.size // 3)
        lib.cmsDeleteTransform(xf)
        lib.cmsCloseProfile(src)
        lib.cmsCloseProfile(dst)
        return np.clip(out, 0.0, 1.0)


def open_profile(data: bytes) -> ImageCms.ImageCmsProfile:
    return ImageCms.ImageCmsProfile(io.BytesIO(data))


def truncated(data: bytes, n: int) -> bytes:
    assert 0 < n < len(data)
    return data[:n]


def garbage(n: int, seed: int) -> bytes:
    return random.Random(seed).randbytes(n)


# --------------------------------------------------------------------------- ICC writer
# ICC.1:2022 (v4.3) matrix/TRC and gray TRC profiles.  Little CMS parses them;
# self_check_icc_writer() compares a hand-written sRGB with Little CMS's own.

D50 = (0.9642, 1.0, 0.8249)                  # PCS illuminant, as stored in ICC headers
BRADFORD = np.array([[0.8951, 0.2664, -0.1614], [-0.7502, 1.7135, 0.0367], [0.0389, -0.0685, 1.0296]])


def xy_to_XYZ(x: float, y: float) -> np.ndarray:
    return np.array([x / y, 1.0, (1 - x - y) / y])


def rgb_to_xyz_matrix(primaries, white) -> np.ndarray:
    """Columns: XYZ of R, G, B at full intensity, white normalised to Y = 1."""
    m = np.column_stack([xy_to_XYZ(*p) for p in primaries])
    scale = np.linalg.solve(m, xy_to_XYZ(*white))
    return m * scale


def bradford(src_white_XYZ, dst_white_XYZ) -> np.ndarray:
    s = BRADFORD @ np.asarray(src_white_XYZ)
    d = BRADFORD @ np.asarray(dst_white_XYZ)
    return np.linalg.inv(BRADFORD) @ np.diag(d / s) @ BRADFORD


def s15(v: float) -> bytes:
    return struct.pack(">i", round(v * 65536))


def tag_xyz(xyz) -> bytes:
    return b"XYZ \0\0\0\0" + b"".join(s15(v) for v in xyz)


def tag_mluc(text: str) -> bytes:
    s = text.encode("utf-16-be")
    return b"mluc\0\0\0\0" + struct.pack(">II", 1, 12) + b"enUS" + struct.pack(">II", len(s), 28) + s


def tag_para_gamma(g: float) -> bytes:
    return b"para\0\0\0\0" + struct.pack(">HH", 0, 0) + s15(g)


def tag_para_srgb() -> bytes:
    # IEC 61966-2-1: Y = ((X + 0.055) / 1.055)^2.4 for X >= 0.04045, else X / 12.92
    return (b"para\0\0\0\0" + struct.pack(">HH", 3, 0) + s15(2.4) + s15(1 / 1.055) + s15(0.055 / 1.055)
            + s15(1 / 12.92) + s15(0.04045))


def tag_sf32(m: np.ndarray) -> bytes:
    return b"sf32\0\0\0\0" + b"".join(s15(v) for v in m.flatten())


def icc_profile(colour_space: bytes, tags: list[tuple[bytes, bytes]]) -> bytes:
    """Assemble a v4.3 display ('mntr') profile; identical tag data is shared."""
    table, body, offsets = [], b"", {}
    data_start = 128 + 4 + 12 * len(tags)
    for sig, data in tags:
        if data not in offsets:
            body += b"\0" * (-len(body) % 4)
            offsets[data] = data_start + len(body)
            body += data
        table.append(struct.pack(">4sII", sig, offsets[data], len(data)))
    body += b"\0" * (-len(body) % 4)
    size = data_start + len(body)
    header = struct.pack(">I4sI4s4s4s6H4s4sI4sI8sI", size, b"\0\0\0\0", 0x04300000, b"mntr", colour_space,
                         b"XYZ ", 2026, 1, 1, 0, 0, 0, b"acsp", b"\0\0\0\0", 0, b"\0\0\0\0", 0, b"\0" * 8, 0)
    header += b"".join(s15(v) for v in D50) + b"\0\0\0\0"
    profile = bytearray(header + b"\0" * 16 + b"\0" * 28 + struct.pack(">I", len(tags)) + b"".join(table) + body)
    assert len(profile) == size
    profile[84:100] = hashlib.md5(bytes(profile)).digest()   # profile ID (flags, intent, ID are zero here)
    return bytes(profile)


def icc_matrix_trc(description: str, primaries, white, trc: bytes) -> bytes:
    d65_to_d50 = bradford(xy_to_XYZ(*white), D50)
    m = d65_to_d50 @ rgb_to_xyz_matrix(primaries, white)
    return icc_profile(b"RGB ", [
        (b"desc", tag_mluc(description)),
        (b"cprt", tag_mluc("No copyright, use freely (vsearch test fixture)")),
        (b"wtpt", tag_xyz(D50)),
        (b"chad", tag_sf32(d65_to_d50)),
        (b"rXYZ", tag_xyz(m[:, 0])), (b"gXYZ", tag_xyz(m[:, 1])), (b"bXYZ", tag_xyz(m[:, 2])),
        (b"rTRC", trc), (b"gTRC", trc), (b"bTRC", trc),
    ])


def icc_gray(description: str, trc: bytes) -> bytes:
    return icc_profile(b"GRAY", [
        (b"desc", tag_mluc(description)),
        (b"cprt", tag_mluc("No copyright, use freely (vsearch test fixture)")),
        (b"wtpt", tag_xyz(D50)),
        (b"kTRC", trc),
    ])


SRGB_PRIMARIES = ((0.64, 0.33), (0.30, 0.60), (0.15, 0.06))
P3_PRIMARIES = ((0.680, 0.320), (0.265, 0.690), (0.150, 0.060))       # SMPTE EG 432-1 / H.273 ColourPrimaries 12
ADOBE_PRIMARIES = ((0.64, 0.33), (0.21, 0.71), (0.15, 0.06))          # Adobe RGB (1998)
D65_XY = (0.3127, 0.3290)

DISPLAY_P3_ICC = icc_matrix_trc("Display P3 (vsearch fixture: P3 primaries, D65, sRGB curve)",
                                P3_PRIMARIES, D65_XY, tag_para_srgb())
GRAY_GAMMA18_ICC = icc_gray("Gray gamma 1.8 (vsearch fixture)", tag_para_gamma(1.8))


def self_check_icc_writer(source: Image.Image) -> int:
    mine = icc_matrix_trc("sRGB (vsearch fixture self-check)", SRGB_PRIMARIES, D65_XY, tag_para_srgb())
    converted = ImageCms.profileToProfile(source, open_profile(mine), SRGB, renderingIntent=INTENT, flags=BPC)
    return diff(converted, source)[1]


# --------------------------------------------------------------------------- JPEG / PNG bytes

def jpeg_segments(data: bytes) -> list[tuple[int, int, bytes]]:
    """(offset, marker, payload) of each marker segment before SOS."""
    assert data[:2] == b"\xff\xd8"
    out, pos = [], 2
    while pos < len(data):
        marker = data[pos + 1]
        length = struct.unpack(">H", data[pos + 2:pos + 4])[0]
        out.append((pos, marker, data[pos + 4:pos + 2 + length]))
        if marker == 0xDA:
            break
        pos += 2 + length
    return out


def jpeg_insert_after_app(data: bytes, segments: list[bytes]) -> bytes:
    """Insert whole marker segments after the leading APPn run."""
    pos = 2
    for offset, marker, payload in jpeg_segments(data):
        if 0xE0 <= marker <= 0xEF:
            pos = offset + 4 + len(payload)
        else:
            break
    return data[:pos] + b"".join(segments) + data[pos:]


def jpeg_segment(marker: int, payload: bytes) -> bytes:
    assert len(payload) + 2 <= 0xFFFF
    return bytes([0xFF, marker]) + struct.pack(">H", len(payload) + 2) + payload


def icc_app2_count(data: bytes) -> int:
    return sum(1 for _, m, p in jpeg_segments(data) if m == 0xE2 and p.startswith(b"ICC_PROFILE\0"))


def png_chunk(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))


def png_chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    out, pos = [], 8
    while pos + 8 <= len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        out.append((kind, data[pos + 8:pos + 8 + n]))
        pos += 12 + n
    return out


def png16_rgb(pixels: np.ndarray, icc: bytes | None = None, name: bytes = b"ICC profile") -> bytes:
    """A 16-bit RGB PNG (colour type 2, bit depth 16), filter 0 rows, optional iCCP."""
    h, w, _ = pixels.shape
    raw = b"".join(b"\0" + pixels[y].astype(">u2").tobytes() for y in range(h))
    out = b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 16, 2, 0, 0, 0))
    if icc:
        out += png_chunk(b"iCCP", name + b"\0\0" + zlib.compress(icc, 9))
    return out + png_chunk(b"IDAT", zlib.compress(raw, 9)) + png_chunk(b"IEND", b"")


# --------------------------------------------------------------------------- ISO BMFF (HEIC/AVIF)

def boxes(data: bytes, start: int, end: int) -> list[tuple[bytes, int, int, int]]:
    """(type, start, end, payload start) of the boxes in data[start:end]."""
    out, pos = [], start
    while pos + 8 <= end:
        size, kind = struct.unpack(">I4s", data[pos:pos + 8])
        header = 8
        if size == 1:
            size, header = struct.unpack(">Q", data[pos + 8:pos + 16])[0], 16
        elif size == 0:
            size = end - pos
        out.append((kind, pos, pos + size, pos + header))
        pos += size
    return out


def box(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I4s", 8 + len(payload), kind) + payload


def child(data: bytes, parent: tuple, kind: bytes, full: bool = False):
    skip = 4 if full else 0
    return next(b for b in boxes(data, parent[3] + skip, parent[2]) if b[0] == kind)


def heif_properties(data: bytes) -> list[tuple[bytes, bytes]]:
    meta = next(b for b in boxes(data, 0, len(data)) if b[0] == b"meta")
    ipco = child(data, child(data, meta, b"iprp", full=True), b"ipco")
    return [(k, data[p:e]) for k, _, e, p in boxes(data, ipco[3], ipco[2])]


def heif_icc(data: bytes) -> bytes | None:
    for kind, payload in heif_properties(data):
        if kind == b"colr" and payload[:4] in (b"prof", b"rICC"):
            return payload[4:]
    return None


def heif_add_property(data: bytes, prop: bytes, essential: bool, item_id: int = 1) -> bytes:
    """Append a property to ipco, associate it with item_id in ipma, fix the iloc offsets."""
    top = boxes(data, 0, len(data))
    meta = next(b for b in top if b[0] == b"meta")
    meta_children = boxes(data, meta[3] + 4, meta[2])
    new_children = []
    for kind, s, e, p in meta_children:
        if kind != b"iprp":
            new_children.append(data[s:e])
            continue
        parts = []
        for k2, s2, e2, p2 in boxes(data, p, e):
            if k2 == b"ipco":
                count = len(boxes(data, p2, e2))
                parts.append(box(b"ipco", data[p2:e2] + prop))
            elif k2 == b"ipma":
                parts.append(box(b"ipma", ipma_add(data[p2:e2], item_id, count + 1, essential)))
            else:
                parts.append(data[s2:e2])
        new_children.append(box(b"iprp", b"".join(parts)))
    new_meta = box(b"meta", data[meta[3]:meta[3] + 4] + b"".join(new_children))
    delta = len(new_meta) - (meta[2] - meta[1])
    new_meta = iloc_shift(new_meta, after=meta[2], delta=delta)
    return data[:meta[1]] + new_meta + data[meta[2]:]


def ipma_add(payload: bytes, item_id: int, index: int, essential: bool) -> bytes:
    version, flags = payload[0], int.from_bytes(payload[1:4], "big")
    count = struct.unpack(">I", payload[4:8])[0]
    id_len, assoc_len = (4 if version >= 1 else 2), (2 if flags & 1 else 1)
    out, pos = bytearray(payload[:8]), 8
    for _ in range(count):
        this_id = int.from_bytes(payload[pos:pos + id_len], "big")
        n = payload[pos + id_len]
        start = pos + id_len + 1
        assoc = payload[start:start + n * assoc_len]
        if this_id == item_id:
            value = index | ((0x8000 if assoc_len == 2 else 0x80) if essential else 0)
            assoc += value.to_bytes(assoc_len, "big")
        out += payload[pos:pos + id_len] + bytes([len(assoc) // assoc_len]) + assoc
        pos = start + n * assoc_len
    return bytes(out + payload[pos:])


def iloc_shift(meta: bytes, after: int, delta: int) -> bytes:
    """Add delta to file offsets (construction method 0) that point at or past `after`."""
    meta = bytearray(meta)
    iloc = next(b for b in boxes(meta, 12, len(meta)) if b[0] == b"iloc")
    p = iloc[3]
    version = meta[p]
    offset_size, length_size = meta[p + 4] >> 4, meta[p + 4] & 15
    base_size, index_size = meta[p + 5] >> 4, (meta[p + 5] & 15) if version in (1, 2) else 0
    p += 6
    n = struct.unpack(">H" if version < 2 else ">I", meta[p:p + (2 if version < 2 else 4)])[0]
    p += 2 if version < 2 else 4

    def shift(pos: int, size: int):
        if size == 0:
            return
        value = int.from_bytes(meta[pos:pos + size], "big")
        if value >= after:
            meta[pos:pos + size] = (value + delta).to_bytes(size, "big")

    for _ in range(n):
        p += 2 if version < 2 else 4
        method = 0
        if version in (1, 2):
            method = struct.unpack(">H", meta[p:p + 2])[0] & 15
            p += 2
        p += 2                                              # data_reference_index
        base = int.from_bytes(meta[p:p + base_size], "big")
        if method == 0:
            shift(p, base_size)
        p += base_size
        extents = struct.unpack(">H", meta[p:p + 2])[0]
        p += 2
        for _ in range(extents):
            p += index_size
            if method == 0 and base == 0:
                shift(p, offset_size)
            p += offset_size + length_size
    return bytes(meta)


def colr_nclx(primaries: int, transfer: int, matrix: int, full_range: bool) -> bytes:
    return box(b"colr", b"nclx" + struct.pack(">HHHB", primaries, transfer, matrix, 0x80 if full_range else 0))


def heif_enc(src: Path, out: Path, *args: str) -> bytes:
    run("heif-enc", *args, "-o", str(out), str(src))
    return out.read_bytes()


def heif_decode(data: bytes) -> Image.Image:
    """Decoded with libheif (heif-convert): the pixels as stored, no colour management."""
    heic, png = TMP / "decode.heic", TMP / "decode.png"
    heic.write_bytes(data)
    run("heif-convert", "--quiet", str(heic), str(png))
    im = Image.open(png)
    im.load()
    return im


# --------------------------------------------------------------------------- 1. colour

def make_colour() -> list[dict]:
    shutil.rmtree(COLOUR, ignore_errors=True)
    COLOUR.mkdir(parents=True)
    # astronaut: saturated flag red and blue, orange suit, skin, neutrals; the top of the portrait
    source = photo("astronaut", COLOUR_LONG_SIDE, crop=(0, 16, 512, 336))
    save_png(source, COLOUR / "source.png")
    src = rgb_array(source)
    print(f"colour: source.png {source.size[0]}x{source.size[1]} (astronaut, top crop)")
    print(f"  self-check: hand-written sRGB ICC vs Little CMS built-in sRGB: max |d| = {self_check_icc_writer(source)}")

    rows = []

    def record(name: str, profile: str, container: str, untagged: Image.Image | np.ndarray,
               expected: Image.Image, note: str = ""):
        expected = Image.fromarray(np.asarray(expected.convert("RGB")), "RGB")     # plain sRGB pixels, no chunks
        save_png(expected, COLOUR / f"{name}.expected.png")
        u = diff(untagged, expected)
        s = diff(src, expected)
        files = sorted(p.name for p in COLOUR.glob(name + ".*") if not p.name.endswith(".expected.png"))
        rows.append(dict(file=files[0], profile=profile, container=container, expected=f"{name}.expected.png",
                         untagged=u, source=s, note=note))
        print(f"  {files[0]:34s} untagged vs expected mean {u[0]:6.2f} max {u[1]:3d} | "
              f"source vs expected mean {s[0]:5.2f} max {s[1]:3d}")

    jpeg = dict(quality=95, subsampling=0)

    # -- RGB JPEGs tagged with real profiles (colord)
    for name, file, label in [
        ("jpeg_prophoto", "ProPhotoRGB.icc", "ProPhoto RGB (colord ProPhotoRGB.icc, ICC v4)"),
        ("jpeg_adobergb", "AdobeRGB1998.icc", "Adobe RGB (1998) (colord AdobeRGB1998.icc, ICC v4)"),
        ("jpeg_widegamut", "WideGamutRGB.icc", "Wide Gamut RGB (colord WideGamutRGB.icc, ICC v4)"),
        ("jpeg_swapped_red_green", "SwappedRedAndGreen.icc",
         "Swapped Red and Green (colord SwappedRedAndGreen.icc, ICC v4: red and green primaries exchanged)"),
    ]:
        icc = (COLORD / file).read_bytes()
        tagged = from_srgb(source, open_profile(icc), "RGB")
        path = save(tagged, COLOUR / f"{name}.jpg", "JPEG", icc_profile=icc, **jpeg)
        im = Image.open(path)
        im.load()
        assert im.info["icc_profile"] == icc
        record(name, f"{label}, {len(icc)} B", "JPEG q95 4:4:4, APP2 ICC_PROFILE", im,
               to_srgb(im, open_profile(im.info["icc_profile"])))

    # -- CMYK JPEG, 187 KB SWOP profile in several APP2 segments
    icc = (GHOSTSCRIPT / "default_cmyk.icc").read_bytes()
    cmyk = from_srgb(source, open_profile(icc), "CMYK")
    path = save(cmyk, COLOUR / "jpeg_cmyk_swop.jpg", "JPEG", icc_profile=icc, **jpeg)
    data = path.read_bytes()
    segments = icc_app2_count(data)
    assert segments >= 3, segments
    adobe = [p for _, m, p in jpeg_segments(data) if m == 0xEE]
    assert adobe and adobe[0].startswith(b"Adobe") and adobe[0][11] == 0, adobe     # APP14 transform 0
    im = Image.open(path)
    assert im.mode == "CMYK" and im.tile[0][3][0] == "CMYK;I", im.tile                # stored inverted
    im.load()
    stored = Image.open(path)
    stored.tile = [(t[0], t[1], t[2], ("CMYK", "")) for t in stored.tile]             # raw samples, no inversion
    stored.load()
    assert np.array_equal(np.asarray(stored).astype(np.int16), 255 - np.asarray(im).astype(np.int16)), \
        "the stored samples must be the inverted ink values (Adobe convention)"
    assert im.info["icc_profile"] == icc
    record("jpeg_cmyk_swop", f"Artifex CMYK SWOP (ghostscript default_cmyk.icc, ICC v2, {len(icc)} B, "
           f"Lab PCS, in {segments} APP2 segments)",
           "JPEG q95 CMYK, Adobe APP14 transform 0, inverted samples", im.convert("RGB"),
           to_srgb(im, open_profile(im.info["icc_profile"])),
           note=f"{segments} ICC_PROFILE APP2 segments")

    # -- gray JPEGs
    for name, icc, label in [
        ("jpeg_gray_sgray", (GHOSTSCRIPT / "default_gray.icc").read_bytes(),
         "Artifex sGray (ghostscript default_gray.icc, ICC v2: sRGB curve, D50)"),
        ("jpeg_gray_gamma18", GRAY_GAMMA18_ICC, "Gray gamma 1.8 (written by make_fixtures.py, ICC v4.3, para curve)"),
    ]:
        gray = from_srgb(source, open_profile(icc), "L")
        path = save(gray, COLOUR / f"{name}.jpg", "JPEG", icc_profile=icc, quality=95)
        im = Image.open(path)
        im.load()
        assert im.mode == "L"
        no_jpeg = diff(to_srgb(gray, open_profile(icc)), to_srgb(im, open_profile(im.info["icc_profile"])))
        record(name, f"{label}, {len(icc)} B", "JPEG q95 grayscale (1 component)", im.convert("RGB"),
               to_srgb(im, open_profile(im.info["icc_profile"])),
               note=(f"the source columns compare the colour source with a gray image; the gray made from source.png "
                     f"with the same profile, without the JPEG step, vs expected: mean {no_jpeg[0]}, max {no_jpeg[1]}"))

    prophoto = (COLORD / "ProPhotoRGB.icc").read_bytes()

    # -- PNG 8-bit, iCCP ProPhoto
    tagged = from_srgb(source, open_profile(prophoto), "RGB")
    path = save_png(tagged, COLOUR / "png8_prophoto.png", icc_profile=prophoto)
    assert [k for k, _ in png_chunks(path.read_bytes())][:2] == [b"IHDR", b"iCCP"]
    im = Image.open(path)
    im.load()
    record("png8_prophoto", f"ProPhoto RGB (colord ProPhotoRGB.icc), {len(prophoto)} B",
           "PNG 8-bit RGB, iCCP", im, to_srgb(im, open_profile(im.info["icc_profile"])))

    # -- PNG 16-bit, iCCP ProPhoto.  Pillow holds 16-bit RGB only as 8 bits (and ProPhoto at 8 bits is off by
    # several sRGB levels near black), so this case calls Little CMS directly on doubles: the same library
    # and the same intent/BPC as ImageCms, at full precision.  vips decodes the 16-bit file independently.
    lcms = LittleCMS()
    srgb_bytes = SRGB.tobytes()
    h, w = source.height, source.width
    pp = lcms.transform(np.asarray(source, dtype=np.float64) / 255.0, srgb_bytes, prophoto)
    pp16 = np.round(pp * 65535).astype(np.uint16)
    path = write(COLOUR / "png16_prophoto.png", png16_rgb(pp16, prophoto))
    chunks = png_chunks(path.read_bytes())
    ihdr = struct.unpack(">IIBBBBB", chunks[0][1])
    assert ihdr[2:4] == (16, 2) and chunks[1][0] == b"iCCP", (ihdr, [k for k, _ in chunks])
    run("vips", "rawsave", str(path), str(TMP / "dec16.raw"))          # vips decodes all 16 bits
    dec16 = np.frombuffer((TMP / "dec16.raw").read_bytes(), dtype="<u2").reshape(h, w, 3)
    assert np.array_equal(dec16, pp16)
    embedded = zlib.decompress(chunks[1][1].split(b"\0", 1)[1][1:])
    assert embedded == prophoto
    expected = Image.fromarray(np.round(lcms.transform(dec16 / 65535.0, embedded, srgb_bytes) * 255).astype(np.uint8), "RGB")
    dec8 = Image.fromarray(((dec16.astype(np.uint32) * 255 + 32767) // 65535).astype(np.uint8), "RGB")
    eight_bit = diff(to_srgb(dec8, open_profile(embedded)), expected)
    # the direct path agrees with ImageCms on 8-bit data
    im8 = Image.open(COLOUR / "png8_prophoto.png")
    direct8 = np.round(lcms.transform(np.asarray(im8, dtype=np.float64) / 255.0, prophoto, srgb_bytes) * 255)
    same_path = diff(direct8.astype(np.int16), Image.open(COLOUR / "png8_prophoto.expected.png"))
    assert same_path[1] <= 2, same_path
    record("png16_prophoto", f"ProPhoto RGB (colord ProPhotoRGB.icc), {len(prophoto)} B",
           "PNG 16-bit RGB (colour type 2, depth 16), iCCP", dec8, expected,
           note=(f"16-bit data and expected image from Little CMS {lcms.version // 1000}.{lcms.version % 1000 // 10} called directly on doubles "
                 f"(cmsCreateTransform TYPE_RGB_DBL, relative colorimetric, BPC, cmsFLAGS_NOOPTIMIZE), the file "
                 f"decoded by vips at 16 bits; on 8-bit data this path matches Pillow ImageCms (png8_prophoto: mean "
                 f"{same_path[0]}, max {same_path[1]}).  Rounding the file to 8 bits before colour management "
                 f"(what Pillow would do) gives mean {eight_bit[0]}, max {eight_bit[1]} against expected.  "
                 f"untagged = the 16-bit samples rounded to 8 bits"))
    print(f"    8-bit-first Pillow ImageCms vs expected: mean {eight_bit[0]} max {eight_bit[1]}; "
          f"direct Little CMS vs ImageCms on png8_prophoto: mean {same_path[0]} max {same_path[1]}")

    # -- PNG with only an sRGB chunk
    info = PngImagePlugin.PngInfo()
    info.add(b"sRGB", b"\0")                          # rendering intent 0 (perceptual)
    path = save_png(source, COLOUR / "png_srgb_chunk.png", pnginfo=info)
    kinds = [k for k, _ in png_chunks(path.read_bytes())]
    assert b"sRGB" in kinds and b"iCCP" not in kinds and b"gAMA" not in kinds
    im = Image.open(path)
    im.load()
    record("png_srgb_chunk", "sRGB chunk only (intent 0), no iCCP/gAMA/cHRM", "PNG 8-bit RGB", im, im.convert("RGB"))

    # -- PNG with gAMA 1/1.8 + cHRM Adobe RGB primaries, no iCCP
    gama = 55556                                       # file gamma 0.55556: decode exponent 1.8
    chrm = [D65_XY, *ADOBE_PRIMARIES]
    equivalent = icc_matrix_trc("gAMA 55556 + cHRM Adobe RGB (vsearch fixture)", ADOBE_PRIMARIES, D65_XY,
                                tag_para_gamma(100000 / gama))
    tagged = from_srgb(source, open_profile(equivalent), "RGB")
    info = PngImagePlugin.PngInfo()
    info.add(b"gAMA", struct.pack(">I", gama))
    info.add(b"cHRM", b"".join(struct.pack(">II", round(x * 100000), round(y * 100000)) for x, y in chrm))
    path = save_png(tagged, COLOUR / "png_gama_chrm.png", pnginfo=info)
    chunks = dict(png_chunks(path.read_bytes()))
    assert b"iCCP" not in chunks and b"sRGB" not in chunks
    # the reference, from the chunks of the file
    file_gamma = struct.unpack(">I", chunks[b"gAMA"])[0] / 100000
    c = struct.unpack(">8I", chunks[b"cHRM"])
    white, prim = (c[0] / 1e5, c[1] / 1e5), [(c[2] / 1e5, c[3] / 1e5), (c[4] / 1e5, c[5] / 1e5), (c[6] / 1e5, c[7] / 1e5)]
    from_chunks = icc_matrix_trc("from gAMA/cHRM", prim, white, tag_para_gamma(1 / file_gamma))
    im = Image.open(path)
    im.load()
    expected = to_srgb(im, open_profile(from_chunks))
    numeric = gama_chrm_numeric(np.asarray(im), file_gamma, prim, white)
    cross = diff(numeric, expected)
    record("png_gama_chrm", "gAMA 55556 (decode exponent 1.8) + cHRM Adobe RGB (1998) primaries, D65 white; no iCCP",
           "PNG 8-bit RGB", im, expected,
           note=f"numpy reference (gamma, primaries->XYZ D65->sRGB) vs expected: mean {cross[0]} max {cross[1]}")
    print(f"    numpy reference vs ImageCms equivalent-profile reference: mean {cross[0]} max {cross[1]}")

    # -- lossless WebP tagged ProPhoto
    tagged = from_srgb(source, open_profile(prophoto), "RGB")
    path = save(tagged, COLOUR / "webp_lossless_prophoto.webp", "WEBP", lossless=True, quality=100, method=6,
                exact=True, icc_profile=prophoto)
    im = Image.open(path)
    im.load()
    assert np.array_equal(np.asarray(im.convert("RGB")), np.asarray(tagged)) and im.info["icc_profile"] == prophoto
    record("webp_lossless_prophoto", f"ProPhoto RGB (colord ProPhotoRGB.icc), {len(prophoto)} B",
           "WebP lossless (VP8X + ICCP + VP8L)", im.convert("RGB"),
           to_srgb(im.convert("RGB"), open_profile(im.info["icc_profile"])))

    # -- HEIC Display P3: ICC profile (heif-enc embeds the PNG's iCCP), and nclx-only variants
    p3 = from_srgb(source, open_profile(DISPLAY_P3_ICC), "RGB")
    save_png(p3, TMP / "p3_tagged.png", icc_profile=DISPLAY_P3_ICC)
    save_png(p3, TMP / "p3_untagged.png")
    save_png(source, TMP / "srgb_untagged.png")
    heic = heif_enc(TMP / "p3_tagged.png", COLOUR / "heic_p3_icc.heic", "-q", "90")
    assert heif_icc(heic) == DISPLAY_P3_ICC, "heif-enc did not embed the ICC profile"
    decoded = heif_decode(heic).convert("RGB")
    record("heic_p3_icc", f"Display P3 (written by make_fixtures.py, ICC v4.3, {len(DISPLAY_P3_ICC)} B), colr 'prof'",
           "HEIC (HEVC, heif-enc q90, 4:2:0)", decoded, to_srgb(decoded, open_profile(heif_icc(heic))))

    plain = heif_enc(TMP / "p3_untagged.png", TMP / "p3_plain.heic", "-q", "90")
    assert not any(k == b"colr" for k, _ in heif_properties(plain)), "heif-enc wrote a colr box for untagged input"
    heic = write(COLOUR / "heic_p3_nclx.heic", heif_add_property(plain, colr_nclx(12, 13, 6, True), essential=False)).read_bytes()
    decoded = heif_decode(heic).convert("RGB")
    assert np.array_equal(np.asarray(decoded), np.asarray(heif_decode(plain).convert("RGB")))
    nclx = next(p for k, p in heif_properties(heic) if k == b"colr")
    assert nclx[:4] == b"nclx" and struct.unpack(">HHH", nclx[4:10]) == (12, 13, 6)
    from_nclx = icc_matrix_trc("nclx 12/13 (P3 D65, sRGB transfer)", P3_PRIMARIES, D65_XY, tag_para_srgb())
    record("heic_p3_nclx", "nclx colr only: primaries 12 (P3 D65), transfer 13 (sRGB), matrix 6, full range",
           "HEIC (HEVC, heif-enc q90, 4:2:0; colr nclx added by the script)", decoded, to_srgb(decoded, open_profile(from_nclx)))

    plain = heif_enc(TMP / "srgb_untagged.png", TMP / "srgb_plain.heic", "-q", "90")
    heic = write(COLOUR / "heic_srgb_nclx.heic", heif_add_property(plain, colr_nclx(1, 13, 6, True), essential=False)).read_bytes()
    decoded = heif_decode(heic).convert("RGB")
    assert np.array_equal(np.asarray(decoded), np.asarray(heif_decode(plain).convert("RGB")))
    record("heic_srgb_nclx", "nclx colr only: primaries 1 (BT.709/sRGB), transfer 13 (sRGB), matrix 6, full range",
           "HEIC (HEVC, heif-enc q90, 4:2:0; colr nclx added by the script)", decoded, decoded)

    # -- sRGB: untagged, tagged with the real sRGB profile; broken profiles
    path = save(source, COLOUR / "jpeg_untagged.jpg", "JPEG", **jpeg)
    im = Image.open(path)
    im.load()
    assert "icc_profile" not in im.info
    record("jpeg_untagged", "none (sRGB assumed)", "JPEG q95 4:4:4", im, im.convert("RGB"))

    icc = (COLORD / "sRGB.icc").read_bytes()
    path = save(source, COLOUR / "jpeg_srgb_tagged.jpg", "JPEG", icc_profile=icc, **jpeg)
    im = Image.open(path)
    im.load()
    record("jpeg_srgb_tagged", f"sRGB (colord sRGB.icc, ICC v4), {len(icc)} B", "JPEG q95 4:4:4, APP2 ICC_PROFILE",
           im, to_srgb(im, open_profile(im.info["icc_profile"])))

    for name, icc, label in [
        ("jpeg_icc_truncated", prophoto[:4000],
         f"broken: the first 4000 B of ProPhotoRGB.icc (its header declares {len(prophoto)} B)"),
        ("jpeg_icc_garbage", garbage(3000, seed=2026),
         "broken: 3000 pseudo-random bytes (seed 2026) behind a valid ICC_PROFILE 1/1 APP2 header"),
    ]:
        path = save(source, COLOUR / f"{name}.jpg", "JPEG", icc_profile=icc, **jpeg)
        im = Image.open(path)
        im.load()
        assert im.info["icc_profile"] == icc and icc_app2_count(path.read_bytes()) == 1
        try:
            to_srgb(Image.new("RGB", (1, 1)), open_profile(icc))
            raise SystemExit(f"{name}: Little CMS used the broken profile")
        except (OSError, ImageCms.PyCMSError):
            pass
        record(name, label, "JPEG q95 4:4:4, APP2 ICC_PROFILE (sRGB pixels)", im, im.convert("RGB"))

    write_colour_readmes(rows, source)
    return rows


def gama_chrm_numeric(pixels: np.ndarray, file_gamma: float, primaries, white) -> np.ndarray:
    """Independent numeric reference: V^(1/file_gamma) -> XYZ (D65) -> linear sRGB -> sRGB curve."""
    linear = (pixels.astype(np.float64) / 255.0) ** (1 / file_gamma)
    to_xyz = rgb_to_xyz_matrix(primaries, white)
    to_srgb_linear = np.linalg.inv(rgb_to_xyz_matrix(SRGB_PRIMARIES, D65_XY))   # same white: no adaptation
    out = np.clip(linear @ (to_srgb_linear @ to_xyz).T, 0, 1)
    encoded = np.where(out <= 0.0031308, 12.92 * out, 1.055 * out ** (1 / 2.4) - 0.055)
    return np.round(encoded * 255).astype(np.int16)


def write_colour_readmes(rows: list[dict], source: Image.Image):
    lines = ["file\tprofile\tcontainer\texpected\tuntagged_mean_abs\tuntagged_max_abs\tsource_mean_abs\tsource_max_abs"]
    for r in rows:
        lines.append("\t".join([r["file"], r["profile"], r["container"], r["expected"],
                                f"{r['untagged'][0]:.2f}", str(r["untagged"][1]),
                                f"{r['source'][0]:.2f}", str(r["source"][1])]))
    (COLOUR / "README.tsv").write_text("\n".join(lines) + "\n")
    notes = "\n".join(f"- `{r['file']}`: {r['note']}" for r in rows if r["note"])
    (COLOUR / "README.md").write_text(COLOUR_README.format(w=source.width, h=source.height, n=len(rows), notes=notes))


COLOUR_README = """\
# Colour-profile fixtures

{n} tagged images made with Little CMS 2 (Pillow `ImageCms`; Little CMS called directly for the
16-bit PNG) from real ICC profiles, each with the colour-managed result it must decode to.
Generated by `python3 Tests/Fixtures/make_fixtures.py` (deterministic; do not edit by hand).

- `source.png`: the sRGB original, {w}×{h}, cropped from `corpus/images/astronaut.jpg`
  (NASA, public domain) and downscaled with Lanczos: saturated flag red and blue, orange suit,
  skin, neutrals.  Every tagged file was made from it.
- `NAME.<ext>`: the tagged file a decoder must read.
- `NAME.expected.png`: 8-bit sRGB RGB PNG, the reference decode of `NAME.<ext>`.
- `README.tsv`: one row a case: `file, profile, container, expected`, then
  `untagged_mean_abs, untagged_max_abs` — mean and max |Δ| (8-bit levels, over all R, G, B values)
  between the file decoded *ignoring* its profile and the expected image: how wrong an
  unmanaged decoder is — and `source_mean_abs, source_max_abs` — source.png vs expected: how
  lossy the round trip sRGB → profile → file → sRGB is (JPEG/HEVC loss, 8-bit quantisation in
  the wide space, gamut clipping for CMYK).

## How the tagged files were made

The pixels of source.png were converted sRGB → the profile with
`ImageCms.profileToProfile(..., renderingIntent=RELATIVE_COLORIMETRIC, flags=BLACKPOINTCOMPENSATION)`
and saved with the profile embedded:

- JPEG: Pillow, quality 95, 4:4:4 (`subsampling=0`), `icc_profile=` → APP2 `ICC_PROFILE` segments.
  Profiles: colord's ProPhotoRGB, AdobeRGB1998, WideGamutRGB, SwappedRedAndGreen (red and green
  primaries exchanged: decoded without the profile, red and green are swapped — the key test),
  sRGB (colord, v4), ghostscript's `default_cmyk.icc` (187 KB SWOP CMYK, Lab PCS) and
  `default_gray.icc` (sGray), and a gamma-1.8 gray profile written by the script.
- `jpeg_cmyk_swop.jpg`: a 4-component CMYK JPEG.  The 187,484-byte profile does not fit one
  marker segment (at most 65,519 profile bytes each), so it is split over 3 APP2 `ICC_PROFILE`
  segments numbered 1/3, 2/3, 3/3 — reassemble them in sequence order.
  **Convention: Adobe.** The file has an Adobe APP14 marker with transform 0 (no YCC), and
  libjpeg-turbo stores the samples **inverted** as Photoshop does (Pillow writes `CMYK;I`):
  stored 255 = no ink, 0 = full ink.  Invert the decoded samples (ink = 255 − stored) before
  giving them to Little CMS as `TYPE_CMYK_8`, or use `TYPE_CMYK_8_REV` on the raw samples.
  The `untagged` columns use Pillow's naive CMYK → RGB formula (R = (255 − C)(255 − K)/255 …).
- `jpeg_gray_*.jpg`: 1-component JPEGs (quality 95).  `jpeg_gray_sgray` carries sGray (sRGB curve, so
  ignoring the profile costs almost nothing); `jpeg_gray_gamma18` carries a gamma-1.8 gray
  profile (written by the script: ICC v4.3, `kTRC` parametric curve γ = 1.8, D50 white).
  The expected images are RGB (R = G = B within Little CMS rounding).
- `png8_prophoto.png`: Pillow, 8-bit RGB with an `iCCP` chunk (ProPhoto).
- `png16_prophoto.png`: 16-bit RGB (IHDR bit depth 16, colour type 2) with `iCCP` (ProPhoto).
  Pillow holds 16-bit RGB only as 8 bits, and ProPhoto quantised to 8 bits is off by several sRGB
  levels near black, so this case calls Little CMS itself (the liblcms2 bundled with Pillow, through
  ctypes) on doubles with the same intent and BPC (`TYPE_RGB_DBL`, `cmsFLAGS_NOOPTIMIZE`): source.png →
  ProPhoto, rounded to 16 bits, written by the script's own PNG writer (IHDR, iCCP, IDAT, IEND).
  Its expected image: the file decoded by vips at 16 bits, embedded profile → sRGB by the same direct
  call, rounded to 8 bits.  A decoder that drops to 8 bits before colour management is off by up to
  3 levels (see the note below); the `untagged` columns use the samples rounded to 8 bits.
- `png_srgb_chunk.png`: only an `sRGB` chunk (intent 0) and no iCCP/gAMA/cHRM: the pixels are sRGB;
  expected = the pixels.
- `png_gama_chrm.png`: `gAMA` 55556 (file gamma 0.55556, i.e. decode exponent 1.8) and `cHRM` with
  the Adobe RGB (1998) primaries (R 0.64,0.33  G 0.21,0.71  B 0.15,0.06) and D65 white
  (0.3127,0.3290), no iCCP, no sRGB chunk.  `ImageCms.createProfile` cannot make profiles from
  primaries, so the script writes an equivalent ICC v4.3 matrix/TRC profile (parametric curve
  γ = 1/0.55556, colorants = the primaries' RGB→XYZ matrix Bradford-adapted D65 → D50, `chad` tag)
  and converts with ImageCms; the pixels of the file were made with the same profile.  The
  expected image is computed from the chunks read back from the file.  Cross-check: a plain numpy
  computation (V^1.8 → XYZ D65 with the cHRM matrix → linear sRGB → sRGB curve, no adaptation
  needed since both whites are D65) agrees within the numbers given below.
- `webp_lossless_prophoto.webp`: Pillow, lossless (`exact=True`), `icc_profile=` → RIFF
  `VP8X` + `ICCP` + `VP8L`; only the colour differs from the pixels given.
- `heic_p3_icc.heic`: the pixels in Display P3, written to a PNG with the P3 profile in `iCCP`;
  `heif-enc -q 90` (libheif 1.15.1, x265) embeds it as a `colr` box of type `prof` (checked).
  The Display P3 profile is written by the script (no P3 profile on the machine): ICC v4.3,
  P3 primaries (0.680,0.320 / 0.265,0.690 / 0.150,0.060), D65 white, the sRGB parametric curve.
- `heic_p3_nclx.heic`, `heic_srgb_nclx.heic`: **heif-enc 1.15 writes no `colr` box at all for
  untagged input**, and ignores `--colour_primaries`/`--transfer_characteristic`/`--matrix_coefficients`
  for PNG input (the files are byte-identical with and without them).  So the script encodes the
  untagged PNG and inserts a `colr` box of type `nclx` itself (appended to `ipco`, associated
  non-essential with item 1 in `ipma`, `iloc` offsets shifted): P3 = primaries 12, transfer 13,
  matrix 6, full range (the same P3 pixels as heic_p3_icc); sRGB = primaries 1, transfer 13,
  matrix 6, full range.  libheif decodes the patched and unpatched files to identical pixels
  (checked).  HEIC expected images: the file decoded by libheif (`heif-convert`, no colour
  management), then ImageCms with the profile read from the `colr prof` box, or with the P3
  profile built from the nclx values; the sRGB nclx file's expected image is its decoded pixels.
- `jpeg_untagged.jpg`, `jpeg_srgb_tagged.jpg`: the same JPEG with and without colord's `sRGB.icc`;
  both must decode to (nearly) the same pixels (expected of the untagged one = its pixels).
- `jpeg_icc_truncated.jpg`, `jpeg_icc_garbage.jpg`: a valid `ICC_PROFILE` APP2 header (sequence 1
  of 1) followed by a profile Little CMS cannot open (checked): the first 4000 bytes of the
  19,688-byte ProPhoto profile, and 3000 pseudo-random bytes.  The pixels are sRGB.  Expected:
  decode as sRGB, ignoring the profile (expected = the pixels as decoded); warning optional.

## References

`NAME.expected.png` is computed from the tagged file itself, not from source.png: the file
is decoded with Pillow (libjpeg-turbo, libpng, libwebp; libheif's `heif-convert` for HEIC), its
embedded profile is read back from the file, and

```python
ImageCms.profileToProfile(im, embedded, ImageCms.createProfile("sRGB"),
    renderingIntent=ImageCms.Intent.RELATIVE_COLORIMETRIC,
    outputMode="RGB", flags=ImageCms.Flags.BLACKPOINTCOMPENSATION)
```

(the 16-bit PNG: the same conversion by Little CMS called directly, at full precision).
The destination is Little CMS's built-in sRGB (v4, parametric sRGB curve, D65 → D50 Bradford).
Expect a few levels of difference from another CMM or from 16-bit/float pipelines; compare with
a tolerance (a mean |Δ| below ~1 and a max of a few levels).  Case notes:

{notes}

Checks the script makes: the hand-written ICC writer reproduces Little CMS's built-in sRGB within
1 level; every embedded profile reads back byte-identical from the written file; the CMYK file
has ≥ 3 ICC APP2 segments, an Adobe APP14 (transform 0) and inverted samples; the broken profiles
are refused by Little CMS; the 16-bit PNG's IHDR says depth 16, colour type 2, followed by iCCP.
"""


# --------------------------------------------------------------------------- 2. metadata

GPS_LAT = ((48, 1), (51, 1), (741, 25))            # 48° 51' 29.64" N
GPS_LON = ((2, 1), (17, 1), (201, 5))              # 2° 17' 40.20" E
GPS_ALT = (35, 1)
MAKE, MODEL = "ExampleCam", "EC-1 Leakproof"
SERIAL = "SN-SECRET-0042"
MAKERNOTE = b"MAKERNOTE-MARKER-8X4\x00\x01\x02\x03\xde\xad\xbe\xef"
ARTIST = "Jane Example"
COPYRIGHT = "© 2026 Example Shop"
COMMENT = "com-marker-3Z8 internal shot 2026-01-15, customer #4711"
XMP_NS = "http://ns.adobe.com/xap/1.0/"
XMP_MARKER = "xmp-marker-7Q2"
IPTC_MARKER = "iptc-marker-5K9"
PNG_COMMENT = "png-comment-marker-4T1 internal shot 2026-01-15, customer #4711"

XMP = f"""<?xpacket begin="\ufeff" id="W5M0MpCehiHzreSzNTczkc9d"?>
<x:xmpmeta xmlns:x="adobe:ns:meta/">
 <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
  <rdf:Description rdf:about=""
    xmlns:dc="http://purl.org/dc/elements/1.1/"
    xmlns:xmp="{XMP_NS}"
    xmlns:exif="http://ns.adobe.com/exif/1.0/"
    xmp:CreatorTool="{MAKE} {MODEL} firmware 1.0"
    xmp:Label="{XMP_MARKER}"
    exif:GPSLatitude="48,51.494N"
    exif:GPSLongitude="2,17.670E">
   <dc:creator><rdf:Seq><rdf:li>{ARTIST}</rdf:li></rdf:Seq></dc:creator>
   <dc:rights><rdf:Alt><rdf:li xml:lang="x-default">{COPYRIGHT}</rdf:li></rdf:Alt></dc:rights>
   <dc:description><rdf:Alt><rdf:li xml:lang="x-default">{XMP_MARKER} private description</rdf:li></rdf:Alt></dc:description>
  </rdf:Description>
 </rdf:RDF>
</x:xmpmeta>
<?xpacket end="w"?>"""


def make_exif() -> Image.Exif:
    exif = Image.Exif()
    exif[0x010F] = MAKE                                  # Make
    exif[0x0110] = MODEL                                 # Model
    exif[0x0112] = 6                                     # Orientation: rotate 90 CW to display
    exif[0x0131] = "vsearch make_fixtures.py"            # Software
    exif[0x0132] = "2026:01:15 10:30:00"                 # DateTime
    exif[0x013B] = ARTIST                                # Artist
    exif[0x8298] = COPYRIGHT.encode("utf-8")             # Copyright (UTF-8 bytes in an ASCII-type tag)
    sub = exif.get_ifd(0x8769)                           # Exif IFD
    sub[0x9003] = "2026:01:15 10:30:00"                  # DateTimeOriginal
    sub[0x927C] = MAKERNOTE                              # MakerNote (UNDEFINED)
    sub[0xA431] = SERIAL                                 # BodySerialNumber
    gps = exif.get_ifd(0x8825)                           # GPS IFD
    gps[0x0000] = b"\x02\x03\x00\x00"                   # GPSVersionID 2.3.0.0 (BYTE[4])
    gps[0x0001] = "N"
    gps[0x0002] = tuple(IFDRational(*r) for r in GPS_LAT)
    gps[0x0003] = "E"
    gps[0x0004] = tuple(IFDRational(*r) for r in GPS_LON)
    gps[0x0005] = 0                                     # GPSAltitudeRef: above sea level
    gps[0x0006] = IFDRational(*GPS_ALT)
    return exif


def iptc_app13() -> bytes:
    def dataset(record: int, number: int, value: bytes) -> bytes:
        return bytes([0x1C, record, number]) + struct.pack(">H", len(value)) + value
    iim = (dataset(1, 90, b"\x1b%G")                     # coded character set: UTF-8
           + dataset(2, 0, b"\x00\x04")                  # record version 4
           + dataset(2, 5, b"iptc-title " + IPTC_MARKER.encode())
           + dataset(2, 80, ARTIST.encode())             # By-line
           + dataset(2, 116, COPYRIGHT.encode())         # Copyright Notice
           + dataset(2, 120, f"{IPTC_MARKER} private caption".encode()))   # Caption-Abstract
    iim += b"\0" * (len(iim) % 2)
    resource = b"8BIM" + struct.pack(">H", 0x0404) + b"\0\0" + struct.pack(">I", len(iim)) + iim
    return jpeg_segment(0xED, b"Photoshop 3.0\0" + resource)


def make_metadata() -> dict:
    shutil.rmtree(METADATA, ignore_errors=True)
    METADATA.mkdir(parents=True)
    im = photo("chelsea_cat", 160)
    exif = make_exif()
    exif_bytes = exif.tobytes()

    # JPEG: Exif APP1 (Pillow), then XMP APP1, IPTC APP13, COM inserted after the APPn run
    base = io.BytesIO()
    im.save(base, "JPEG", quality=85, exif=exif_bytes)
    data = jpeg_insert_after_app(base.getvalue(), [
        jpeg_segment(0xE1, XMP_NS.encode() + b"\0" + XMP.encode("utf-8")),
        iptc_app13(),
        jpeg_segment(0xFE, COMMENT.encode("utf-8")),
    ])
    jpg = write(METADATA / "exif_gps_xmp.jpg", data)
    markers = [m for _, m, _ in jpeg_segments(data)]
    assert markers[:5] == [0xE0, 0xE1, 0xE1, 0xED, 0xFE], [hex(m) for m in markers]
    check = Image.open(jpg).getexif()
    assert check[0x0112] == 6 and check[0x013B] == ARTIST and check.get_ifd(0x8825)[2] == (48.0, 51.0, 29.64)
    assert check.get_ifd(0x8769)[0x927C] == MAKERNOTE

    # PNG: eXIf, iTXt XML:com.adobe.xmp, tEXt Author / Copyright / Comment
    info = PngImagePlugin.PngInfo()
    info.add_itxt("XML:com.adobe.xmp", XMP, zip=False)
    info.add_text("Author", ARTIST)
    info.add_text("Copyright", COPYRIGHT)
    info.add_text("Comment", PNG_COMMENT)
    png = save_png(im, METADATA / "exif_gps_xmp.png", exif=exif_bytes, pnginfo=info)
    kinds = [k for k, _ in png_chunks(png.read_bytes())]
    assert kinds.count(b"tEXt") == 3 and b"iTXt" in kinds and b"eXIf" in kinds, kinds
    check = Image.open(png)
    check.load()
    assert check.getexif().get_ifd(0x8825)[4] == (2.0, 17.0, 40.2)

    # WebP: EXIF and XMP chunks (Pillow writes VP8X + VP8 + EXIF + XMP )
    webp = save(im, METADATA / "exif_gps.webp", "WEBP", quality=80, method=6, exif=exif_bytes, xmp=XMP.encode("utf-8"))
    riff = webp.read_bytes()
    chunks = [c[0] for c in boxes_riff(riff)]
    assert b"EXIF" in chunks and b"XMP " in chunks, chunks
    print(f"metadata: exif_gps_xmp.jpg {jpg.stat().st_size} B, exif_gps_xmp.png {png.stat().st_size} B, "
          f"exif_gps.webp {webp.stat().st_size} B (chunks {[c.decode() for c in chunks]})")
    (METADATA / "README.md").write_text(METADATA_README.format(
        w=im.width, h=im.height, jpg=jpg.stat().st_size, png=png.stat().st_size, webp=webp.stat().st_size,
        exif_len=len(exif_bytes) - 6, xmp_len=len(XMP.encode()), webp_chunks=" + ".join(c.decode().strip() for c in chunks)))
    return {}


def boxes_riff(data: bytes) -> list[tuple[bytes, bytes]]:
    assert data[:4] == b"RIFF" and data[8:12] == b"WEBP"
    out, pos = [], 12
    while pos + 8 <= len(data):
        kind, n = data[pos:pos + 4], struct.unpack("<I", data[pos + 4:pos + 8])[0]
        out.append((kind, data[pos + 8:pos + 8 + n]))
        pos += 8 + n + (n & 1)
    return out


METADATA_README = """\
# Metadata that must never leak

Three small photos ({w}×{h}, from `corpus/images/chelsea_cat.jpg`, CC0) carrying private
metadata.  Generated by `python3 Tests/Fixtures/make_fixtures.py`.  Outputs made from them
(thumbnails, prepared uploads, stored copies) must contain **none** of the values below; with
`--keep-metadata copyright` they must keep exactly Artist and Copyright and nothing else.

## The same EXIF in all three files ({exif_len} bytes of TIFF, little-endian `II`, made with Pillow `Image.Exif()`)

| IFD | tag | value |
|---|---|---|
| IFD0 | 0x010F Make | `ExampleCam` |
| IFD0 | 0x0110 Model | `EC-1 Leakproof` |
| IFD0 | 0x0112 Orientation | `6` (stored image must be turned 90° clockwise to display) |
| IFD0 | 0x0131 Software | `vsearch make_fixtures.py` |
| IFD0 | 0x0132 DateTime | `2026:01:15 10:30:00` |
| IFD0 | 0x013B Artist | `Jane Example` |
| IFD0 | 0x8298 Copyright | `© 2026 Example Shop` (UTF-8 bytes `c2 a9 …` in an ASCII-type tag, NUL-terminated) |
| Exif (0x8769) | 0x9003 DateTimeOriginal | `2026:01:15 10:30:00` |
| Exif | 0x927C MakerNote | 28 bytes: `MAKERNOTE-MARKER-8X4` `00 01 02 03 de ad be ef` |
| Exif | 0xA431 BodySerialNumber | `SN-SECRET-0042` |
| GPS (0x8825) | 0x0000 GPSVersionID | `02 03 00 00` |
| GPS | 0x0001/0x0002 GPSLatitudeRef/GPSLatitude | `N`, 48/1 51/1 741/25 (48° 51′ 29.64″ N) |
| GPS | 0x0003/0x0004 GPSLongitudeRef/GPSLongitude | `E`, 2/1 17/1 201/5 (2° 17′ 40.20″ E) |
| GPS | 0x0005/0x0006 GPSAltitudeRef/GPSAltitude | `00`, 35/1 (35 m) |

## The same XMP packet in all three files ({xmp_len} bytes, UTF-8)

Namespace `http://ns.adobe.com/xap/1.0/` (also the JPEG APP1 identifier); `xmp:CreatorTool`
`ExampleCam EC-1 Leakproof firmware 1.0`; `xmp:Label` `xmp-marker-7Q2`; `exif:GPSLatitude`
`48,51.494N`; `exif:GPSLongitude` `2,17.670E`; `dc:creator` `Jane Example`; `dc:rights`
`© 2026 Example Shop`; `dc:description` `xmp-marker-7Q2 private description`.

## Per file

- `exif_gps_xmp.jpg` ({jpg} B): segments in order SOI, APP0 JFIF, APP1 `Exif\\0\\0` (the EXIF above,
  written by Pillow), APP1 `http://ns.adobe.com/xap/1.0/\\0` (the XMP), APP13 `Photoshop 3.0\\0`
  with one `8BIM` 0x0404 IPTC-IIM resource — 1:90 `ESC % G` (UTF-8), 2:00 version 4,
  2:05 Object Name `iptc-title iptc-marker-5K9`, 2:80 By-line `Jane Example`,
  2:116 Copyright Notice `© 2026 Example Shop`, 2:120 Caption `iptc-marker-5K9 private caption` —
  then COM `com-marker-3Z8 internal shot 2026-01-15, customer #4711`, then the image segments.
- `exif_gps_xmp.png` ({png} B): `eXIf` (the EXIF above), `iTXt` keyword `XML:com.adobe.xmp`
  (uncompressed, the XMP), `tEXt` `Author` = `Jane Example`, `tEXt` `Copyright` =
  `© 2026 Example Shop` (Latin-1 `a9`), `tEXt` `Comment` =
  `png-comment-marker-4T1 internal shot 2026-01-15, customer #4711`; all before IDAT.
- `exif_gps.webp` ({webp} B, lossy): RIFF chunks {webp_chunks}; `EXIF` holds the TIFF data
  above (no `Exif\\0\\0` prefix), `XMP ` the XMP packet.

## What a test checks

Outputs must contain none of: `48/1 51/1 741/25`, `2/1 17/1 201/5` (as a GPS IFD, or
the strings `48,51.494N`/`2,17.670E`), `ExampleCam`, `EC-1 Leakproof`, `SN-SECRET-0042`,
`MAKERNOTE-MARKER-8X4`, `http://ns.adobe.com/xap/1.0/`, `xmp-marker-7Q2`, `iptc-marker-5K9`,
`com-marker-3Z8`, `png-comment-marker-4T1`.  With `--keep-metadata copyright`: Artist
`Jane Example` and Copyright `© 2026 Example Shop` (as EXIF 0x013B/0x8298) and nothing else of
the list.  The orientation (6) is applied to the pixels, not copied.
"""


# --------------------------------------------------------------------------- 3. badinput/formats

def make_formats() -> list[list[str]]:
    shutil.rmtree(FORMATS, ignore_errors=True)
    FORMATS.mkdir(parents=True)
    rows: list[list[str]] = []
    coffee = photo("coffee_cup", FORMATS_LONG_SIDE)              # 240x160
    chelsea = photo("chelsea_cat", FORMATS_LONG_SIDE)
    small = [photo(n, 160) for n in ("coffee_cup", "chelsea_cat", "falcon9_rocket")]
    w, h = coffee.size
    mask = Image.new("L", coffee.size, 0)
    ImageDraw.Draw(mask).ellipse((12, 8, w - 12, h - 8), fill=255)
    soft = mask.resize((w // 8, h // 8), Image.BILINEAR).resize(coffee.size, Image.BILINEAR)
    rgba = coffee.copy()
    rgba.putalpha(soft)
    COFFEE, CHELSEA, FALCON = "coffee_cup (CC0)", "chelsea_cat (CC0)", "falcon9_rocket (PD)"
    GEN = "made by Tests/Fixtures/make_fixtures.py"

    def add(name: str, data: bytes, special: str, expected: str, source: str):
        assert len(data) < FORMAT_FILE_LIMIT, (name, len(data))
        write(FORMATS / name, data)
        origin = GEN if source == "made" else f"{source}; {GEN}"
        rows.append([f"formats/{name}", str(len(data)), special, expected, origin])

    TRUNC_HEADER = "reject with a clear error (header incomplete)"
    TRUNC_DATA = ("reject with a clear error (image data incomplete; a lenient decoder may return a partial image "
                  "but must report it; never crash/hang)")

    # ---- WebP
    lossy = encode(coffee, "WEBP", quality=80, method=6)
    add("webp_lossy.webp", lossy, f"WebP lossy (simple format: RIFF + VP8), {w}x{h}, quality 80", "decode correctly", COFFEE)
    add("webp_lossless.webp", encode(chelsea, "WEBP", lossless=True, quality=100, method=6),
        f"WebP lossless (RIFF + VP8L), {w}x{h}", "decode correctly", CHELSEA)
    add("webp_lossy_alpha.webp", encode(rgba, "WEBP", quality=80, method=6),
        f"WebP lossy with alpha (VP8X + ALPH + VP8), {w}x{h}, soft elliptical alpha",
        "decode correctly (alpha handled, e.g. composited on white)", COFFEE)
    frames = small
    anim = io.BytesIO()
    frames[0].save(anim, "WEBP", save_all=True, append_images=frames[1:], duration=500, loop=0, quality=70, method=6)
    add("webp_animated.webp", anim.getvalue(),
        f"animated WebP (VP8X + ANIM + 3 ANMF), {frames[0].width}x{frames[0].height}, frames coffee/chelsea/falcon9",
        "decode correctly (the first frame: coffee_cup)", f"{COFFEE}, {CHELSEA}, {FALCON}")
    prophoto = (COLORD / "ProPhotoRGB.icc").read_bytes()
    tagged = from_srgb(coffee, open_profile(prophoto), "RGB")
    add("webp_icc_prophoto.webp", encode(tagged, "WEBP", quality=80, method=6, icc_profile=prophoto),
        "WebP lossy (VP8X + ICCP + VP8) tagged ProPhoto RGB (colord ProPhotoRGB.icc, pixels converted with Little CMS)",
        "decode correctly (convert from the embedded ICC profile to sRGB)", COFFEE)
    add("webp_trunc_50pct.webp", truncated(lossy, len(lossy) // 2),
        f"webp_lossy.webp ({len(lossy)} bytes) cut after {len(lossy) // 2} bytes (RIFF size says {len(lossy) - 8})",
        TRUNC_DATA, COFFEE)
    add("webp_trunc_20B.webp", truncated(lossy, 20),
        "webp_lossy.webp cut after 20 bytes: RIFF header and the VP8 chunk header, no frame data", TRUNC_HEADER, COFFEE)
    add("webp_bomb_vp8_16383x16383.webp", webp_vp8_bomb(),
        "simple lossy WebP (RIFF + VP8) of a 16x16 image whose VP8 frame header was patched to declare 16383x16383 "
        "(268 Mpixel, 1 GB as RGBA); the partition sizes stay consistent so header parsers accept it",
        "reject with a clear error (pixel limit) before allocating; must not hang", "made (16x16 grey)")
    add("webp_bomb_vp8x_16383x16383.webp", webp_vp8x_bomb(),
        "VP8X canvas 16383x16383 and a VP8L header declaring the same 16383x16383, then 16 bytes of data "
        "(libwebp's header parsing accepts it)",
        "reject with a clear error (pixel limit) before allocating; must not hang", "hand-written bytes")
    small_riff = bytearray(lossy)
    small_riff[4:8] = struct.pack("<I", 100)
    add("webp_riff_size_too_small.webp", bytes(small_riff),
        f"webp_lossy.webp with the RIFF size patched to 100 (the VP8 chunk inside is {len(lossy) - 20} bytes)",
        "reject with a clear error (corrupt: the RIFF size is smaller than the chunk it contains; libwebp: bitstream error)",
        COFFEE)
    large_riff = bytearray(lossy)
    large_riff[4:8] = struct.pack("<I", len(lossy) - 8 + 1000)
    add("webp_riff_size_too_large.webp", bytes(large_riff),
        "webp_lossy.webp with the RIFF size patched to declare 1000 bytes more than the file holds; the image data are complete",
        "decode correctly or reject (libwebp reports not-enough-data as for a truncated file; a lenient decoder can decode it)",
        COFFEE)
    add("webp_riff_garbage.webp", b"RIFF" + struct.pack("<I", 2000 + 4) + b"WEBP" + garbage(2000, seed=13),
        "'RIFF' + size + 'WEBP' followed by 2000 pseudo-random bytes (seed 13)", "reject with a clear error", "made")

    # ---- HEIC (heif-enc, libheif 1.15.1, x265)
    save_png(coffee, TMP / "coffee.png")
    heic = heif_enc(TMP / "coffee.png", TMP / "coffee.heic", "-q", "70")
    add("heic_photo.heic", heic, f"HEIC (HEVC Main still picture, 4:2:0, heif-enc -q 70), {w}x{h}, no colr box",
        "decode correctly", COFFEE)
    rotated_src = coffee.transpose(Image.Transpose.ROTATE_90)               # stored 160x240, turned left
    save_png(rotated_src, TMP / "rot.png")
    rot = heif_add_property(heif_enc(TMP / "rot.png", TMP / "rot.heic", "-q", "70"), box(b"irot", b"\x03"), essential=True)
    decoded = heif_decode(rot)
    assert decoded.size == (w, h), decoded.size                                 # libheif applies irot
    add("heic_irot_270ccw.heic", rot,
        f"HEIC stored {h}x{w} with an 'irot' property, angle 3 (270 deg anticlockwise = 90 deg clockwise, essential) "
        f"added by the script; displayed {w}x{h} upright",
        f"decode correctly and apply irot (result {w}x{h}, upright as webp_lossy.webp)", COFFEE)
    exif = Image.Exif()
    exif[0x0112] = 6
    save(coffee, TMP / "o6.jpg", "JPEG", quality=95, exif=exif.tobytes())
    o6 = heif_enc(TMP / "o6.jpg", TMP / "o6.heic", "-q", "70")
    assert heif_decode(o6).size == (w, h) and not any(k == b"irot" for k, _ in heif_properties(o6))
    add("heic_exif_orientation6_no_irot.heic", o6,
        f"what heif-enc 1.15 makes of a JPEG with EXIF Orientation=6: pixels stored as they are ({w}x{h}), "
        "the EXIF (Orientation=6) copied into an Exif item, no irot",
        f"decode correctly ({w}x{h} as stored: MIAF 7.3.10.1 says Exif orientation shall be ignored in HEIF, "
        "libheif ignores it; rotating by EXIF shows it sideways)", COFFEE)
    save_png(rgba, TMP / "alpha.png")
    heic_alpha = heif_enc(TMP / "alpha.png", TMP / "alpha.heic", "-q", "70")
    assert heif_decode(heic_alpha).mode == "RGBA"
    add("heic_alpha.heic", heic_alpha, f"HEIC with an alpha auxiliary image (soft elliptical alpha), {w}x{h}",
        "decode correctly (alpha handled, e.g. composited on white)", COFFEE)
    add("heic_trunc_50pct.heic", truncated(heic, len(heic) // 2),
        f"heic_photo.heic ({len(heic)} bytes) cut after {len(heic) // 2} bytes: the meta box is whole, "
        "the mdat the iloc points to is cut", TRUNC_DATA, COFFEE)
    add("heic_trunc_100B.heic", truncated(heic, 100), "heic_photo.heic cut after 100 bytes (inside the meta box)",
        TRUNC_HEADER, COFFEE)
    ftyp = box(b"ftyp", b"heic" + b"\0\0\0\0" + b"mif1heic")
    add("heic_ftyp_garbage.heic", ftyp + garbage(2000, seed=14),
        "a valid 'ftyp' box (major brand heic, compatible mif1, heic) followed by 2000 pseudo-random bytes (seed 14)",
        "reject with a clear error", "made")

    # ---- AVIF (Pillow: libavif 1.4 + aom, single-threaded)
    avif = encode(coffee, "AVIF", quality=60, speed=6, max_threads=1)
    add("avif_photo.avif", avif, f"AVIF (AV1, 4:2:0, Pillow/libavif quality 60), {w}x{h}, colr nclx", "decode correctly", COFFEE)
    add("avif_alpha.avif", encode(rgba, "AVIF", quality=60, speed=6, max_threads=1),
        f"AVIF with an alpha auxiliary image (soft elliptical alpha), {w}x{h}",
        "decode correctly (alpha handled, e.g. composited on white)", COFFEE)
    add("avif_trunc_50pct.avif", truncated(avif, len(avif) // 2),
        f"avif_photo.avif ({len(avif)} bytes) cut after {len(avif) // 2} bytes (the AV1 data are cut)", TRUNC_DATA, COFFEE)
    add("avif_trunc_100B.avif", truncated(avif, 100), "avif_photo.avif cut after 100 bytes (inside the meta box)",
        TRUNC_HEADER, COFFEE)

    # ---- GIF (Pillow)
    def palette(im: Image.Image, colours: int = 256) -> Image.Image:
        return im.quantize(colours, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.FLOYDSTEINBERG)

    gif = encode(palette(chelsea), "GIF", interlace=False, optimize=False)
    add("gif_photo.gif", gif, f"GIF89a palette photo, 256 colours (median cut, Floyd-Steinberg), {w}x{h}, not interlaced",
        "decode correctly", CHELSEA)
    interlaced = encode(palette(coffee), "GIF", interlace=True, optimize=False)
    assert gif_descriptor(interlaced)[4] & 0x40
    assert not gif_descriptor(gif)[4] & 0x40
    add("gif_interlaced.gif", interlaced, f"interlaced GIF (image descriptor flag 0x40), 256 colours, {w}x{h}",
        "decode correctly", COFFEE)
    p = palette(coffee, 255)
    colours = p.getpalette()[:255 * 3]
    p.putpalette(colours + [0] * (255 * 3 - len(colours)) + [255, 255, 255])
    p.paste(255, mask=Image.eval(mask, lambda v: 255 - v))
    transparent = encode(p, "GIF", transparency=255, interlace=False, optimize=False)
    add("gif_transparent.gif", transparent,
        f"GIF with a transparent colour index (graphic control extension; outside an ellipse is transparent), {w}x{h}",
        "decode correctly (alpha handled, e.g. composited on white)", COFFEE)
    anim = io.BytesIO()
    pal = [palette(f) for f in small]
    pal[0].save(anim, "GIF", save_all=True, append_images=pal[1:], duration=500, loop=0, interlace=False, optimize=False)
    add("gif_animated.gif", anim.getvalue(),
        f"animated GIF (NETSCAPE2.0 loop, 3 frames of {small[0].width}x{small[0].height}, local palettes): coffee/chelsea/falcon9",
        "decode correctly (the first frame: coffee_cup)", f"{COFFEE}, {CHELSEA}, {FALCON}")
    tiny = encode(palette(photo("coffee_cup", 16)), "GIF", interlace=False, optimize=False)
    bomb = bytearray(tiny)
    bomb[6:10] = struct.pack("<HH", 65535, 65535)
    add("gif_screen_65535x65535.gif", bytes(bomb),
        "GIF whose logical screen declares 65535x65535 (4.3 Gpixel, 17 GB as RGBA) with one 16x10 frame at 0,0",
        "reject with a clear error (pixel limit: the logical screen is the canvas, 65535 exceeds the side limit) "
        "before allocating; must not hang", COFFEE)
    add("gif_trunc_50pct.gif", truncated(gif, len(gif) // 2),
        f"gif_photo.gif ({len(gif)} bytes) cut after {len(gif) // 2} bytes (inside the LZW data)", TRUNC_DATA, CHELSEA)
    add("gif_trunc_10B.gif", truncated(gif, 10), "gif_photo.gif cut after 10 bytes (inside the logical screen descriptor)",
        TRUNC_HEADER, CHELSEA)
    add("gif_magic_garbage.gif", b"GIF89a" + garbage(2000, seed=15),
        "'GIF89a' followed by 2000 pseudo-random bytes (seed 15)", "reject with a clear error", "made")
    outside = bytearray(encode(palette(small[1]), "GIF", interlace=False, optimize=False))
    sw, sh = small[1].size
    pos = gif_descriptor(bytes(outside))[0]
    outside[pos + 1:pos + 5] = struct.pack("<HH", sw // 2, sh // 2)
    add("gif_frame_outside_screen.gif", bytes(outside),
        f"GIF whose logical screen is {sw}x{sh} and whose only frame ({sw}x{sh}) is placed at {sw // 2},{sh // 2}: "
        "three quarters of it lie outside the screen",
        f"decode correctly (either the {sw}x{sh} screen with the frame clipped, the rest background/transparent, "
        "or the canvas grown to hold the frame as some browsers do; never read or write outside the buffers)", CHELSEA)

    for row in rows:
        print(f"  {row[0]:44s} {int(row[1]):6d}  {row[3][:60]}")
    return rows


def encode(im: Image.Image, fmt: str, **params) -> bytes:
    buffer = io.BytesIO()
    im.save(buffer, fmt, **params)
    return buffer.getvalue()


def gif_descriptor(data: bytes) -> tuple[int, int, int, int, int]:
    """(offset of the first image descriptor 0x2C, left, top, ...) -> (offset, width, height, left, flags)."""
    pos = 13
    if data[10] & 0x80:
        pos += 3 * 2 ** ((data[10] & 7) + 1)
    while data[pos] != 0x2C:
        assert data[pos] == 0x21, hex(data[pos])
        pos += 2
        while data[pos]:
            pos += data[pos] + 1
        pos += 1
    left, top, width, height, flags = struct.unpack("<HHHHB", data[pos + 1:pos + 10])
    return pos, width, height, left, flags


def webp_vp8_bomb() -> bytes:
    data = bytearray(encode(Image.new("RGB", (16, 16), (128, 128, 128)), "WEBP", quality=50))
    assert data[12:16] == b"VP8 ", bytes(data[12:16])
    start = 20 + 3                                   # after the 3-byte frame tag
    assert data[start:start + 3] == b"\x9d\x01\x2a"
    data[start + 3:start + 7] = struct.pack("<HH", 16383, 16383)    # 14-bit size, scale 0
    return bytes(data)


def webp_vp8x_bomb() -> bytes:
    w = h = 16383
    vp8x = b"VP8X" + struct.pack("<I", 10) + b"\0\0\0\0" + (w - 1).to_bytes(3, "little") + (h - 1).to_bytes(3, "little")
    bits = (w - 1) | ((h - 1) << 14)                 # VP8L: 14-bit width-1, 14-bit height-1, alpha 0, version 0
    vp8l_payload = b"\x2f" + struct.pack("<I", bits) + bytes(16)
    vp8l = b"VP8L" + struct.pack("<I", len(vp8l_payload)) + vp8l_payload + b"\0" * (len(vp8l_payload) & 1)
    body = b"WEBP" + vp8x + vp8l
    return b"RIFF" + struct.pack("<I", len(body)) + body


def update_badinput_table(rows: list[list[str]]):
    tsv = BADINPUT / "README.tsv"
    lines = tsv.read_text().rstrip("\n").split("\n")
    kept = [line for line in lines if not line.startswith("formats/")]
    tsv.write_text("\n".join(kept + ["\t".join(r) for r in rows]) + "\n")
    readme = BADINPUT / "README.md"
    text = readme.read_text()
    marker = "\n- `formats/`"
    if marker in text:
        text = text[:text.index(marker)]
    counts = {k: sum(1 for r in rows if r[0].split("/")[1].startswith(k)) for k in ("webp", "heic", "avif", "gif")}
    text = text.rstrip("\n") + "\n" + BADINPUT_PARAGRAPH.format(n=len(rows), total=len(kept) - 1 + len(rows), **counts)
    readme.write_text(text)


BADINPUT_PARAGRAPH = """\
- `formats/`: {n} files added for issue 13 (WebP, HEIC, AVIF and GIF input), valid and damaged, each under 60 KB:
  WebP ({webp}: lossy, lossless, alpha, animated, ICC-tagged, truncated, 16383×16383 header bombs, wrong RIFF sizes, garbage),
  HEIC ({heic}: photo, `irot` rotation, EXIF orientation without `irot`, alpha, truncated, `ftyp` + garbage),
  AVIF ({avif}: photo, alpha, truncated) and GIF ({gif}: palette photo, interlaced, transparent, animated, 65535×65535 screen,
  truncated, `GIF89a` + garbage, a frame partly outside the screen).  Made from corpus photos (coffee_cup, chelsea_cat CC0;
  falcon9_rocket PD) by `python3 Tests/Fixtures/make_fixtures.py` — Pillow (libwebp, libavif/aom), heif-enc 1.15.1 (x265),
  and byte patches written in the script (VP8/VP8L/VP8X sizes, RIFF size, GIF screen and frame position, HEIF `irot`).
  Re-running the script rewrites these files and these rows only; with them README.tsv lists {total} files.
"""


# --------------------------------------------------------------------------- main

def main():
    started = time.monotonic()
    for tool in ("heif-enc", "heif-convert", "vips"):
        if not shutil.which(tool):
            raise SystemExit(f"{tool} is needed (see the top of this file)")
    try:
        make_colour()
        make_metadata()
        rows = make_formats()
        update_badinput_table(rows)
    finally:
        shutil.rmtree(TMP, ignore_errors=True)
    total = sum(p.stat().st_size for d in (COLOUR, METADATA, FORMATS) for p in d.rglob("*") if p.is_file())
    print(f"total {total} bytes in colour/, metadata/, badinput/formats/; {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()
