// PNG row filters, both ways. Reversing sub, average and Paeth carries a
// dependency from pixel to pixel, so the compiler cannot vectorise them
// across a row; for 3- and 4-byte pixels (8-bit RGB and RGBA, most photos)
// they run one pixel per SSE2 register instead of one byte at a time (each
// kernel inlined with its pixel size a constant, so loads are single moves).

#include "PNGInternal.h"

#include <stdlib.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#define VSPNG_SSE2 1
#endif

static inline uint8_t paeth(int a, int b, int c) {
    int pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - 2 * c);
    return (uint8_t)((pa <= pb && pa <= pc) ? a : (pb <= pc ? b : c));
}

#if VSPNG_SSE2
static inline __attribute__((always_inline)) __m128i load_pixel(const uint8_t *p, int bpp) {
    uint32_t v = 0;
    memcpy(&v, p, (size_t)bpp);
    return _mm_cvtsi32_si128((int)v);
}

static inline __attribute__((always_inline)) void store_pixel(uint8_t *p, __m128i x, int bpp) {
    uint32_t v = (uint32_t)_mm_cvtsi128_si32(x);
    memcpy(p, &v, (size_t)bpp);
}

static inline __attribute__((always_inline)) void unsub_simd(uint8_t *row, const uint8_t *f, size_t length, int bpp) {
    __m128i a = _mm_setzero_si128();
    size_t i = 0;
    for (; i + (size_t)bpp <= length; i += (size_t)bpp) {
        a = _mm_add_epi8(a, load_pixel(f + i, bpp));
        store_pixel(row + i, a, bpp);
    }
}

static inline __attribute__((always_inline)) void unaverage_simd(uint8_t *row, const uint8_t *f, const uint8_t *prior, size_t length, int bpp) {
    const __m128i one = _mm_set1_epi8(1);
    __m128i a = _mm_setzero_si128();
    for (size_t i = 0; i + (size_t)bpp <= length; i += (size_t)bpp) {
        __m128i b = load_pixel(prior + i, bpp);
        // floor((a + b) / 2): pavgb rounds up, so take back the carry of odd sums.
        __m128i average = _mm_sub_epi8(_mm_avg_epu8(a, b), _mm_and_si128(_mm_xor_si128(a, b), one));
        a = _mm_add_epi8(load_pixel(f + i, bpp), average);
        store_pixel(row + i, a, bpp);
    }
}

static inline __m128i abs16(__m128i x) { return _mm_max_epi16(x, _mm_sub_epi16(_mm_setzero_si128(), x)); }

static inline __attribute__((always_inline)) void unpaeth_simd(uint8_t *row, const uint8_t *f, const uint8_t *prior, size_t length, int bpp) {
    const __m128i zero = _mm_setzero_si128();
    __m128i a = zero, c = zero;  // left and upper-left pixels, 16-bit lanes
    for (size_t i = 0; i + (size_t)bpp <= length; i += (size_t)bpp) {
        __m128i b = _mm_unpacklo_epi8(load_pixel(prior + i, bpp), zero);
        // pa = |b - c| does not depend on the pixel to the left; the chain through `a`
        // is kept short: pb, pc, two compares and two selects (ties prefer a, then b).
        __m128i bc = _mm_sub_epi16(b, c), ac = _mm_sub_epi16(a, c);
        __m128i pa = abs16(bc), pb = abs16(ac), pc = abs16(_mm_add_epi16(bc, ac));
        __m128i b_wins = _mm_cmplt_epi16(pb, pa);
        __m128i nearer = _mm_or_si128(_mm_and_si128(b_wins, b), _mm_andnot_si128(b_wins, a));
        __m128i c_wins = _mm_cmplt_epi16(pc, _mm_min_epi16(pa, pb));
        __m128i predicted = _mm_or_si128(_mm_and_si128(c_wins, c), _mm_andnot_si128(c_wins, nearer));
        __m128i x = _mm_add_epi8(load_pixel(f + i, bpp), _mm_packus_epi16(predicted, zero));
        store_pixel(row + i, x, bpp);
        a = _mm_unpacklo_epi8(x, zero);
        c = b;
    }
}
#endif

