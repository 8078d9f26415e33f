// The one C file in vsearch. libpng's classic API (needed to choose the zlib
// level, strategy and row filters when encoding) reports errors by longjmp,
// which must never cross a Swift frame; this shim owns the setjmp and turns
// every libpng failure into a return code and a message.
#include "CPNGShim.h"

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

const char *vs_png_runtime_version(void) { return png_get_libpng_ver(NULL); }
