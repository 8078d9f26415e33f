// Decoding: the IDAT run inflated in one libdeflate call into a buffer of the
// size the header gives (behind the output rows when it fits there), then each
// row unfiltered and expanded to RGBA, pass by pass for Adam7.

#include "PNGInternal.h"

#include <libdeflate.h>
#include <limits.h>
#include <stdlib.h>
#include <zlib.h>

/// Image data spread over several IDAT chunks and larger than this is inflated by
/// streaming through the chunks (zlib) instead of being gathered into one buffer for
/// libdeflate: the copy would cost as much memory as the compressed data (18 MB for a
/// 20-MP RGBA photo, two of them at once in a two-job thumbnail run).
enum { default_gather_limit = 8 << 20 };

/// Inflates the IDAT run chunk by chunk with zlib into `out`. Returns what
/// libdeflate would: success (with `produced`; `extra` when the stream holds more
/// than `out_size` bytes), or bad data.
static enum libdeflate_result inflate_streaming(const uint8_t *data, const vspng_chunks *chunks, uint8_t *out,
                                                size_t out_size, size_t *produced, int *extra) {
    z_stream z;
    memset(&z, 0, sizeof z);
    if (out_size > UINT_MAX || inflateInit(&z) != Z_OK) return LIBDEFLATE_BAD_DATA;
    z.next_out = out;
    z.avail_out = (uInt)out_size;
    int status = Z_OK;
    size_t pos = chunks->idat_start, remaining = chunks->idat_bytes;
    for (int i = 0; i < chunks->idat_chunks && status == Z_OK; i++) {
        size_t length = vspng_be32(data + pos);
        if (length > remaining) length = remaining;
        z.next_in = (Bytef *)(uintptr_t)(data + pos + 8);
        z.avail_in = (uInt)length;
        while (z.avail_in > 0 && status == Z_OK) status = inflate(&z, Z_NO_FLUSH);
        remaining -= length;
        pos += length + 12;
    }
    *produced = (size_t)z.total_out;
    inflateEnd(&z);
    if (status == Z_STREAM_END) return LIBDEFLATE_SUCCESS;
    if (status == Z_BUF_ERROR && z.avail_out == 0) { *extra = 1; return LIBDEFLATE_SUCCESS; }
    if (status == Z_OK) return *produced == out_size ? LIBDEFLATE_SUCCESS : LIBDEFLATE_BAD_DATA;
    return LIBDEFLATE_BAD_DATA;
}

static const int pass_x0[7] = {0, 4, 0, 2, 0, 1, 0};
static const int pass_y0[7] = {0, 0, 4, 0, 2, 0, 1};
static const int pass_dx[7] = {8, 8, 4, 4, 2, 2, 1};
static const int pass_dy[7] = {8, 8, 8, 4, 4, 2, 2};

typedef struct {
    uint32_t width, height;  // 0 for an empty pass
    size_t row_bytes;
} pass_size;

static int passes_of(const vspng_header *h, pass_size passes[7], size_t *filtered) {
    int count = h->interlaced ? 7 : 1;
    uint64_t total = 0;
    for (int p = 0; p < count; p++) {
        uint32_t x0 = h->interlaced ? (uint32_t)pass_x0[p] : 0, y0 = h->interlaced ? (uint32_t)pass_y0[p] : 0;
        uint32_t dx = h->interlaced ? (uint32_t)pass_dx[p] : 1, dy = h->interlaced ? (uint32_t)pass_dy[p] : 1;
        passes[p].width = h->width > x0 ? (h->width - x0 + dx - 1) / dx : 0;
        passes[p].height = h->height > y0 ? (h->height - y0 + dy - 1) / dy : 0;
        passes[p].row_bytes = passes[p].width ? vspng_row_bytes(h, passes[p].width) : 0;
        if (passes[p].width && passes[p].row_bytes == 0) return -1;
        if (passes[p].width && passes[p].height)
            total += (uint64_t)passes[p].height * ((uint64_t)passes[p].row_bytes + 1);
        if (total > (uint64_t)(SIZE_MAX / 2)) return -1;
    }
    *filtered = (size_t)total;
    return count;
}

