// Colour chunks (iCCP, sRGB, gAMA, cHRM) and eXIf, read from the chunks
// before the image data. A chunk whose content is invalid is left out with a
// warning, as libpng does; it never fails the read.

#include "PNGInternal.h"

#include <libdeflate.h>
#include <stdlib.h>

/// libpng's limit for a decompressed chunk (png_set_chunk_malloc_max), kept.
enum { max_profile_bytes = 8000000 };

static void warn(vspng_metadata *metadata, char *warnbuf, size_t warnbuf_len, const char *reason) {
    if (metadata->warnings++ == 0) vspng_message(warnbuf, warnbuf_len, "%s", reason);
}

static uint8_t *inflate_profile(const uint8_t *stream, size_t size, size_t *profile_size) {
    struct libdeflate_decompressor *inflater = libdeflate_alloc_decompressor();
    if (inflater == NULL) return NULL;
    size_t room = size * 4 < 4096 ? 4096 : size * 4;
    uint8_t *profile = NULL;
    for (;;) {
        if (room > max_profile_bytes) room = max_profile_bytes;
        uint8_t *grown = (uint8_t *)realloc(profile, room);
        if (grown == NULL) break;
        profile = grown;
        size_t produced = 0;
        enum libdeflate_result result = libdeflate_zlib_decompress(inflater, stream, size, profile, room, &produced);
        if (result == LIBDEFLATE_SUCCESS) {
            *profile_size = produced;
            libdeflate_free_decompressor(inflater);
            return profile;
        }
        if (result != LIBDEFLATE_INSUFFICIENT_SPACE || room == max_profile_bytes) break;
        room *= 2;
    }
    free(profile);
    libdeflate_free_decompressor(inflater);
    return NULL;
}

static void read_iccp(const uint8_t *d, size_t length, vspng_metadata *metadata, char *warnbuf, size_t warnbuf_len) {
    size_t name = 0;
    while (name < length && name < 80 && d[name] != 0) name++;
    if (name == 0 || name >= 80 || name + 2 > length || d[name + 1] != 0) {
        warn(metadata, warnbuf, warnbuf_len, "invalid iCCP chunk (name or compression method): profile ignored");
        return;
    }
    size_t size = 0;
    uint8_t *profile = inflate_profile(d + name + 2, length - name - 2, &size);
    if (profile == NULL) {
        warn(metadata, warnbuf, warnbuf_len, "iCCP profile does not decompress (or exceeds 8 MB): profile ignored");
        return;
    }
    if (size < 132 || vspng_be32(profile) != size) {
        free(profile);
        warn(metadata, warnbuf, warnbuf_len, "iCCP profile length differs from its header: profile ignored");
        return;
    }
    metadata->icc = profile;
    metadata->icc_size = size;
}

int vspng_read_metadata(const uint8_t *data, size_t size, vspng_metadata *metadata,
                        char *warnbuf, size_t warnbuf_len, char *errbuf, size_t errbuf_len) {
    if (metadata == NULL) return VSPNG_CORRUPT;
    memset(metadata, 0, sizeof *metadata);
    vspng_chunks chunks;
    int status = vspng_walk(data, size, 1, &chunks, errbuf, errbuf_len);
    if (status != VSPNG_OK) return status;
    if (chunks.warnings) {
        metadata->warnings = chunks.warnings;
        vspng_message(warnbuf, warnbuf_len, "%s", chunks.warning);
    }
    if (chunks.iccp) read_iccp(chunks.iccp, chunks.iccp_size, metadata, warnbuf, warnbuf_len);
    if (chunks.srgb) {
        if (chunks.srgb_size == 1 && chunks.srgb[0] <= 3) metadata->srgb = 1;
        else warn(metadata, warnbuf, warnbuf_len, "invalid sRGB chunk: ignored");
    }
    if (chunks.gama) {
        uint32_t gamma = chunks.gama_size == 4 ? vspng_be32(chunks.gama) : 0;
        // libpng's accepted range (png_colorspace_set_gamma): 16 ... 625000000 (x 100000).
        if (gamma >= 16 && gamma <= 625000000u) metadata->gamma = gamma / 100000.0;
        else warn(metadata, warnbuf, warnbuf_len, "invalid gAMA value: ignored");
    }
    if (chunks.chrm) {
        if (chunks.chrm_size == 32) {
            metadata->has_chromaticities = 1;
            for (int i = 0; i < 8; i++) metadata->chromaticities[i] = vspng_be32(chunks.chrm + 4 * i) / 100000.0;
        } else {
            warn(metadata, warnbuf, warnbuf_len, "invalid cHRM chunk: ignored");
        }
    }
    if (chunks.exif) {
        const uint8_t *e = chunks.exif;
        if (chunks.exif_size >= 8 && ((e[0] == 'I' && e[1] == 'I') || (e[0] == 'M' && e[1] == 'M'))) {
            metadata->exif = (uint8_t *)malloc(chunks.exif_size);
            if (metadata->exif != NULL) {
                memcpy(metadata->exif, e, chunks.exif_size);
                metadata->exif_size = chunks.exif_size;
            }
        } else {
            warn(metadata, warnbuf, warnbuf_len, "eXIf chunk without a TIFF byte-order mark: ignored");
        }
    }
    return VSPNG_OK;
}

void vspng_metadata_free(vspng_metadata *metadata) {
    if (metadata == NULL) return;
    free(metadata->icc);
    free(metadata->exif);
    metadata->icc = NULL;
    metadata->exif = NULL;
    metadata->icc_size = 0;
    metadata->exif_size = 0;
}
