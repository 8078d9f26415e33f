#ifndef VSEARCH_CPNGCODEC_H
#define VSEARCH_CPNGCODEC_H

// vsearch's PNG codec: chunks parsed in place, the image data inflated and
// deflated in one call with libdeflate, rows unfiltered with SSE2 where the
// pixel is 3 or 4 bytes. No global state, no longjmp, nothing printed.
//
// Every function that can fail writes a NUL-terminated reason into errbuf.

#include <stddef.h>
#include <stdint.h>

/// Outcomes of vspng_read_header and vspng_decode.
enum {
    VSPNG_OK = 0,
    /// Every row was decoded, but the file is damaged after the image data
    /// (it ends before IEND, or a chunk after the image data is cut). The
    /// pixels are complete; the reason is in errbuf.
    VSPNG_DAMAGED_AFTER_DATA = 1,
    /// The file is not a valid PNG, or its image data is corrupt.
    VSPNG_CORRUPT = -1,
    /// The file ends before its header or its image data is complete.
    VSPNG_TRUNCATED = -2,
    /// Memory for the image data could not be allocated.
    VSPNG_NO_MEMORY = -3
};

/// What the IHDR chunk declares.
typedef struct {
    uint32_t width;
    uint32_t height;
    int bit_depth;
    int color_type;
    int interlaced;
    /// 1 when the image has an alpha channel or a (valid) tRNS chunk.
    int has_alpha;
} vspng_header;

/// Reads and checks the signature and IHDR, and the chunks up to the first
/// IDAT (for tRNS). Returns VSPNG_OK, VSPNG_TRUNCATED or VSPNG_CORRUPT.
int vspng_read_header(const uint8_t *data, size_t size, vspng_header *header,
                      char *errbuf, size_t errbuf_len);

/// How a PNG declares its colours, and its EXIF block. Buffers are malloc'ed
/// (release them with vspng_metadata_free).
typedef struct {
    /// The decompressed iCCP profile, or NULL (absent, or refused with a warning).
    uint8_t *icc;
    size_t icc_size;
    /// 1 when an sRGB chunk is present.
    int srgb;
    /// The gAMA value (e.g. 0.45455), or 0 when absent or out of range.
    double gamma;
    /// 1 when a cHRM chunk is present; then white x/y, red x/y, green x/y, blue x/y.
    int has_chromaticities;
    double chromaticities[8];
    /// The eXIf block (a TIFF structure starting "II" or "MM"), or NULL.
    uint8_t *exif;
    size_t exif_size;
    /// How many chunks were ignored (bad CRC, bad content); the first reason is in warnbuf.
    int warnings;
} vspng_metadata;

/// Reads iCCP, sRGB, gAMA, cHRM and eXIf from the chunks before the first
/// IDAT. Returns VSPNG_OK, or an error code with a reason in errbuf.
int vspng_read_metadata(const uint8_t *data, size_t size, vspng_metadata *metadata,
                        char *warnbuf, size_t warnbuf_len, char *errbuf, size_t errbuf_len);

/// Frees the buffers of a vspng_metadata (safe on a zeroed struct).
void vspng_metadata_free(vspng_metadata *metadata);

/// The bytes vspng_decode needs in `out` to inflate the image data in place
/// (behind the rows it writes): at least height * stride, more when the
/// filtered rows are longer than the output rows (8-bit RGBA: one filter byte
/// a row); interlaced images, and images whose filtered rows would need more than
/// 1/16 more (16-bit samples into 8-bit rows), inflate into a buffer of their own
/// instead. 0 when the sizes overflow.
size_t vspng_decode_capacity(const vspng_header *header, size_t stride);

/// Decodes a PNG to RGBA rows: palettes and low bit depths expanded, tRNS made
/// alpha, gray made RGB, 16-bit samples scaled to 8 bits as libpng's
/// png_set_scale_16 does (no gamma applied), opaque images given alpha 255,
/// Adam7 passes combined. `out` holds `capacity` bytes, at least
/// vspng_decode_capacity(header, stride), of which the first height * stride
/// are the rows (stride >= width * 4). With sixteen_bit set, rows are 16-bit
/// RGBA in the host's byte order (stride >= width * 8); 8-bit samples become
/// v * 257.
///
/// Image data in several IDAT chunks is gathered into one buffer for libdeflate
/// up to `gather_limit` bytes (0: 8 MiB); past it, it is inflated chunk by chunk
/// with zlib instead, which needs no copy (memory over speed, for large files).
///
/// Returns VSPNG_OK, VSPNG_DAMAGED_AFTER_DATA (pixels complete; reason in
/// errbuf) or a negative code (reason in errbuf). Ancillary chunks that are
/// ignored (a bad CRC, palette indexes past the palette) are counted in
/// *warnings, the first reason copied into warnbuf.
int vspng_decode(const uint8_t *data, size_t size, uint8_t *out, size_t capacity, size_t stride,
                 const vspng_header *header, int sixteen_bit, size_t gather_limit, int *warnings,
                 char *warnbuf, size_t warnbuf_len, char *errbuf, size_t errbuf_len);

/// Row filters for vspng_encode, numbered as the PNG specification numbers them;
/// VSPNG_FILTER_ADAPTIVE picks, per row, the filter whose output has the
/// smallest sum of absolute (signed) bytes.
enum {
    VSPNG_FILTER_NONE = 0,
    VSPNG_FILTER_SUB = 1,
    VSPNG_FILTER_UP = 2,
    VSPNG_FILTER_AVERAGE = 3,
    VSPNG_FILTER_PAETH = 4,
    VSPNG_FILTER_ADAPTIVE = 5
};

/// Options for vspng_encode.
typedef struct {
    /// libdeflate compression level 0...12 (0 stores).
    int level;
    /// One of the VSPNG_FILTER_ values.
    int filter;
    /// An ICC profile to embed as iCCP, or NULL.
    const uint8_t *icc;
    size_t icc_size;
    /// An EXIF (TIFF) block to embed as eXIf, or NULL.
    const uint8_t *exif;
    size_t exif_size;
} vspng_write_options;

/// Encodes 8-bit rows of 4 bytes a pixel (RGBA, or RGBX whose fourth byte is
/// dropped when has_alpha is 0) as an 8-bit RGB or RGBA PNG: IHDR, iCCP,
/// eXIf, one IDAT, IEND. On success returns 0 and stores a malloc'ed buffer
/// in *out (free it with vspng_free); on failure returns -1 with a reason.
int vspng_encode(const uint8_t *pixels, uint32_t width, uint32_t height, size_t stride,
                 int has_alpha, const vspng_write_options *options,
                 uint8_t **out, size_t *out_size, char *errbuf, size_t errbuf_len);

/// Frees a buffer returned by vspng_encode.
void vspng_free(uint8_t *buffer);

/// The libdeflate version the codec was built against.
const char *vspng_libdeflate_version(void);

#endif