size_t vspng_decode_capacity(const vspng_header *header, size_t stride) {
    pass_size passes[7];
    size_t filtered = 0;
    if (header == NULL || passes_of(header, passes, &filtered) < 0) return 0;
    if (header->height != 0 && stride > SIZE_MAX / header->height) return 0;
    size_t rows = (size_t)header->height * stride;
    // Interlaced images inflate into a buffer of their own, and so do images whose
    // filtered rows are much longer than the output rows (16-bit samples into 8-bit
    // rows): the caller's buffer keeps its capacity as long as the pixels live.
    if (header->interlaced || filtered <= rows) return rows;
    return filtered - rows <= rows / 16 ? filtered : rows;
}

/// Expands one unfiltered row of `count` pixels to 8-bit RGBA, writing every
/// `step`-th pixel of `out`.
static void expand8(const vspng_chunks *c, const uint8_t *src, uint8_t *out, uint32_t count, size_t step,
                    int *palette_overflow) {
    const vspng_header *h = &c->header;
    int depth = h->bit_depth;
    size_t o = 0, jump = step * 4;
    switch (h->color_type) {
    case 0:
        if (depth == 16) {
            for (uint32_t i = 0; i < count; i++, o += jump) {
                uint32_t v = (uint32_t)(src[2 * i] << 8 | src[2 * i + 1]);
                uint8_t g = (uint8_t)((v * 255 + 32895) >> 16);
                out[o] = out[o + 1] = out[o + 2] = g;
                out[o + 3] = (c->has_key && v == c->key[0]) ? 0 : 255;
            }
        } else {
            int scale = depth == 1 ? 255 : depth == 2 ? 85 : depth == 4 ? 17 : 1;
            uint32_t mask = (1u << depth) - 1;
            for (uint32_t i = 0; i < count; i++, o += jump) {
                size_t bit = (size_t)i * (size_t)depth;
                uint32_t v = (src[bit >> 3] >> (8 - depth - (bit & 7))) & mask;
                uint8_t g = (uint8_t)(v * (uint32_t)scale);
                out[o] = out[o + 1] = out[o + 2] = g;
                out[o + 3] = (c->has_key && v == c->key[0]) ? 0 : 255;
            }
        }
        break;
    case 2:
        if (depth == 16) {
            for (uint32_t i = 0; i < count; i++, o += jump) {
                const uint8_t *s = src + 6 * (size_t)i;
                uint32_t r = (uint32_t)(s[0] << 8 | s[1]), g = (uint32_t)(s[2] << 8 | s[3]), b = (uint32_t)(s[4] << 8 | s[5]);
                out[o] = (uint8_t)((r * 255 + 32895) >> 16);
                out[o + 1] = (uint8_t)((g * 255 + 32895) >> 16);
                out[o + 2] = (uint8_t)((b * 255 + 32895) >> 16);
                out[o + 3] = (c->has_key && r == c->key[0] && g == c->key[1] && b == c->key[2]) ? 0 : 255;
            }
        } else if (c->has_key) {
            for (uint32_t i = 0; i < count; i++, o += jump) {
                const uint8_t *s = src + 3 * (size_t)i;
                out[o] = s[0]; out[o + 1] = s[1]; out[o + 2] = s[2];
                out[o + 3] = (s[0] == c->key[0] && s[1] == c->key[1] && s[2] == c->key[2]) ? 0 : 255;
            }
        } else {
            for (uint32_t i = 0; i < count; i++, o += jump) {
                const uint8_t *s = src + 3 * (size_t)i;
                out[o] = s[0]; out[o + 1] = s[1]; out[o + 2] = s[2]; out[o + 3] = 255;
            }
        }
        break;
    case 3: {
        uint32_t mask = (1u << depth) - 1;
        for (uint32_t i = 0; i < count; i++, o += jump) {
            uint32_t index;
            if (depth == 8) {
                index = src[i];
            } else {
                size_t bit = (size_t)i * (size_t)depth;
                index = (src[bit >> 3] >> (8 - depth - (bit & 7))) & mask;
            }
            if ((int)index >= c->palette_size) *palette_overflow = 1;
            memcpy(out + o, c->palette[index], 4);
        }
        break;
    }
    case 4:
        if (depth == 16) {
            for (uint32_t i = 0; i < count; i++, o += jump) {
                const uint8_t *s = src + 4 * (size_t)i;
                uint8_t g = (uint8_t)(((uint32_t)(s[0] << 8 | s[1]) * 255 + 32895) >> 16);
                out[o] = out[o + 1] = out[o + 2] = g;
                out[o + 3] = (uint8_t)(((uint32_t)(s[2] << 8 | s[3]) * 255 + 32895) >> 16);
            }
        } else {
            for (uint32_t i = 0; i < count; i++, o += jump) {
                out[o] = out[o + 1] = out[o + 2] = src[2 * i];
                out[o + 3] = src[2 * i + 1];
            }
        }
        break;
    default:  // 6
        if (depth == 16) {
            for (uint32_t i = 0; i < count; i++, o += jump) {
                const uint8_t *s = src + 8 * (size_t)i;
                for (int k = 0; k < 4; k++)
                    out[o + k] = (uint8_t)(((uint32_t)(s[2 * k] << 8 | s[2 * k + 1]) * 255 + 32895) >> 16);
            }
        } else if (step == 1) {
            memcpy(out, src, (size_t)count * 4);
        } else {
            for (uint32_t i = 0; i < count; i++, o += jump) memcpy(out + o, src + 4 * (size_t)i, 4);
        }
        break;
    }
}

