#ifndef VSEARCH_CPNGSHIM_H
#define VSEARCH_CPNGSHIM_H

#include <stddef.h>
#include <stdint.h>

/// Options for vs_png_encode. Every field has a documented "use libpng's
/// default" value so Swift can fill the struct without knowing libpng.
typedef struct {
    /// zlib level 0...9; -1 keeps libpng's default (6).
    int compression_level;
    /// Bitwise OR of PNG_FILTER_NONE/SUB/UP/AVG/PAETH (0x08...0x80);
    /// -1 keeps libpng's adaptive default.
    int filters;
    /// zlib strategy (Z_DEFAULT_STRATEGY 0, Z_FILTERED 1, Z_RLE 3, ...); -1 keeps the default.
    int strategy;
    /// An ICC profile to embed as iCCP, or NULL.
    const unsigned char *icc;
    size_t icc_size;
    /// An EXIF (TIFF) block to embed as eXIf, or NULL.
    const unsigned char *exif;
    size_t exif_size;
} vs_png_write_options;

/// Encodes 8-bit, 4-bytes-per-pixel rows (RGBA, or RGBX whose fourth byte is
/// dropped when has_alpha is 0) as a PNG in memory.
///
/// libpng reports errors with longjmp; this function is the only place that
/// catches it, so no longjmp ever crosses a Swift frame. Nothing is printed.
///
/// On success returns 0 and stores a malloc'ed buffer in *out (free it with
/// vs_png_free). On failure returns -1, leaves *out NULL and writes a
/// NUL-terminated reason into errbuf.
int vs_png_encode(const unsigned char *pixels, uint32_t width, uint32_t height,
                  size_t stride, int has_alpha,
                  const vs_png_write_options *options,
                  unsigned char **out, size_t *out_size,
                  char *errbuf, size_t errbuf_len);

/// What a PNG header declares.
typedef struct {
    uint32_t width;
    uint32_t height;
    /// 1 when the image has an alpha channel or tRNS transparency.
    int has_alpha;
    int bit_depth;
    int color_type;
    int interlaced;
} vs_png_info;

/// Outcome codes of vs_png_decode.
enum {
    VS_PNG_OK = 0,
    /// The image could not be decoded (corrupt or truncated image data).
    VS_PNG_FAILED = -1,
    /// Every row was decoded, but the file is damaged after the image data
    /// (for example it ends before IEND). The pixels are complete.
    VS_PNG_DAMAGED_AFTER_DATA = 1
};

/// Reads the header (signature and chunks up to the first IDAT) of a PNG in
/// memory. Returns 0 on success, -1 with a reason in errbuf on failure.
int vs_png_read_info(const unsigned char *data, size_t size, vs_png_info *info,
                     char *errbuf, size_t errbuf_len);

/// How a PNG declares its colours, and its EXIF block. Buffers are malloc'ed
/// copies owned by the struct: release them with vs_png_metadata_free.
typedef struct {
    /// The decompressed iCCP profile, or NULL.
    unsigned char *icc;
    size_t icc_size;
    /// 1 when an sRGB chunk is present.
    int srgb;
    /// The gAMA value (e.g. 0.45455), or 0 when absent.
    double gamma;
    /// 1 when a cHRM chunk is present; then white x/y, red x/y, green x/y, blue x/y.
    int has_chromaticities;
    double chromaticities[8];
    /// The eXIf block (a TIFF structure), or NULL.
    unsigned char *exif;
    size_t exif_size;
} vs_png_metadata;

/// Reads the colour chunks (iCCP, sRGB, gAMA, cHRM) and eXIf of a PNG in
/// memory, up to its first IDAT. Returns 0, or -1 with a reason in errbuf.
/// A profile libpng refuses (it checks iCCP profiles) is left out, not an error.
int vs_png_read_metadata(const unsigned char *data, size_t size, vs_png_metadata *metadata,
                         char *errbuf, size_t errbuf_len);

/// Frees the buffers of a vs_png_metadata (safe on a zeroed struct).
void vs_png_metadata_free(vs_png_metadata *metadata);

/// Decodes a PNG in memory to 8-bit RGBA rows with libpng's classic API:
/// palettes and low bit depths expanded, tRNS turned into alpha, gray turned
/// into RGB, 16-bit scaled to 8 (no gamma conversion: gAMA is not applied,
/// as Pillow and libvips do), opaque images given alpha 255, Adam7 passes
/// combined. `out` must hold height * stride bytes, stride >= width * 4;
/// width and height must be the values vs_png_read_info returned.
///
/// Returns VS_PNG_OK, VS_PNG_DAMAGED_AFTER_DATA (reason in errbuf) or
/// VS_PNG_FAILED (reason in errbuf). libpng warnings (about ancillary chunks)
/// are counted in *warnings and the first one is copied into warnbuf.
///
/// With sixteen_bit set and a 16-bit source, rows are 16-bit RGBA in the
/// host's byte order instead (stride >= width * 8), for a colour conversion
/// at full precision; 8-bit sources are expanded to 16 bits (v * 257).
int vs_png_decode(const unsigned char *data, size_t size, unsigned char *out, size_t stride,
                  uint32_t width, uint32_t height, int sixteen_bit, int *warnings,
                  char *warnbuf, size_t warnbuf_len, char *errbuf, size_t errbuf_len);

/// Frees a buffer returned by vs_png_encode.
void vs_png_free(unsigned char *buffer);

/// The libpng version string the process linked at run time.
const char *vs_png_runtime_version(void);

#endif
