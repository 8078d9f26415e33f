// vsearch's shim for libpng. libpng's classic API (needed to choose the zlib
// level, strategy and row filters when encoding) reports errors by longjmp,
// which must never cross a Swift frame; this shim owns the setjmp and turns
// every libpng failure into a return code and a message.
#include "CLibPNGReference.h"

#include <png.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    unsigned char *data;
    size_t size;
    size_t capacity;
    char *errbuf;
    size_t errbuf_len;
} vs_png_sink;

static void vs_png_error(png_structp png, png_const_charp message) {
    vs_png_sink *sink = (vs_png_sink *)png_get_error_ptr(png);
    if (sink != NULL && sink->errbuf != NULL && sink->errbuf_len > 0) {
        strncpy(sink->errbuf, message ? message : "unknown libpng error", sink->errbuf_len - 1);
        sink->errbuf[sink->errbuf_len - 1] = '\0';
    }
    png_longjmp(png, 1);
}

static void vs_png_warning(png_structp png, png_const_charp message) {
    (void)png;
    (void)message; // Warnings are not errors when writing; never print.
}

static void vs_png_write(png_structp png, png_bytep bytes, png_size_t length) {
    vs_png_sink *sink = (vs_png_sink *)png_get_io_ptr(png);
    if (length > SIZE_MAX - sink->size) {
        png_error(png, "PNG output larger than addressable memory");
    }
    size_t needed = sink->size + length;
    if (needed > sink->capacity) {
        size_t capacity = sink->capacity ? sink->capacity : 65536;
        while (capacity < needed) {
            if (capacity > SIZE_MAX / 2) { capacity = needed; break; }
            capacity *= 2;
        }
        unsigned char *grown = (unsigned char *)realloc(sink->data, capacity);
        if (grown == NULL) {
            png_error(png, "out of memory while writing PNG");
        }
        sink->data = grown;
        sink->capacity = capacity;
    }
    memcpy(sink->data + sink->size, bytes, length);
    sink->size = needed;
}

static void vs_png_flush(png_structp png) { (void)png; }

static void vs_set_error(char *errbuf, size_t errbuf_len, const char *message) {
    if (errbuf != NULL && errbuf_len > 0) {
        strncpy(errbuf, message, errbuf_len - 1);
        errbuf[errbuf_len - 1] = '\0';
    }
}

int vs_png_encode(const unsigned char *pixels, uint32_t width, uint32_t height,
                  size_t stride, int has_alpha,
                  const vs_png_write_options *options,
                  unsigned char **out, size_t *out_size,
                  char *errbuf, size_t errbuf_len) {
    if (out == NULL || out_size == NULL || pixels == NULL || options == NULL) {
        vs_set_error(errbuf, errbuf_len, "invalid arguments");
        return -1;
    }
    *out = NULL;
    *out_size = 0;
    if (width == 0 || height == 0 || stride < (size_t)width * 4) {
        vs_set_error(errbuf, errbuf_len, "invalid image dimensions");
        return -1;
    }

    vs_png_sink sink = {NULL, 0, 0, errbuf, errbuf_len};
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &sink, vs_png_error, vs_png_warning);
    if (png == NULL) {
        vs_set_error(errbuf, errbuf_len, "libpng could not create a write struct");
        return -1;
    }
    png_infop info = png_create_info_struct(png);
    if (info == NULL) {
        png_destroy_write_struct(&png, NULL);
        vs_set_error(errbuf, errbuf_len, "libpng could not create an info struct");
        return -1;
    }

    if (setjmp(png_jmpbuf(png))) {
        // Only `sink` (reached through a pointer libpng holds) changed since
        // setjmp; it lives in this frame and is read through memory.
        png_destroy_write_struct(&png, &info);
        free(sink.data);
        return -1;
    }

    png_set_write_fn(png, &sink, vs_png_write, vs_png_flush);
    png_set_IHDR(png, info, width, height, 8,
                 has_alpha ? PNG_COLOR_TYPE_RGB_ALPHA : PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    if (options->compression_level >= 0) {
        png_set_compression_level(png, options->compression_level);
    }
    if (options->strategy >= 0) {
        png_set_compression_strategy(png, options->strategy);
    }
    if (options->filters >= 0) {
        png_set_filter(png, PNG_FILTER_TYPE_BASE, options->filters);
    }
    png_set_benign_errors(png, 1);  // a profile libpng dislikes is written anyway, with a warning
    if (options->icc != NULL && options->icc_size > 0 && options->icc_size <= 0xFFFFFFFFu) {
        png_set_iCCP(png, info, "ICC profile", PNG_COMPRESSION_TYPE_BASE, options->icc, (png_uint_32)options->icc_size);
    }
    if (options->exif != NULL && options->exif_size > 0 && options->exif_size <= 0x7FFFFFFF) {
        png_set_eXIf_1(png, info, (png_uint_32)options->exif_size, (png_bytep)options->exif);
    }
    png_write_info(png, info);
    if (!has_alpha) {
        // Input rows carry a fourth (filler) byte after RGB; drop it.
        png_set_filler(png, 0, PNG_FILLER_AFTER);
    }
    for (uint32_t y = 0; y < height; y++) {
        png_write_row(png, (png_const_bytep)(pixels + (size_t)y * stride));
    }
    png_write_end(png, info);
    png_destroy_write_struct(&png, &info);

    *out = sink.data;
    *out_size = sink.size;
    return 0;
}