int vspng_unfilter_row(int filter, uint8_t *row, const uint8_t *f, const uint8_t *prior, size_t length, int bpp) {
    size_t stride = (size_t)bpp;
    switch (filter) {
    case 0:
        memcpy(row, f, length);
        return 0;
    case 1:
#if VSPNG_SSE2
        if (bpp == 4 && length % 4 == 0) { unsub_simd(row, f, length, 4); return 0; }
        if (bpp == 3 && length % 3 == 0) { unsub_simd(row, f, length, 3); return 0; }
#endif
        for (size_t i = 0; i < length && i < stride; i++) row[i] = f[i];
        for (size_t i = stride; i < length; i++) row[i] = (uint8_t)(f[i] + row[i - stride]);
        return 0;
    case 2:
        for (size_t i = 0; i < length; i++) row[i] = (uint8_t)(f[i] + prior[i]);
        return 0;
    case 3:
#if VSPNG_SSE2
        if (bpp == 4 && length % 4 == 0) { unaverage_simd(row, f, prior, length, 4); return 0; }
        if (bpp == 3 && length % 3 == 0) { unaverage_simd(row, f, prior, length, 3); return 0; }
#endif
        for (size_t i = 0; i < length && i < stride; i++) row[i] = (uint8_t)(f[i] + (prior[i] >> 1));
        for (size_t i = stride; i < length; i++) row[i] = (uint8_t)(f[i] + ((row[i - stride] + prior[i]) >> 1));
        return 0;
    case 4:
#if VSPNG_SSE2
        if (bpp == 4 && length % 4 == 0) { unpaeth_simd(row, f, prior, length, 4); return 0; }
        if (bpp == 3 && length % 3 == 0) { unpaeth_simd(row, f, prior, length, 3); return 0; }
#endif
        for (size_t i = 0; i < length && i < stride; i++) row[i] = (uint8_t)(f[i] + prior[i]);
        for (size_t i = stride; i < length; i++)
            row[i] = (uint8_t)(f[i] + paeth(row[i - stride], prior[i], prior[i - stride]));
        return 0;
    default:
        return -1;
    }
}

void vspng_filter_row(int filter, uint8_t *out, const uint8_t *row, const uint8_t *prior, size_t length, int bpp) {
    size_t stride = (size_t)bpp, head = length < stride ? length : stride;
    switch (filter) {
    case 1:
        for (size_t i = 0; i < head; i++) out[i] = row[i];
        for (size_t i = stride; i < length; i++) out[i] = (uint8_t)(row[i] - row[i - stride]);
        break;
    case 2:
        for (size_t i = 0; i < length; i++) out[i] = (uint8_t)(row[i] - prior[i]);
        break;
    case 3:
        for (size_t i = 0; i < head; i++) out[i] = (uint8_t)(row[i] - (prior[i] >> 1));
        for (size_t i = stride; i < length; i++) out[i] = (uint8_t)(row[i] - ((row[i - stride] + prior[i]) >> 1));
        break;
    case 4:
        for (size_t i = 0; i < head; i++) out[i] = (uint8_t)(row[i] - prior[i]);
        for (size_t i = stride; i < length; i++) {
            // Branch-free Paeth, so the loop vectorises (no dependency on earlier outputs).
            int a = row[i - stride], b = prior[i], c = prior[i - stride];
            int pa = abs(b - c), pb = abs(a - c), pc = abs(a + b - 2 * c);
            int p = (pb < pa) ? b : a;
            int pp = (pb < pa) ? pb : pa;
            p = (pc < pp) ? c : p;
            out[i] = (uint8_t)(row[i] - p);
        }
        break;
    default:
        memcpy(out, row, length);
        break;
    }
}
