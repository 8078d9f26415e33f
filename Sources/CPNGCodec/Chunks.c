// The chunk walk: signature, lengths, CRCs, IHDR/PLTE/tRNS, where the image
// data is, and how the file ends. Nothing is copied or allocated.

#include "PNGInternal.h"

#include <libdeflate.h>

static const uint8_t signature[8] = {0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A};

static int is_type(const uint8_t *type, const char *name) { return memcmp(type, name, 4) == 0; }

static int is_letter(uint8_t c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }

static int is_critical(const uint8_t *type) { return (type[0] & 0x20) == 0; }

static void warn(vspng_chunks *chunks, const char *format, const char *type) {
    if (chunks->warnings++ == 0) vspng_message(chunks->warning, sizeof chunks->warning, format, type);
}

size_t vspng_row_bytes(const vspng_header *header, uint32_t width) {
    int channels = header->color_type == 0 ? 1 : header->color_type == 2 ? 3 : header->color_type == 3 ? 1
                 : header->color_type == 4 ? 2 : 4;
    uint64_t bits = (uint64_t)width * (uint64_t)(channels * header->bit_depth);
    uint64_t bytes = (bits + 7) / 8;
    return bytes > (uint64_t)(SIZE_MAX / 4) ? 0 : (size_t)bytes;
}

int vspng_filter_stride(const vspng_header *header) {
    int channels = header->color_type == 0 ? 1 : header->color_type == 2 ? 3 : header->color_type == 3 ? 1
                 : header->color_type == 4 ? 2 : 4;
    int bits = channels * header->bit_depth;
    return bits < 8 ? 1 : bits / 8;
}

static int read_ihdr(const uint8_t *d, uint32_t length, vspng_header *header, char *errbuf, size_t errbuf_len) {
    if (length != 13) {
        vspng_message(errbuf, errbuf_len, "IHDR has %u bytes instead of 13", length);
        return VSPNG_CORRUPT;
    }
    header->width = vspng_be32(d);
    header->height = vspng_be32(d + 4);
    header->bit_depth = d[8];
    header->color_type = d[9];
    header->interlaced = d[12];
    if (header->width == 0 || header->height == 0 || header->width > 0x7FFFFFFFu || header->height > 0x7FFFFFFFu) {
        vspng_message(errbuf, errbuf_len, "invalid image size %ux%u in IHDR", header->width, header->height);
        return VSPNG_CORRUPT;
    }
    int depth = header->bit_depth, valid;
    switch (header->color_type) {
    case 0: valid = depth == 1 || depth == 2 || depth == 4 || depth == 8 || depth == 16; break;
    case 3: valid = depth == 1 || depth == 2 || depth == 4 || depth == 8; break;
    case 2: case 4: case 6: valid = depth == 8 || depth == 16; break;
    default:
        vspng_message(errbuf, errbuf_len, "invalid colour type %d in IHDR", header->color_type);
        return VSPNG_CORRUPT;
    }
    if (!valid) {
        vspng_message(errbuf, errbuf_len, "invalid bit depth %d for colour type %d in IHDR", depth, header->color_type);
        return VSPNG_CORRUPT;
    }
    if (d[10] != 0 || d[11] != 0) {
        vspng_message(errbuf, errbuf_len, "unknown compression (%d) or filter method (%d) in IHDR", d[10], d[11]);
        return VSPNG_CORRUPT;
    }
    if (header->interlaced > 1) {
        vspng_message(errbuf, errbuf_len, "unknown interlace method %d in IHDR", header->interlaced);
        return VSPNG_CORRUPT;
    }
    header->has_alpha = (header->color_type & 4) != 0;
    return VSPNG_OK;
}

static void read_trns(const uint8_t *d, uint32_t length, vspng_chunks *chunks) {
    vspng_header *h = &chunks->header;
    if (h->color_type == 3) {
        if (chunks->palette_size == 0 || length == 0 || length > (uint32_t)chunks->palette_size) {
            warn(chunks, "%s chunk longer than the palette (or before it): ignored", "tRNS");
            return;
        }
        for (uint32_t i = 0; i < length; i++) chunks->palette[i][3] = d[i];
        h->has_alpha = 1;
    } else if (h->color_type == 0 && length == 2) {
        chunks->has_key = 1;
        chunks->key[0] = (uint16_t)((d[0] << 8) | d[1]);
        if (h->bit_depth < 16) chunks->key[0] &= (uint16_t)((1u << h->bit_depth) - 1);
        h->has_alpha = 1;
    } else if (h->color_type == 2 && length == 6) {
        chunks->has_key = 1;
        for (int i = 0; i < 3; i++) {
            chunks->key[i] = (uint16_t)((d[2 * i] << 8) | d[2 * i + 1]);
            if (h->bit_depth < 16) chunks->key[i] &= 0xFF;
        }
        h->has_alpha = 1;
    } else {
        warn(chunks, "invalid %s chunk for this colour type: ignored", "tRNS");
    }
}