void vs_png_free(unsigned char *buffer) { free(buffer); }

// ---------------------------------------------------------------------------
// Reading

typedef struct {
    const unsigned char *data;
    size_t size;
    size_t offset;
    char *errbuf;
    size_t errbuf_len;
    int warnings;
    char *warnbuf;
    size_t warnbuf_len;
} vs_png_source;

static void vs_png_read_error(png_structp png, png_const_charp message) {
    vs_png_source *source = (vs_png_source *)png_get_error_ptr(png);
    vs_set_error(source->errbuf, source->errbuf_len, message ? message : "unknown libpng error");
    png_longjmp(png, 1);
}

static void vs_png_read_warning(png_structp png, png_const_charp message) {
    vs_png_source *source = (vs_png_source *)png_get_error_ptr(png);
    if (source->warnings++ == 0) {
        vs_set_error(source->warnbuf, source->warnbuf_len, message ? message : "unknown libpng warning");
    }
}

static void vs_png_read_bytes(png_structp png, png_bytep bytes, png_size_t length) {
    vs_png_source *source = (vs_png_source *)png_get_io_ptr(png);
    if (length > source->size - source->offset) {
        png_error(png, "unexpected end of file (truncated PNG)");
    }
    memcpy(bytes, source->data + source->offset, length);
    source->offset += length;
}

static png_structp vs_png_create_reader(vs_png_source *source, png_infop *info) {
    png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, source, vs_png_read_error, vs_png_read_warning);
    if (png == NULL) return NULL;
    *info = png_create_info_struct(png);
    if (*info == NULL) {
        png_destroy_read_struct(&png, NULL, NULL);
        return NULL;
    }
    png_set_read_fn(png, source, vs_png_read_bytes);
    // Explicit limits (Debian's defaults differ between builds): sides up to
    // 1,000,000 (vsearch's own ImageLimits are stricter and checked first),
    // at most 1000 cached ancillary chunks, at most 8 MB for one chunk.
    png_set_user_limits(png, 1000000, 1000000);
    png_set_chunk_cache_max(png, 1000);
    png_set_chunk_malloc_max(png, 8000000);
    return png;
}

int vs_png_read_info(const unsigned char *data, size_t size, vs_png_info *info,
                     char *errbuf, size_t errbuf_len) {
    if (data == NULL || info == NULL) {
        vs_set_error(errbuf, errbuf_len, "invalid arguments");
        return -1;
    }
    vs_png_source source = {data, size, 0, errbuf, errbuf_len, 0, NULL, 0};
    png_infop pnginfo = NULL;
    png_structp png = vs_png_create_reader(&source, &pnginfo);
    if (png == NULL) {
        vs_set_error(errbuf, errbuf_len, "libpng could not create a read struct");
        return -1;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &pnginfo, NULL);
        return -1;
    }
    png_read_info(png, pnginfo);
    info->width = png_get_image_width(png, pnginfo);
    info->height = png_get_image_height(png, pnginfo);
    info->bit_depth = png_get_bit_depth(png, pnginfo);
    info->color_type = png_get_color_type(png, pnginfo);
    info->interlaced = png_get_interlace_type(png, pnginfo) != PNG_INTERLACE_NONE;
    info->has_alpha = (info->color_type & PNG_COLOR_MASK_ALPHA) != 0 || png_get_valid(png, pnginfo, PNG_INFO_tRNS) != 0;
    png_destroy_read_struct(&png, &pnginfo, NULL);
    return 0;
}

static unsigned char *vs_copy(const unsigned char *bytes, size_t size) {
    if (bytes == NULL || size == 0) return NULL;
    unsigned char *copy = (unsigned char *)malloc(size);
    if (copy != NULL) memcpy(copy, bytes, size);
    return copy;
}

