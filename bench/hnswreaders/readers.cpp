// The HNSW graph's bookkeeping readers (issue 41: they now take hnswlib's own locks), timed on one saved
// 100k graph of 112-dim vectors: load (with its checks), mismatches over every row, presence of every row, labels.
// CPU seconds of the calling thread, median of 5. Usage: readers GRAPH-PATH NAME (the graph is built on the first run).
#include "CHNSWIndex.h"
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>
#include <algorithm>
#include <random>
#include <string>
static double cpu() { timespec t; clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
int main(int argc, char **argv) {
    if (argc < 3) { fputs("usage: readers GRAPH-PATH NAME\n", stderr); return 2; }
    const size_t n = 100000, d = 112;
    std::vector<float> v(n * d);
    std::mt19937 rng(7); std::normal_distribution<float> g;
    for (auto &x : v) x = g(rng);
    std::vector<uint64_t> labels(n);
    for (size_t i = 0; i < n; i++) labels[i] = i;
    char msg[256];
    vshnsw_index *idx = nullptr;
    const char *path = argv[1];
    std::string meta = std::string(argv[1]) + ".meta";
    FILE *f = fopen(meta.c_str(), "r");
    unsigned long long bytes; unsigned crc;
    if (!f) {
        vshnsw_create(d, n, 16, 128, 100, &idx, msg, sizeof msg);
        if (vshnsw_add(idx, labels.data(), v.data(), n, 2, nullptr, nullptr, msg, sizeof msg) != VSHNSW_OK) { puts(msg); return 1; }
        uint64_t b; uint32_t c;
        vshnsw_save(idx, path, &b, &c, msg, sizeof msg);
        f = fopen(meta.c_str(), "w"); fprintf(f, "%llu %u", (unsigned long long)b, c); fclose(f);
        vshnsw_free(idx);
        f = fopen(meta.c_str(), "r");
    }
    if (fscanf(f, "%llu %u", &bytes, &crc) != 2) return 1;
    fclose(f);
    std::vector<double> load, mism, pres, labs;
    for (int r = 0; r < 5; r++) {
        double t0 = cpu();
        if (vshnsw_load(path, d, bytes, crc, n, &idx, msg, sizeof msg) != VSHNSW_OK) { puts(msg); return 1; }
        double t1 = cpu();
        size_t m = vshnsw_mismatches(idx, labels.data(), v.data(), n);
        double t2 = cpu();
        size_t same = 0;
        for (size_t i = 0; i < n; i++) same += vshnsw_compare(idx, i, v.data() + i * d) == VSHNSW_SAME;
        double t3 = cpu();
        std::vector<uint64_t> out(n);
        size_t got = vshnsw_labels(idx, out.data(), n);
        double t4 = cpu();
        if (m != 0 || same != n || got != n) { printf("wrong: %zu %zu %zu\n", m, same, got); return 1; }
        load.push_back(t1 - t0); mism.push_back(t2 - t1); pres.push_back(t3 - t2); labs.push_back(t4 - t3);
        vshnsw_free(idx);
    }
    auto med = [](std::vector<double> x) { std::sort(x.begin(), x.end()); return x[x.size() / 2]; };
    printf("%s: load %.4f s, mismatches(100k) %.4f s, presence x100k %.4f s, labels %.4f s\n", argv[2],
           med(load), med(mism), med(pres), med(labs));
}