/// Expands one unfiltered row to 16-bit RGBA in the host's byte order.
static void expand16(const vspng_chunks *c, const uint8_t *src, uint8_t *out8, uint32_t count, size_t step,
                     int *palette_overflow) {
    const vspng_header *h = &c->header;
    uint16_t *out = (uint16_t *)(void *)out8;
    size_t o = 0, jump = step * 4;
    if (h->bit_depth == 16) {
        int channels = h->color_type == 0 ? 1 : h->color_type == 2 ? 3 : h->color_type == 4 ? 2 : 4;
        for (uint32_t i = 0; i < count; i++, o += jump) {
            const uint8_t *s = src + (size_t)i * (size_t)channels * 2;
            uint16_t v[4];
            for (int k = 0; k < channels; k++) v[k] = (uint16_t)(s[2 * k] << 8 | s[2 * k + 1]);
            switch (channels) {
            case 1:
                out[o] = out[o + 1] = out[o + 2] = v[0];
                out[o + 3] = (c->has_key && v[0] == c->key[0]) ? 0 : 0xFFFF;
                break;
            case 2:
                out[o] = out[o + 1] = out[o + 2] = v[0];
                out[o + 3] = v[1];
                break;
            case 3:
                out[o] = v[0]; out[o + 1] = v[1]; out[o + 2] = v[2];
                out[o + 3] = (c->has_key && v[0] == c->key[0] && v[1] == c->key[1] && v[2] == c->key[2]) ? 0 : 0xFFFF;
                break;
            default:
                memcpy(out + o, v, sizeof v);
                break;
            }
        }
        return;
    }
    // 8 bits or fewer: expand to 8-bit RGBA one pixel at a time, then widen (v * 257).
    for (uint32_t i = 0; i < count; i++, o += jump) {
        uint8_t pixel[4];
        size_t bits = (size_t)h->bit_depth * (size_t)(h->color_type == 0 ? 1 : h->color_type == 2 ? 3
                                                    : h->color_type == 3 ? 1 : h->color_type == 4 ? 2 : 4);
        // Pixels narrower than a byte share bytes: hand expand8 the byte and the pixel's place in it.
        if (bits < 8) {
            uint8_t shifted = (uint8_t)(src[(i * bits) >> 3] << ((i * bits) & 7));
            expand8(c, &shifted, pixel, 1, 1, palette_overflow);
        } else {
            expand8(c, src + i * (bits / 8), pixel, 1, 1, palette_overflow);
        }
        for (int k = 0; k < 4; k++) out[o + k] = (uint16_t)(pixel[k] * 257);
    }
}