static int read_plte(const uint8_t *d, uint32_t length, vspng_chunks *chunks, char *errbuf, size_t errbuf_len) {
    const vspng_header *h = &chunks->header;
    if (h->color_type != 3) {
        // A suggested palette of an RGB image, or a stray one in a grey image: not needed.
        if (h->color_type == 0 || h->color_type == 4) warn(chunks, "%s chunk in a grey image: ignored", "PLTE");
        return VSPNG_OK;
    }
    if (chunks->palette_size != 0) {
        vspng_message(errbuf, errbuf_len, "duplicate PLTE chunk");
        return VSPNG_CORRUPT;
    }
    uint32_t entries = length / 3;
    if (length % 3 != 0 || entries == 0 || entries > 256 || entries > (1u << h->bit_depth)) {
        vspng_message(errbuf, errbuf_len, "invalid PLTE chunk (%u bytes for a %d-bit palette image)", length, h->bit_depth);
        return VSPNG_CORRUPT;
    }
    for (uint32_t i = 0; i < entries; i++) {
        chunks->palette[i][0] = d[3 * i];
        chunks->palette[i][1] = d[3 * i + 1];
        chunks->palette[i][2] = d[3 * i + 2];
    }
    chunks->palette_size = (int)entries;
    return VSPNG_OK;
}

static void remember(const uint8_t **span, size_t *span_size, const uint8_t *d, uint32_t length) {
    if (*span == NULL) {
        *span = d;
        *span_size = length;
    }
}

