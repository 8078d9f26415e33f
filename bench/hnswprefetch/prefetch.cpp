// The HNSW graph's add and search with and without hnswlib's SSE prefetches (issue 41: a sanitizer build turns them
// off, since one of them reads past a link list's malloc'd size under AddressSanitizer). One thread, pinned by run.sh: the add of N random vectors
// (seeded, so both builds make the same graph), then Q searches at ef 40 and at ef 100. CPU seconds of the thread,
// median of 3 searches passes; a checksum of every label found shows both builds give the same answers.
// Usage: prefetch N DIMENSIONS NAME
#include "CHNSWIndex.h"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <vector>
static double cpu() { timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(int argc, char **argv) {
    if (argc < 4) { fputs("usage: prefetch N DIMENSIONS NAME\n", stderr); return 2; }
    const size_t n = std::strtoul(argv[1], nullptr, 10), d = std::strtoul(argv[2], nullptr, 10), q = 2000;
    std::vector<float> v(n * d), queries(q * d);
    std::mt19937 rng(7); std::normal_distribution<float> g;
    for (auto &x : v) x = g(rng);
    for (auto &x : queries) x = g(rng);
    std::vector<uint64_t> labels(n);
    for (size_t i = 0; i < n; i++) labels[i] = i;
    char message[256];
    vshnsw_index *index = nullptr;
    if (vshnsw_create(d, n, 16, 128, 100, &index, message, sizeof message) != VSHNSW_OK) { puts(message); return 1; }
    double start = cpu();
    if (vshnsw_add(index, labels.data(), v.data(), n, 1, nullptr, nullptr, message, sizeof message) != VSHNSW_OK) { puts(message); return 1; }
    const double add = cpu() - start;
    printf("%-28s n=%zu d=%zu  add %.3f s", argv[3], n, d, add);
    for (size_t ef : {40, 100}) {
        std::vector<uint64_t> found(ef);
        std::vector<double> passes;
        uint64_t checksum = 0;
        for (int pass = 0; pass < 3; pass++) {
            checksum = 0;
            start = cpu();
            for (size_t i = 0; i < q; i++) {
                const size_t k = vshnsw_search(index, &queries[i * d], ef, found.data(), nullptr, ef);
                for (size_t j = 0; j < k; j++) checksum = checksum * 1000003 + found[j];
            }
            passes.push_back(cpu() - start);
        }
        std::sort(passes.begin(), passes.end());
        printf("  ef%zu %.1f us/query (checksum %016llx)", ef, passes[1] / q * 1e6, (unsigned long long)checksum);
    }
    puts("");
    vshnsw_free(index);
}
