// The space the graph measures in: each vector as Int8 values scaled so its
// largest magnitude is 127, followed by the inverse of the rounded row's
// length (a float), compared by cosine (distance = 1 − cos). The rounding is
// SearchEngine's QuantizedMatrix rule. A quarter of a float row's bytes, and
// the integer dot product runs 16 values per AVX2 instruction pair; the
// kernel is chosen once, by what this CPU has.
#pragma once

#include <hnswlib/hnswlib.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <immintrin.h>

namespace vshnsw {

/// Σ a[i]·b[i] over `n` values (a multiple of 16), any CPU.
inline int32_t dotPortable(const int8_t *a, const int8_t *b, size_t n) {
    int32_t sum = 0;
    for (size_t i = 0; i < n; i++) sum += int32_t(a[i]) * int32_t(b[i]);
    return sum;
}

/// Σ a[i]·b[i] over `n` values (a multiple of 16): sign-extend 16 values to
/// 16-bit lanes, multiply-add pairs into 32-bit lanes, two accumulators.
__attribute__((target("avx2"))) inline int32_t dotAVX2(const int8_t *a, const int8_t *b, size_t n) {
    __m256i even = _mm256_setzero_si256(), odd = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        const __m256i a0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(a + i)));
        const __m256i b0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(b + i)));
        const __m256i a1 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(a + i + 16)));
        const __m256i b1 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(b + i + 16)));
        even = _mm256_add_epi32(even, _mm256_madd_epi16(a0, b0));
        odd = _mm256_add_epi32(odd, _mm256_madd_epi16(a1, b1));
    }
    if (i < n) {  // 16 left
        const __m256i a0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(a + i)));
        const __m256i b0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i *>(b + i)));
        even = _mm256_add_epi32(even, _mm256_madd_epi16(a0, b0));
    }
    const __m256i both = _mm256_add_epi32(even, odd);
    __m128i sum = _mm_add_epi32(_mm256_castsi256_si128(both), _mm256_extracti128_si256(both, 1));
    sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, 0x4E));
    sum = _mm_add_epi32(sum, _mm_shuffle_epi32(sum, 0xB1));
    return _mm_cvtsi128_si32(sum);
}

/// Σ q[i]·b[i] of a float query and an Int8 row over `n` values (a multiple of 16), any CPU.
inline float queryDotPortable(const float *q, const int8_t *b, size_t n) {
    float sum = 0;
    for (size_t i = 0; i < n; i++) sum += q[i] * float(b[i]);
    return sum;
}

/// Σ q[i]·b[i] over `n` values (a multiple of 16): 8 Int8s widened to floats a step, fused multiply-add.
__attribute__((target("avx2,fma"))) inline float queryDotAVX2(const float *q, const int8_t *b, size_t n) {
    __m256 even = _mm256_setzero_ps(), odd = _mm256_setzero_ps();
    for (size_t i = 0; i < n; i += 16) {
        const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i *>(b + i));
        const __m256 low = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(bytes));
        const __m256 high = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(bytes, 8)));
        even = _mm256_fmadd_ps(_mm256_loadu_ps(q + i), low, even);
        odd = _mm256_fmadd_ps(_mm256_loadu_ps(q + i + 8), high, odd);
    }
    const __m256 both = _mm256_add_ps(even, odd);
    __m128 sum = _mm_add_ps(_mm256_castps256_ps128(both), _mm256_extractf128_ps(both, 1));
    sum = _mm_add_ps(sum, _mm_movehl_ps(sum, sum));
    sum = _mm_add_ss(sum, _mm_shuffle_ps(sum, sum, 0x55));
    return _mm_cvtss_f32(sum);
}

/// The distance of two rows, or of a query and a row. A query is not rounded:
/// its "row" holds a pointer to its float values and, where a row keeps its
/// positive inverse length, minus the query's (``Int8Space::queryRow``).
/// Searches always pass the query first; rows linked while building are rows.
template <int32_t (*Dot)(const int8_t *, const int8_t *, size_t), float (*QueryDot)(const float *, const int8_t *, size_t)>
float cosineDistance(const void *a, const void *b, const void *parameter) {
    const size_t n = *static_cast<const size_t *>(parameter);
    const auto *x = static_cast<const int8_t *>(a), *y = static_cast<const int8_t *>(b);
    float inverseX, inverseY;
    memcpy(&inverseX, x + n, sizeof(float));
    memcpy(&inverseY, y + n, sizeof(float));
    if (inverseX < 0) {
        const float *query;
        memcpy(&query, x, sizeof(query));
        return 1.0f + QueryDot(query, y, n) * inverseX * inverseY;
    }
    return 1.0f - float(Dot(x, y, n)) * inverseX * inverseY;
}

class Int8Space : public hnswlib::SpaceInterface<float> {
public:
    explicit Int8Space(size_t dimensions) : dimensions_(dimensions) {}

    size_t get_data_size() override { return rowSize(); }
    hnswlib::DISTFUNC<float> get_dist_func() override {
        return usesAVX2() ? cosineDistance<dotAVX2, queryDotAVX2> : cosineDistance<dotPortable, queryDotPortable>;
    }
    void *get_dist_func_param() override { return &dimensions_; }
    size_t dimensions() const { return dimensions_; }
    /// Bytes of one row: the values and the inverse length.
    size_t rowSize() const { return dimensions_ + sizeof(float); }

    static bool usesAVX2() {
        static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        return has;
    }
    static const char *kernelName() { return usesAVX2() ? "avx2" : "portable"; }

    /// Whether a vector can be rounded: finite, and not all zeros.
    static bool roundable(const float *vector, size_t n) {
        float largest = 0;
        for (size_t i = 0; i < n; i++) {
            if (!std::isfinite(vector[i])) return false;
            largest = std::max(largest, std::fabs(vector[i]));
        }
        return largest > 0;
    }

    /// Writes a roundable vector's row: its Int8 values (largest magnitude
    /// 127, rounded half away from zero) and 1 / their length.
    static void round(const float *vector, size_t n, unsigned char *row) {
        float largest = 0;
        for (size_t i = 0; i < n; i++) largest = std::max(largest, std::fabs(vector[i]));
        const float scale = 127.0f / largest;
        int32_t squared = 0;
        auto *values = reinterpret_cast<int8_t *>(row);
        for (size_t i = 0; i < n; i++) {
            values[i] = static_cast<int8_t>(std::lround(vector[i] * scale));
            squared += int32_t(values[i]) * int32_t(values[i]);
        }
        const float inverse = 1.0f / std::sqrt(static_cast<float>(squared));
        memcpy(row + n, &inverse, sizeof(float));
    }

    /// Writes the "row" a search passes for a float query (see cosineDistance):
    /// a pointer to `query`, which must outlive the search, and minus its inverse length.
    static void queryRow(const float *query, size_t n, unsigned char *row) {
        float squared = 0;
        for (size_t i = 0; i < n; i++) squared += query[i] * query[i];
        const float negativeInverse = -1.0f / std::sqrt(squared);
        memset(row, 0, n);
        memcpy(row, &query, sizeof(query));
        memcpy(row + n, &negativeInverse, sizeof(float));
    }

private:
    size_t dimensions_;
};

}  // namespace vshnsw
