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

/// Frees a buffer returned by vs_png_encode.
void vs_png_free(unsigned char *buffer);

/// The libpng version string the process linked at run time.
const char *vs_png_runtime_version(void);

#endif
