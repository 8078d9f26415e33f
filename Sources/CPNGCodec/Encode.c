// Encoding: rows filtered into one buffer, deflated in one libdeflate call
// straight into the IDAT chunk of the output, chunks framed with libdeflate's
// CRC-32.

#include "PNGInternal.h"

#include <libdeflate.h>
#include <stdlib.h>

static uint8_t *put_chunk_header(uint8_t *p, uint32_t length, const char *type) {
    vspng_put_be32(p, length);
    memcpy(p + 4, type, 4);
    return p + 8;
}

/// Writes the CRC of the chunk whose header starts at `chunk`; returns the byte after it.
static uint8_t *finish_chunk(uint8_t *chunk) {
    uint32_t length = vspng_be32(chunk);
    vspng_put_be32(chunk + 8 + length, libdeflate_crc32(0, chunk + 4, (size_t)length + 4));
    return chunk + 12 + length;
}

/// Sum of the filtered bytes read as signed values: libpng's heuristic for choosing a row's filter.
static uint64_t cost(const uint8_t *row, size_t length) {
    uint64_t sum = 0;
    for (size_t i = 0; i < length; i++) sum += (uint64_t)abs((int)(int8_t)row[i]);
    return sum;
}

int vspng_encode(const uint8_t *pixels, uint32_t width, uint32_t height, size_t stride,
                 int has_alpha, const vspng_write_options *options,
                 uint8_t **out, size_t *out_size, char *errbuf, size_t errbuf_len) {
    if (out == NULL || out_size == NULL || pixels == NULL || options == NULL) {
        vspng_message(errbuf, errbuf_len, "invalid arguments");
        return -1;
    }
    *out = NULL;
    *out_size = 0;
    if (width == 0 || height == 0 || width > 0x7FFFFFFFu || height > 0x7FFFFFFFu || stride < (size_t)width * 4) {
        vspng_message(errbuf, errbuf_len, "invalid image dimensions %ux%u", width, height);
        return -1;
    }
    int level = options->level < 0 ? 0 : options->level > 12 ? 12 : options->level;
    int filter = options->filter < 0 || options->filter > VSPNG_FILTER_ADAPTIVE ? VSPNG_FILTER_UP : options->filter;
    int channels = has_alpha ? 4 : 3;
    size_t length = (size_t)width * (size_t)channels;
    if ((uint64_t)height * ((uint64_t)length + 1) > 0x7FFFFFFFu) {
        vspng_message(errbuf, errbuf_len, "image too large for one PNG image data chunk (%ux%u)", width, height);
        return -1;
    }
    size_t filtered_size = (size_t)height * (length + 1);

    uint8_t *filtered = (uint8_t *)malloc(filtered_size);
    // Scratch: two packed RGB rows (when the input has a fourth byte to drop) and four candidate rows.
    uint8_t *scratch = (uint8_t *)calloc(6, length + 16);
    struct libdeflate_compressor *deflater = libdeflate_alloc_compressor(level);
    struct libdeflate_compressor *profile_deflater = options->icc && options->icc_size ? libdeflate_alloc_compressor(9) : NULL;
    uint8_t *png = NULL;
    if (filtered == NULL || scratch == NULL || deflater == NULL || (options->icc && options->icc_size && profile_deflater == NULL)) {
        vspng_message(errbuf, errbuf_len, "out of memory while encoding a %ux%u PNG", width, height);
        goto fail;
    }
    uint8_t *packed[2] = {scratch, scratch + (length + 16)};
    uint8_t *candidates[4];
    for (int i = 0; i < 4; i++) candidates[i] = scratch + (size_t)(2 + i) * (length + 16);
    const uint8_t *prior = packed[1];  // all zero: the row above the first
    for (uint32_t y = 0; y < height; y++) {
        const uint8_t *source = pixels + (size_t)y * stride;
        const uint8_t *row = source;
        if (!has_alpha) {
            uint8_t *target = packed[y & 1];
            for (uint32_t x = 0; x < width; x++) memcpy(target + 3 * (size_t)x, source + 4 * (size_t)x, 3);
            row = target;
        }
        uint8_t *destination = filtered + (size_t)y * (length + 1);
        int chosen = filter;
        if (filter == VSPNG_FILTER_ADAPTIVE) {
            uint64_t best = cost(row, length);
            chosen = 0;
            for (int f = 1; f <= 4; f++) {
                vspng_filter_row(f, candidates[f - 1], row, prior, length, channels);
                uint64_t c = cost(candidates[f - 1], length);
                if (c < best) { best = c; chosen = f; }
            }
            if (chosen == 0) memcpy(destination + 1, row, length);
            else memcpy(destination + 1, candidates[chosen - 1], length);
        } else {
            vspng_filter_row(chosen, destination + 1, row, prior, length, channels);
        }
        destination[0] = (uint8_t)chosen;
        prior = row;  // a packed row stays intact while the next row fills the other buffer
    }

    size_t profile_bound = profile_deflater ? libdeflate_zlib_compress_bound(profile_deflater, options->icc_size) : 0;
    size_t exif_size = options->exif && options->exif_size <= 0x7FFFFFFF ? options->exif_size : 0;
    size_t bound = libdeflate_zlib_compress_bound(deflater, filtered_size);
    size_t capacity = 8 + 25 + (profile_deflater ? 12 + 13 + profile_bound : 0) + (exif_size ? 12 + exif_size : 0)
                    + 12 + bound + 12;
    png = (uint8_t *)malloc(capacity);
    if (png == NULL) {
        vspng_message(errbuf, errbuf_len, "out of memory for a %zu-byte PNG", capacity);
        goto fail;
    }
    static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};
    memcpy(png, signature, 8);
    uint8_t *chunk = png + 8;
    uint8_t *body = put_chunk_header(chunk, 13, "IHDR");
    vspng_put_be32(body, width);
    vspng_put_be32(body + 4, height);
    body[8] = 8;
    body[9] = has_alpha ? 6 : 2;
    body[10] = body[11] = body[12] = 0;
    chunk = finish_chunk(chunk);
    if (profile_deflater) {
        body = chunk + 8;
        memcpy(body, "ICC profile", 12);  // the name and its NUL
        body[12] = 0;                     // compression method: zlib
        size_t compressed = libdeflate_zlib_compress(profile_deflater, options->icc, options->icc_size,
                                                     body + 13, profile_bound);
        if (compressed == 0) {
            vspng_message(errbuf, errbuf_len, "the ICC profile could not be compressed");
            goto fail;
        }
        put_chunk_header(chunk, (uint32_t)(13 + compressed), "iCCP");
        chunk = finish_chunk(chunk);
    }
    if (exif_size) {
        body = put_chunk_header(chunk, (uint32_t)exif_size, "eXIf");
        memcpy(body, options->exif, exif_size);
        chunk = finish_chunk(chunk);
    }
    size_t compressed = libdeflate_zlib_compress(deflater, filtered, filtered_size, chunk + 8, bound);
    if (compressed == 0 || compressed > 0x7FFFFFFFu) {
        vspng_message(errbuf, errbuf_len, "the image data could not be compressed");
        goto fail;
    }
    put_chunk_header(chunk, (uint32_t)compressed, "IDAT");
    chunk = finish_chunk(chunk);
    put_chunk_header(chunk, 0, "IEND");
    chunk = finish_chunk(chunk);

    free(filtered);
    free(scratch);
    libdeflate_free_compressor(deflater);
    if (profile_deflater) libdeflate_free_compressor(profile_deflater);
    *out = png;
    *out_size = (size_t)(chunk - png);
    return 0;

fail:
    free(png);
    free(filtered);
    free(scratch);
    if (deflater) libdeflate_free_compressor(deflater);
    if (profile_deflater) libdeflate_free_compressor(profile_deflater);
    return -1;
}

void vspng_free(uint8_t *buffer) { free(buffer); }

const char *vspng_libdeflate_version(void) { return LIBDEFLATE_VERSION_STRING; }