int vs_png_read_metadata(const unsigned char *data, size_t size, vs_png_metadata *metadata,
                         char *errbuf, size_t errbuf_len) {
    if (data == NULL || metadata == NULL) {
        vs_set_error(errbuf, errbuf_len, "invalid arguments");
        return -1;
    }
    memset(metadata, 0, sizeof(*metadata));
    vs_png_source source = {data, size, 0, errbuf, errbuf_len, 0, NULL, 0};
    png_infop pnginfo = NULL;
    png_structp png = vs_png_create_reader(&source, &pnginfo);
    if (png == NULL) {
        vs_set_error(errbuf, errbuf_len, "libpng could not create a read struct");
        return -1;
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_read_struct(&png, &pnginfo, NULL);
        vs_png_metadata_free(metadata);
        return -1;
    }
    png_read_info(png, pnginfo);
    png_charp name = NULL;
    int compression = 0;
    png_bytep profile = NULL;
    png_uint_32 profile_size = 0;
    if (png_get_iCCP(png, pnginfo, &name, &compression, &profile, &profile_size) != 0) {
        metadata->icc = vs_copy(profile, profile_size);
        metadata->icc_size = metadata->icc != NULL ? profile_size : 0;
    }
    int intent = 0;
    metadata->srgb = png_get_sRGB(png, pnginfo, &intent) != 0;
    double gamma = 0;
    if (png_get_gAMA(png, pnginfo, &gamma) != 0) metadata->gamma = gamma;
    double *c = metadata->chromaticities;
    metadata->has_chromaticities =
        png_get_cHRM(png, pnginfo, &c[0], &c[1], &c[2], &c[3], &c[4], &c[5], &c[6], &c[7]) != 0;
    png_bytep exif = NULL;
    png_uint_32 exif_size = 0;
    if (png_get_eXIf_1(png, pnginfo, &exif_size, &exif) != 0) {
        metadata->exif = vs_copy(exif, exif_size);
        metadata->exif_size = metadata->exif != NULL ? exif_size : 0;
    }
    png_destroy_read_struct(&png, &pnginfo, NULL);
    return 0;
}

void vs_png_metadata_free(vs_png_metadata *metadata) {
    if (metadata == NULL) return;
    free(metadata->icc);
    free(metadata->exif);
    metadata->icc = NULL;
    metadata->exif = NULL;
    metadata->icc_size = 0;
    metadata->exif_size = 0;
}

int vs_png_decode(const unsigned char *data, size_t size, unsigned char *out, size_t stride,
                  uint32_t width, uint32_t height, int sixteen_bit, int *warnings,
                  char *warnbuf, size_t warnbuf_len, char *errbuf, size_t errbuf_len) {
    size_t pixel_bytes = sixteen_bit ? 8 : 4;
    if (data == NULL || out == NULL || warnings == NULL || width == 0 || height == 0 || stride < (size_t)width * pixel_bytes) {
        vs_set_error(errbuf, errbuf_len, "invalid arguments");
        return VS_PNG_FAILED;
    }
    vs_png_source source = {data, size, 0, errbuf, errbuf_len, 0, warnbuf, warnbuf_len};
    png_infop info = NULL;
    png_structp png = vs_png_create_reader(&source, &info);
    if (png == NULL) {
        vs_set_error(errbuf, errbuf_len, "libpng could not create a read struct");
        return VS_PNG_FAILED;
    }
    // Read through `stage` after a longjmp; volatile so the compiler keeps it in memory.
    volatile int stage = 0;  // 0: header and image data, 1: after the image data
    png_bytep *volatile rows = NULL;
    if (setjmp(png_jmpbuf(png))) {
        int damaged_after_data = stage == 1;
        free((void *)rows);
        png_destroy_read_struct(&png, &info, NULL);
        *warnings = source.warnings;
        return damaged_after_data ? VS_PNG_DAMAGED_AFTER_DATA : VS_PNG_FAILED;
    }
    png_read_info(png, info);
    if (png_get_image_width(png, info) != width || png_get_image_height(png, info) != height) {
        png_error(png, "image size differs from the header read before");
    }
    int color_type = png_get_color_type(png, info);
    png_set_expand(png);            // palette -> RGB, gray < 8 bits -> 8, tRNS -> alpha
    if (sixteen_bit) {
        if (png_get_bit_depth(png, info) < 16) png_set_expand_16(png);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        png_set_swap(png);          // host order, as Little CMS reads 16-bit samples
#endif
    } else {
        png_set_scale_16(png);      // 16 -> 8 bits, rounded
    }
    if ((color_type & PNG_COLOR_MASK_COLOR) == 0) png_set_gray_to_rgb(png);
    if ((color_type & PNG_COLOR_MASK_ALPHA) == 0 && !png_get_valid(png, info, PNG_INFO_tRNS)) {
        png_set_filler(png, 0xFFFF, PNG_FILLER_AFTER);
    }
    int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);
    if (png_get_rowbytes(png, info) != (size_t)width * pixel_bytes) {
        png_error(png, "unexpected row layout after transformations");
    }
    rows = (png_bytep *)malloc(sizeof(png_bytep) * height);
    if (rows == NULL) png_error(png, "out of memory for row pointers");
    for (uint32_t y = 0; y < height; y++) rows[y] = out + (size_t)y * stride;
    for (int pass = 0; pass < passes; pass++) {
        png_read_rows(png, rows, NULL, height);
    }
    stage = 1;
    png_read_end(png, NULL);
    free((void *)rows);
    rows = NULL;
    png_destroy_read_struct(&png, &info, NULL);
    *warnings = source.warnings;
    return VS_PNG_OK;
}

const char *vs_png_runtime_version(void) { return png_get_libpng_ver(NULL); }