int vspng_walk(const uint8_t *data, size_t size, int until_image_data, vspng_chunks *chunks,
               char *errbuf, size_t errbuf_len) {
    memset(chunks, 0, sizeof *chunks);
    for (int i = 0; i < 256; i++) chunks->palette[i][3] = 255;
    if (data == NULL || size < 8) {
        if (data != NULL && memcmp(data, signature, size) == 0) {
            vspng_message(errbuf, errbuf_len, "file ends inside the PNG signature (%zu bytes; truncated)", size);
            return VSPNG_TRUNCATED;
        }
        vspng_message(errbuf, errbuf_len, "not a PNG file (%zu bytes, no PNG signature)", size);
        return VSPNG_CORRUPT;
    }
    if (memcmp(data, signature, 8) != 0) {
        vspng_message(errbuf, errbuf_len, "not a PNG file: the 8-byte signature is wrong "
                      "(damaged, or mangled by a text-mode transfer)");
        return VSPNG_CORRUPT;
    }
    // phase 0: before the image data; 1: in the first IDAT run; 2: after it.
    int phase = 0, have_header = 0;
    size_t pos = 8;
    for (;;) {
        const char *where = phase == 0 ? "before the image data" : "after the image data";
        if (size - pos < 12) {
            // The file ends at or inside a chunk header or a chunk.
            if (!have_header) {
                vspng_message(errbuf, errbuf_len, "file ends before the IHDR chunk is complete (truncated)");
                return VSPNG_TRUNCATED;
            }
            if (phase == 0) {
                vspng_message(errbuf, errbuf_len, "file ends %s (truncated: no complete IDAT chunk)", where);
                return VSPNG_TRUNCATED;
            }
            if (phase == 1 && size - pos >= 8 && memcmp(data + pos + 4, "IDAT", 4) == 0) {
                // A last IDAT whose CRC is cut: its data may still complete the image.
                uint32_t length = vspng_be32(data + pos);
                size_t available = size - pos - 8;
                chunks->idat_chunks++;
                chunks->idat_bytes += length < available ? length : available;
            }
            if (phase == 1) chunks->cut_in_image_data = 1;
            chunks->ending = VSPNG_DAMAGED_AFTER_DATA;
            vspng_message(chunks->ending_reason, sizeof chunks->ending_reason,
                          pos == size ? "the file ends before IEND" : "the file ends inside a chunk before IEND");
            return VSPNG_OK;
        }
        uint32_t length = vspng_be32(data + pos);
        const uint8_t *type = data + pos + 4;
        const uint8_t *body = data + pos + 8;
        char name[5] = {0};
        for (int i = 0; i < 4; i++) name[i] = is_letter(type[i]) ? (char)type[i] : '?';
        if (length > 0x7FFFFFFFu || !is_letter(type[0]) || !is_letter(type[1]) || !is_letter(type[2]) || !is_letter(type[3])) {
            if (phase == 2) {
                chunks->ending = VSPNG_DAMAGED_AFTER_DATA;
                vspng_message(chunks->ending_reason, sizeof chunks->ending_reason, "invalid chunk after the image data");
                return VSPNG_OK;
            }
            vspng_message(errbuf, errbuf_len, "invalid chunk at byte %zu (type '%s', length %u)", pos, name, length);
            return VSPNG_CORRUPT;
        }
        size_t available = size - pos - 8;
        if ((size_t)length + 4 > available) {
            if (phase <= 1 && is_type(type, "IDAT") && have_header) {
                if (phase == 0) { phase = 1; chunks->idat_start = pos; }
                chunks->idat_chunks++;
                chunks->idat_bytes += length < available ? length : available;
                chunks->cut_in_image_data = 1;
                chunks->ending = VSPNG_DAMAGED_AFTER_DATA;
                vspng_message(chunks->ending_reason, sizeof chunks->ending_reason, "the file ends inside an IDAT chunk");
                return VSPNG_OK;
            }
            if (phase == 0 || !have_header) {
                vspng_message(errbuf, errbuf_len, "file ends inside the %s chunk %s (truncated)", name, where);
                return VSPNG_TRUNCATED;
            }
            chunks->ending = VSPNG_DAMAGED_AFTER_DATA;
            vspng_message(chunks->ending_reason, sizeof chunks->ending_reason, "the file ends inside the %s chunk", name);
            return VSPNG_OK;
        }
        uint32_t stored = vspng_be32(body + length);
        if (libdeflate_crc32(0, type, (size_t)length + 4) != stored) {
            if (!is_critical(type)) {
                warn(chunks, "CRC error in the %s chunk: chunk ignored", name);
                pos += (size_t)length + 12;
                continue;
            }
            if (phase == 2 || (phase == 1 && !is_type(type, "IDAT"))) {
                chunks->ending = VSPNG_DAMAGED_AFTER_DATA;
                vspng_message(chunks->ending_reason, sizeof chunks->ending_reason, "CRC error in the %s chunk", name);
                return VSPNG_OK;
            }
            vspng_message(errbuf, errbuf_len, "CRC error in the %s chunk (damaged file)", name);
            return VSPNG_CORRUPT;
        }
        if (!have_header) {
            if (!is_type(type, "IHDR")) {
                vspng_message(errbuf, errbuf_len, "the first chunk is %s, not IHDR", name);
                return VSPNG_CORRUPT;
            }
            int status = read_ihdr(body, length, &chunks->header, errbuf, errbuf_len);
            if (status != VSPNG_OK) return status;
            have_header = 1;
        } else if (is_type(type, "IDAT")) {
            if (phase == 0) {
                if (chunks->header.color_type == 3 && chunks->palette_size == 0) {
                    vspng_message(errbuf, errbuf_len, "palette image without a PLTE chunk before its image data");
                    return VSPNG_CORRUPT;
                }
                phase = 1;
                chunks->idat_start = pos;
                if (until_image_data) return VSPNG_OK;
            }
            if (phase == 1) {
                chunks->idat_chunks++;
                chunks->idat_bytes += length;
            } else {
                warn(chunks, "%s chunk after other chunks that follow the image data: ignored", "IDAT");
            }
        } else {
            if (phase == 1) phase = 2;
            if (is_type(type, "IEND")) {
                if (phase == 0) {
                    vspng_message(errbuf, errbuf_len, "no IDAT chunk: the file has no image data");
                    return VSPNG_CORRUPT;
                }
                chunks->ending = VSPNG_OK;
                return VSPNG_OK;
            } else if (is_type(type, "IHDR")) {
                if (phase == 2) { pos += (size_t)length + 12; continue; }
                vspng_message(errbuf, errbuf_len, "a second IHDR chunk");
                return VSPNG_CORRUPT;
            } else if (is_type(type, "PLTE")) {
                if (phase == 0) {
                    int status = read_plte(body, length, chunks, errbuf, errbuf_len);
                    if (status != VSPNG_OK) return status;
                }
            } else if (phase == 0) {
                if (is_type(type, "tRNS")) read_trns(body, length, chunks);
                else if (is_type(type, "iCCP")) remember(&chunks->iccp, &chunks->iccp_size, body, length);
                else if (is_type(type, "sRGB")) remember(&chunks->srgb, &chunks->srgb_size, body, length);
                else if (is_type(type, "gAMA")) remember(&chunks->gama, &chunks->gama_size, body, length);
                else if (is_type(type, "cHRM")) remember(&chunks->chrm, &chunks->chrm_size, body, length);
                else if (is_type(type, "eXIf")) remember(&chunks->exif, &chunks->exif_size, body, length);
                else if (is_critical(type)) {
                    vspng_message(errbuf, errbuf_len, "unknown critical chunk %s", name);
                    return VSPNG_CORRUPT;
                }
            } else if (is_critical(type)) {
                chunks->ending = VSPNG_DAMAGED_AFTER_DATA;
                vspng_message(chunks->ending_reason, sizeof chunks->ending_reason,
                              "unknown critical chunk %s after the image data", name);
                return VSPNG_OK;
            }
        }
        pos += (size_t)length + 12;
    }
}

int vspng_read_header(const uint8_t *data, size_t size, vspng_header *header, char *errbuf, size_t errbuf_len) {
    vspng_chunks chunks;
    int status = vspng_walk(data, size, 1, &chunks, errbuf, errbuf_len);
    if (status == VSPNG_OK && header != NULL) *header = chunks.header;
    return status;
}
