#ifndef VSEARCH_CPNGCODEC_INTERNAL_H
#define VSEARCH_CPNGCODEC_INTERNAL_H

// What the codec's files share: the chunk walk's result, the filters, and
// small helpers. Not part of the module's interface.

#include "CPNGCodec.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/// What a walk over a PNG's chunks found. Spans point into the caller's bytes.
typedef struct {
    vspng_header header;
    /// Palette entries as RGBA; entries past the palette are (0, 0, 0, 255),
    /// as libpng reads them; tRNS lowers the alpha of the first entries.
    uint8_t palette[256][4];
    int palette_size;
    /// tRNS of a grey or RGB image: the one sample value (grey in [0]) that is transparent.
    int has_key;
    uint16_t key[3];
    /// The first run of consecutive IDAT chunks: where it starts, how many
    /// chunks, and how many data bytes the file holds of them.
    size_t idat_start;
    int idat_chunks;
    size_t idat_bytes;
    /// 1 when the file ends inside the IDAT run (its last chunk cut, or no chunk after it).
    int cut_in_image_data;
    /// VSPNG_OK when IEND was reached, else VSPNG_DAMAGED_AFTER_DATA with a reason.
    int ending;
    char ending_reason[160];
    /// Colour and EXIF chunks before the first IDAT (data spans; NULL when absent).
    const uint8_t *iccp, *srgb, *gama, *chrm, *exif;
    size_t iccp_size, srgb_size, gama_size, chrm_size, exif_size;
    /// Ancillary chunks ignored, and the first reason.
    int warnings;
    char warning[160];
} vspng_chunks;

/// Walks the chunks from the signature. With `until_image_data`, stops at the
/// first IDAT (what the header and metadata need); otherwise walks to IEND or
/// the end of the file. Returns VSPNG_OK, VSPNG_CORRUPT or VSPNG_TRUNCATED.
int vspng_walk(const uint8_t *data, size_t size, int until_image_data, vspng_chunks *chunks,
               char *errbuf, size_t errbuf_len);

/// Bytes per row of `width` pixels (without the filter byte), or 0 on overflow.
size_t vspng_row_bytes(const vspng_header *header, uint32_t width);

/// Bytes per complete pixel for filtering (at least 1).
int vspng_filter_stride(const vspng_header *header);

/// Reverses one row's filter into `row`, from the filtered bytes and the
/// previous row (`prior`, all zero for a first row). Returns 0, or -1 for a
/// filter type the PNG specification does not define.
int vspng_unfilter_row(int filter, uint8_t *row, const uint8_t *filtered, const uint8_t *prior,
                       size_t length, int bpp);

/// Applies `filter` (0...4) to `row` into `out`, given the previous row.
void vspng_filter_row(int filter, uint8_t *out, const uint8_t *row, const uint8_t *prior,
                      size_t length, int bpp);

static inline uint32_t vspng_be32(const uint8_t *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static inline void vspng_put_be32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

static inline void vspng_message(char *buffer, size_t length, const char *format, ...) {
    if (buffer == NULL || length == 0) return;
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(buffer, length, format, arguments);
    va_end(arguments);
}

#endif
