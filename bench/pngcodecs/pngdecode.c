// Decode-only comparison of PNG decoders on the same files, in one process:
// vsearch's CPNGCodec (libdeflate), libpng 1.6 (through the tests' reference
// shim, as vsearch used it before issue 28) and libspng 0.7 (Debian). Each
// decodes every file to 8-bit RGBA rows REPS times; CPU seconds (getrusage)
// per decoder and a checksum of the pixels, which must agree.
#include <spng.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "CPNGCodec.h"
#include "CLibPNGReference.h"

static double cpu(void) {
    struct rusage u; getrusage(RUSAGE_SELF, &u);
    return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
}
static unsigned long sum(const unsigned char *p, size_t n) { unsigned long s = 0; for (size_t i = 0; i < n; i++) s = s * 31 + p[i]; return s; }

int main(int argc, char **argv) {
    int reps = atoi(argv[1]);
    double t[3] = {0}; unsigned long check[3] = {0};
    char err[256], warn[256];
    for (int f = 2; f < argc; f++) {
        FILE *fp = fopen(argv[f], "rb"); fseek(fp, 0, SEEK_END); size_t n = ftell(fp); rewind(fp);
        unsigned char *data = malloc(n); fread(data, 1, n, fp); fclose(fp);
        vspng_header h; vspng_read_header(data, n, &h, err, sizeof err);
        size_t stride = (size_t)h.width * 4, rows = stride * h.height;
        for (int r = 0; r < reps; r++) {
            int w;
            double s = cpu();
            size_t cap = vspng_decode_capacity(&h, stride);
            unsigned char *out = malloc(cap);
            if (vspng_decode(data, n, out, cap, stride, &h, 0, 0, &w, warn, sizeof warn, err, sizeof err) < 0) { printf("ours: %s\n", err); return 1; }
            t[0] += cpu() - s; if (r == 0) check[0] += sum(out, rows); free(out);
            s = cpu();
            out = malloc(rows);
            if (vs_png_decode(data, n, out, stride, h.width, h.height, 0, &w, warn, sizeof warn, err, sizeof err) == VS_PNG_FAILED) { printf("libpng: %s\n", err); return 1; }
            t[1] += cpu() - s; if (r == 0) check[1] += sum(out, rows); free(out);
            s = cpu();
            spng_ctx *ctx = spng_ctx_new(0);
            spng_set_png_buffer(ctx, data, n);
            // libspng checks CRCs by default, as the other two do.
            size_t size; spng_decoded_image_size(ctx, SPNG_FMT_RGBA8, &size);
            out = malloc(size);
            int e = spng_decode_image(ctx, out, size, SPNG_FMT_RGBA8, SPNG_DECODE_TRNS);
            spng_ctx_free(ctx);
            if (e) { printf("spng: %s\n", spng_strerror(e)); return 1; }
            t[2] += cpu() - s; if (r == 0) check[2] += sum(out, rows); free(out);
        }
        free(data);
    }
    printf("cpdecode reps %d: vsearch/libdeflate %.3f s, libpng %.3f s, libspng %.3f s; pixels agree: %s/%s\n",
           reps, t[0], t[1], t[2], check[0] == check[1] ? "libpng yes" : "libpng NO", check[0] == check[2] ? "libspng yes" : "libspng NO");
    return 0;
}