int vspng_decode(const uint8_t *data, size_t size, uint8_t *out, size_t capacity, size_t stride,
                 const vspng_header *header, int sixteen_bit, size_t gather_limit, int *warnings,
                 char *warnbuf, size_t warnbuf_len, char *errbuf, size_t errbuf_len) {
    size_t pixel_bytes = sixteen_bit ? 8 : 4;
    if (data == NULL || out == NULL || header == NULL || warnings == NULL
        || stride < (size_t)header->width * pixel_bytes) {
        vspng_message(errbuf, errbuf_len, "invalid arguments");
        return VSPNG_CORRUPT;
    }
    *warnings = 0;
    vspng_chunks chunks;
    int status = vspng_walk(data, size, 0, &chunks, errbuf, errbuf_len);
    if (status != VSPNG_OK) return status;
    const vspng_header *h = &chunks.header;
    if (h->width != header->width || h->height != header->height || h->bit_depth != header->bit_depth
        || h->color_type != header->color_type || h->interlaced != header->interlaced) {
        vspng_message(errbuf, errbuf_len, "the header differs from the one read before");
        return VSPNG_CORRUPT;
    }
    pass_size passes[7];
    size_t filtered = 0;
    int pass_count = passes_of(h, passes, &filtered);
    size_t rows_size = (size_t)h->height * stride;
    if (pass_count < 0 || capacity < rows_size) {
        vspng_message(errbuf, errbuf_len, "image too large to address");
        return VSPNG_CORRUPT;
    }

    // The compressed stream: in place when there is one IDAT chunk, else gathered —
    // or, past the gather limit, streamed chunk by chunk.
    const uint8_t *stream = data + chunks.idat_start + 8;
    uint8_t *gathered = NULL;
    int streaming = chunks.idat_chunks > 1 && chunks.idat_bytes > (gather_limit ? gather_limit : default_gather_limit);
    if (chunks.idat_chunks > 1 && !streaming) {
        gathered = (uint8_t *)malloc(chunks.idat_bytes ? chunks.idat_bytes : 1);
        if (gathered == NULL) {
            vspng_message(errbuf, errbuf_len, "out of memory for %zu bytes of image data", chunks.idat_bytes);
            return VSPNG_NO_MEMORY;
        }
        size_t pos = chunks.idat_start, copied = 0;
        for (int i = 0; i < chunks.idat_chunks; i++) {
            size_t length = vspng_be32(data + pos);
            if (length > chunks.idat_bytes - copied) length = chunks.idat_bytes - copied;
            memcpy(gathered + copied, data + pos + 8, length);
            copied += length;
            pos += length + 12;
        }
        stream = gathered;
    }

    // Where the filtered rows go: behind the output rows when they fit there
    // (each output row then ends before the next filtered row starts).
    int in_place = !h->interlaced && capacity >= filtered;
    uint8_t *inflated = in_place ? out + capacity - filtered : (uint8_t *)malloc(filtered ? filtered : 1);
    size_t widest = vspng_row_bytes(h, h->width);
    uint8_t *rows = (uint8_t *)malloc(2 * widest + 32);
    struct libdeflate_decompressor *inflater = libdeflate_alloc_decompressor();
    if (inflated == NULL || rows == NULL || inflater == NULL) {
        if (!in_place) free(inflated);
        free(rows);
        free(gathered);
        if (inflater) libdeflate_free_decompressor(inflater);
        vspng_message(errbuf, errbuf_len, "out of memory for the image data (%zu bytes)", filtered);
        return VSPNG_NO_MEMORY;
    }
    size_t produced = 0, consumed = 0;
    int extra = 0;
    enum libdeflate_result result = streaming
        ? inflate_streaming(data, &chunks, inflated, filtered, &produced, &extra)
        : libdeflate_zlib_decompress_ex(inflater, stream, chunks.idat_bytes, inflated, filtered, &consumed, &produced);
    if (result == LIBDEFLATE_INSUFFICIENT_SPACE) {
        // More data than the image needs (libpng: "Too much image data", a warning): inflate it all, keep the start.
        size_t roomy = filtered + filtered / 2 + (1u << 20);
        uint8_t *spare = (uint8_t *)malloc(roomy);
        if (spare != NULL) {
            result = libdeflate_zlib_decompress_ex(inflater, stream, chunks.idat_bytes, spare, roomy, &consumed, &produced);
            if (result == LIBDEFLATE_SUCCESS) memcpy(inflated, spare, filtered);
            produced = filtered;
            free(spare);
            extra = 1;
        }
    }
    libdeflate_free_decompressor(inflater);
    free(gathered);
    int outcome = VSPNG_OK;
    if (result != LIBDEFLATE_SUCCESS || produced < filtered) {
        if (chunks.cut_in_image_data) {
            vspng_message(errbuf, errbuf_len, "the file ends inside the image data (truncated)");
            outcome = VSPNG_TRUNCATED;
        } else if (result == LIBDEFLATE_SUCCESS) {
            vspng_message(errbuf, errbuf_len, "not enough image data: %zu of %zu bytes", produced, filtered);
            outcome = VSPNG_CORRUPT;
        } else {
            vspng_message(errbuf, errbuf_len, "corrupt image data (invalid zlib stream or checksum)");
            outcome = VSPNG_CORRUPT;
        }
    }

    int palette_overflow = 0;
    const uint8_t *cursor = inflated;
    for (int p = 0; p < pass_count && outcome == VSPNG_OK; p++) {
        const pass_size *ps = &passes[p];
        if (ps->width == 0 || ps->height == 0) continue;
        size_t length = ps->row_bytes;
        uint8_t *current = rows, *prior = rows + length + 16;
        memset(prior, 0, length);
        int bpp = vspng_filter_stride(h);
        size_t step = h->interlaced ? (size_t)pass_dx[p] : 1;
        size_t x0 = h->interlaced ? (size_t)pass_x0[p] : 0, y0 = h->interlaced ? (size_t)pass_y0[p] : 0;
        size_t dy = h->interlaced ? (size_t)pass_dy[p] : 1;
        for (uint32_t y = 0; y < ps->height; y++) {
            const uint8_t *row = cursor + (size_t)y * (length + 1);
            if (vspng_unfilter_row(row[0], current, row + 1, prior, length, bpp) != 0) {
                vspng_message(errbuf, errbuf_len, "invalid filter type %d in row %u", row[0], y);
                outcome = VSPNG_CORRUPT;
                break;
            }
            uint8_t *target = out + (y0 + y * dy) * stride + x0 * pixel_bytes;
            if (sixteen_bit) expand16(&chunks, current, target, ps->width, step, &palette_overflow);
            else expand8(&chunks, current, target, ps->width, step, &palette_overflow);
            uint8_t *swap = prior; prior = current; current = swap;
        }
        cursor += (size_t)ps->height * (length + 1);
    }
    if (!in_place) free(inflated);
    free(rows);
    if (outcome != VSPNG_OK) return outcome;

    *warnings = chunks.warnings;
    if (chunks.warnings) vspng_message(warnbuf, warnbuf_len, "%s", chunks.warning);
    if (extra || palette_overflow) {
        if ((*warnings)++ == 0)
            vspng_message(warnbuf, warnbuf_len, extra ? "too much image data: the extra rows are ignored"
                                                      : "palette index past the palette's entries (read as black)");
    }
    if (chunks.ending != VSPNG_OK) {
        vspng_message(errbuf, errbuf_len, "%s", chunks.ending_reason);
        return VSPNG_DAMAGED_AFTER_DATA;
    }
    return VSPNG_OK;
}
