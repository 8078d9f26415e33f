// The HNSW graph behind CHNSWIndex.h: hnswlib's HierarchicalNSW with a space
// of Int8 rows compared by cosine (Int8Space.hpp), its graph walk for
// search, and a file writer with a checksum and fsync around hnswlib's format.
// hnswlib's own SIMD is only its prefetches here (the distances are Int8Space's), and one of them
// reads past a link list: with SSE on, the graph walk of an add (searchBaseLayer, hnswalg.h:214-215,
// and updatePoint's, 941) loads the id after a node's last neighbour to prefetch it: for a node's
// full top-level list, the 4 bytes after the list, 3 of them past the `4(m+1)·level + 1` bytes malloc
// was asked for (upstream: hnswlib's issues #107 and #578; its fix, pull request #459, not merged).
// glibc's malloc always hands out those bytes: a chunk's usable size is a multiple of 8, and the
// next multiple of 8 above `4(m+1)·level + 1` is at least `4(m+1)·level + 4`, so the read stays
// inside the chunk. AddressSanitizer's allocator gives exactly what was asked and stops there
// (docs/fuzzing.md). The prefetches are worth 14-20 % of a search (bench/hnswprefetch), so they stay
// in the product, and only a sanitizer build turns hnswlib's manual vectorization off.
#if defined(__SANITIZE_ADDRESS__)
#define NO_MANUAL_VECTORIZATION
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define NO_MANUAL_VECTORIZATION
#endif
#endif
#include "CHNSWIndex.h"
#include "Int8Space.hpp"

#include <hnswlib/hnswlib.h>
#include <libdeflate.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <thread>
#include <unistd.h>
#include <vector>

using Graph = hnswlib::HierarchicalNSW<float>;

struct vshnsw_index {
    vshnsw::Int8Space space;
    Graph *graph = nullptr;
    /// Serialises writers: add, remove, save (and the memory estimate, which reads every node's level).
    mutable std::mutex writer;
    /// Shared by readers and adds; exclusive while hnswlib reallocates its arrays (resizeIndex).
    mutable std::shared_mutex layout;
    // Bookkeeping readers (count, labels, compare, mismatches) run beside an add's threads, so they take the
    // locks hnswlib's addPoint takes for what they read: `cur_element_count_guard_` for the label table and
    // the counts (held there while a label is looked up or inserted), a node's `link_list_update_locks_`
    // entry for its vector and deleted mark (held by addPoint for the whole insert or update of that node).

    explicit vshnsw_index(size_t dimensions) : space(dimensions) {}
    ~vshnsw_index() { delete graph; }
};

namespace {

/// hnswlib's lock of the label table and the counts.
std::mutex &tableLock(const Graph &g) { return const_cast<Graph &>(g).cur_element_count_guard_; }

/// hnswlib's lock of one node's vector and deleted mark while it is inserted or updated.
std::mutex &nodeLock(const Graph &g, hnswlib::tableint node) {
    return const_cast<Graph &>(g).link_list_update_locks_[node & (Graph::max_update_element_locks - 1)];
}

/// The node holding `label`, whether present or removed; false when the graph never held it.
bool nodeOf(const Graph &g, uint64_t label, hnswlib::tableint &node) {
    std::lock_guard<std::mutex> table(tableLock(g));
    auto found = g.label_lookup_.find(label);
    if (found == g.label_lookup_.end()) return false;
    node = found->second;
    return true;
}

void say(char *message, size_t size, const char *format, const char *detail) {
    if (message && size > 0) snprintf(message, size, format, detail);
}

vshnsw_status failure(const std::exception &error, char *message, size_t size) {
    if (dynamic_cast<const std::bad_alloc *>(&error)) {
        say(message, size, "%s", "out of memory");
        return VSHNSW_NO_MEMORY;
    }
    say(message, size, "%s", error.what());
    return strstr(error.what(), "memory") ? VSHNSW_NO_MEMORY : VSHNSW_FAILED;
}

/// Checks what hnswlib read from a file before anything walks it: the
/// element layout our space implies, the entry point, every link's target
/// and every list's length. A checksum-valid file from another writer (or a
/// future format) is refused here instead of being searched out of bounds.
bool structureHolds(const Graph &g, size_t dataSize) {
    const size_t count = g.cur_element_count;
    if (count > g.max_elements_) return false;
    if (g.data_size_ != dataSize || g.maxM0_ == 0 || g.maxM_ == 0 || g.maxM0_ > 0xFFFF || g.maxM_ > 0xFFFF) return false;
    const size_t links0 = g.maxM0_ * sizeof(hnswlib::tableint) + sizeof(hnswlib::linklistsizeint);
    if (g.size_links_level0_ != links0 || g.offsetData_ != links0 || g.offsetLevel0_ != 0) return false;
    if (g.label_offset_ != links0 + dataSize || g.size_data_per_element_ != links0 + dataSize + sizeof(hnswlib::labeltype)) return false;
    if (count == 0) return true;
    if (g.enterpoint_node_ >= count || g.maxlevel_ < 0 || g.element_levels_[g.enterpoint_node_] != g.maxlevel_) return false;
    for (size_t i = 0; i < count; i++) {
        const auto node = static_cast<hnswlib::tableint>(i);
        const int levels = g.element_levels_[i];
        if (levels < 0 || levels > g.maxlevel_) return false;
        for (int level = 0; level <= levels; level++) {
            hnswlib::linklistsizeint *list = level == 0 ? g.get_linklist0(node) : g.get_linklist(node, level);
            const size_t size = g.getListCount(list);
            if (size > (level == 0 ? g.maxM0_ : g.maxM_)) return false;
            const auto *targets = reinterpret_cast<const hnswlib::tableint *>(list + 1);
            for (size_t j = 0; j < size; j++) {
                if (targets[j] >= count) return false;
            }
        }
    }
    return true;
}

/// hnswlib's file header (96 bytes), field for field.
struct FileHeader {
    size_t offsetLevel0, maxElements, count, sizeDataPerElement, labelOffset, offsetData;
    int maxLevel;
    hnswlib::tableint enterpoint;
    size_t maxM, maxM0, m;
    double mult;
    size_t efConstruction;
};

/// Reads the header and checks its counts against the file's size before
/// hnswlib allocates anything by them: each node's level-0 record has the
/// size our space implies, and `count` records (with each node's upper-level
/// length word) fit in the file. A header claiming more nodes than the file
/// holds is refused here, so it never sizes an allocation.
bool headerFits(const char *path, uint64_t bytes, size_t dataSize, FileHeader *header, char *message, size_t size) {
    FILE *file = fopen(path, "rb");
    if (!file) {
        say(message, size, "cannot read the graph file: %s", strerror(errno));
        return false;
    }
    FileHeader h{};
    const bool read = fread(&h.offsetLevel0, sizeof h.offsetLevel0, 1, file) == 1 && fread(&h.maxElements, sizeof h.maxElements, 1, file) == 1
        && fread(&h.count, sizeof h.count, 1, file) == 1 && fread(&h.sizeDataPerElement, sizeof h.sizeDataPerElement, 1, file) == 1
        && fread(&h.labelOffset, sizeof h.labelOffset, 1, file) == 1 && fread(&h.offsetData, sizeof h.offsetData, 1, file) == 1
        && fread(&h.maxLevel, sizeof h.maxLevel, 1, file) == 1 && fread(&h.enterpoint, sizeof h.enterpoint, 1, file) == 1
        && fread(&h.maxM, sizeof h.maxM, 1, file) == 1 && fread(&h.maxM0, sizeof h.maxM0, 1, file) == 1
        && fread(&h.m, sizeof h.m, 1, file) == 1 && fread(&h.mult, sizeof h.mult, 1, file) == 1
        && fread(&h.efConstruction, sizeof h.efConstruction, 1, file) == 1;
    const long headerBytes = read ? ftell(file) : 0;
    fclose(file);
    if (!read || headerBytes <= 0) {
        say(message, size, "%s", "the graph file is shorter than its header");
        return false;
    }
    const size_t links0 = h.maxM0 * sizeof(hnswlib::tableint) + sizeof(hnswlib::linklistsizeint);
    if (h.maxM0 == 0 || h.maxM0 > 0xFFFF || h.maxM == 0 || h.maxM > 0xFFFF || h.sizeDataPerElement != links0 + dataSize + sizeof(hnswlib::labeltype)) {
        say(message, size, "%s", "the graph file's header does not describe nodes of this space (another format, or damaged)");
        return false;
    }
    const uint64_t room = bytes - static_cast<uint64_t>(headerBytes);
    const uint64_t perNode = h.sizeDataPerElement + sizeof(unsigned int);
    if (h.count > room / perNode) {
        char detail[160];
        snprintf(detail, sizeof detail, "%zu nodes, its %llu bytes hold at most %llu", h.count, static_cast<unsigned long long>(bytes),
                 static_cast<unsigned long long>(room / perNode));
        say(message, size, "the graph file's header claims %s (damaged)", detail);
        return false;
    }
    *header = h;
    return true;
}

/// CRC-32 and size of a file, read in large blocks.
bool fileChecksum(const char *path, uint64_t *bytes, uint32_t *crc) {
    FILE *file = fopen(path, "rb");
    if (!file) return false;
    std::vector<unsigned char> block(8 << 20);
    uint32_t value = 0;
    uint64_t total = 0;
    size_t got;
    while ((got = fread(block.data(), 1, block.size(), file)) > 0) {
        value = libdeflate_crc32(value, block.data(), got);
        total += got;
    }
    const bool ok = !ferror(file);
    fclose(file);
    *bytes = total;
    *crc = value;
    return ok;
}

/// Writes through one buffer, keeping the running CRC-32; remembers the first failure.
struct CheckedWriter {
    FILE *file;
    uint32_t crc = 0;
    uint64_t bytes = 0;
    bool failed = false;

    void write(const void *data, size_t size) {
        if (failed || size == 0) return;
        if (fwrite(data, 1, size, file) != size) { failed = true; return; }
        crc = libdeflate_crc32(crc, data, size);
        bytes += size;
    }
    template <typename T> void pod(const T &value) { write(&value, sizeof(T)); }
};

}  // namespace

extern "C" {

vshnsw_status vshnsw_create(size_t dimensions, size_t capacity, size_t m, size_t ef_construction, uint64_t seed,
                            vshnsw_index **out, char *message, size_t message_size) {
    *out = nullptr;
    if (dimensions == 0 || dimensions % 16 != 0 || m < 2 || m > 1000) {
        say(message, message_size, "%s", "dimensions must be a positive multiple of 16 and m in 2...1000");
        return VSHNSW_INVALID_ARGUMENT;
    }
    try {
        auto *index = new vshnsw_index(dimensions);
        index->graph = new Graph(&index->space, capacity > 0 ? capacity : 1, m, ef_construction, static_cast<size_t>(seed));
        *out = index;
        return VSHNSW_OK;
    } catch (const std::exception &error) {
        return failure(error, message, message_size);
    }
}

vshnsw_status vshnsw_load(const char *path, size_t dimensions, uint64_t expected_bytes, uint32_t expected_crc,
                          size_t capacity, vshnsw_index **out, char *message, size_t message_size) {
    *out = nullptr;
    if (dimensions == 0 || dimensions % 16 != 0) {
        say(message, message_size, "%s", "dimensions must be a positive multiple of 16");
        return VSHNSW_INVALID_ARGUMENT;
    }
    uint64_t bytes = 0;
    uint32_t crc = 0;
    if (!fileChecksum(path, &bytes, &crc)) {
        say(message, message_size, "cannot read the graph file: %s", strerror(errno));
        return VSHNSW_IO;
    }
    if (bytes != expected_bytes) {
        say(message, message_size, "%s", "the graph file has another size than its manifest records (torn or replaced)");
        return VSHNSW_DAMAGED;
    }
    if (crc != expected_crc) {
        say(message, message_size, "%s", "the graph file's checksum does not match its manifest (damaged)");
        return VSHNSW_DAMAGED;
    }
    FileHeader header{};
    {
        vshnsw::Int8Space probe(dimensions);
        if (!headerFits(path, bytes, probe.rowSize(), &header, message, message_size)) return VSHNSW_DAMAGED;
    }
    vshnsw_index *index = nullptr;
    try {
        index = new vshnsw_index(dimensions);
        // Room for the caller's capacity or the nodes the file holds (checked against its size above),
        // never the file's own max_elements: hnswlib sizes its arrays by what it is given here.
        index->graph = new Graph(&index->space, std::string(path), false, std::max(std::max<size_t>(capacity, header.count), size_t(1)));
        Graph &g = *index->graph;
        // hnswlib 0.6.2's loading constructor never zeroes num_deleted_ before counting the marked
        // nodes into it: count them again from zero.
        g.num_deleted_ = 0;
        for (size_t i = 0; i < g.cur_element_count; i++) {
            if (g.isMarkedDeleted(static_cast<hnswlib::tableint>(i))) g.num_deleted_++;
        }
        if (!structureHolds(g, index->space.rowSize())) {
            delete index;
            say(message, message_size, "%s", "the graph file's structure does not hold (another format, or damaged)");
            return VSHNSW_DAMAGED;
        }
        *out = index;
        return VSHNSW_OK;
    } catch (const std::exception &error) {
        delete index;
        if (dynamic_cast<const std::bad_alloc *>(&error) || strstr(error.what(), "memory")) return failure(error, message, message_size);
        say(message, message_size, "the graph file could not be read: %s", error.what());
        return VSHNSW_DAMAGED;
    }
}

vshnsw_status vshnsw_save(vshnsw_index *index, const char *path, uint64_t *bytes, uint32_t *crc,
                          char *message, size_t message_size) {
    std::lock_guard<std::mutex> writing(index->writer);
    std::shared_lock<std::shared_mutex> reading(index->layout);
    const Graph &g = *index->graph;
    FILE *file = fopen(path, "wb");
    if (!file) {
        say(message, message_size, "cannot create the graph file: %s", strerror(errno));
        return VSHNSW_IO;
    }
    // hnswlib's saveIndex, field for field (so its loadIndex reads the file), with every write checked.
    CheckedWriter out{file};
    out.pod(g.offsetLevel0_);
    out.pod(g.max_elements_);
    out.pod(g.cur_element_count);
    out.pod(g.size_data_per_element_);
    out.pod(g.label_offset_);
    out.pod(g.offsetData_);
    out.pod(g.maxlevel_);
    out.pod(g.enterpoint_node_);
    out.pod(g.maxM_);
    out.pod(g.maxM0_);
    out.pod(g.M_);
    out.pod(g.mult_);
    out.pod(g.ef_construction_);
    out.write(g.data_level0_memory_, g.cur_element_count * g.size_data_per_element_);
    for (size_t i = 0; i < g.cur_element_count; i++) {
        const unsigned int size = g.element_levels_[i] > 0 ? static_cast<unsigned int>(g.size_links_per_element_ * g.element_levels_[i]) : 0;
        out.pod(size);
        if (size) out.write(g.linkLists_[i], size);
    }
    const bool flushed = !out.failed && fflush(file) == 0 && fsync(fileno(file)) == 0;
    const int flushError = errno;
    const bool closed = fclose(file) == 0;
    if (!flushed || !closed) {
        say(message, message_size, "cannot write the graph file: %s", strerror(out.failed ? errno : flushError));
        return VSHNSW_IO;
    }
    *bytes = out.bytes;
    *crc = out.crc;
    return VSHNSW_OK;
}

void vshnsw_free(vshnsw_index *index) { delete index; }

size_t vshnsw_dimensions(const vshnsw_index *index) { return index->space.dimensions(); }

size_t vshnsw_count(const vshnsw_index *index) {
    std::shared_lock<std::shared_mutex> reading(index->layout);
    std::lock_guard<std::mutex> table(tableLock(*index->graph));
    return index->graph->cur_element_count - index->graph->num_deleted_;
}

size_t vshnsw_nodes(const vshnsw_index *index) {
    std::shared_lock<std::shared_mutex> reading(index->layout);
    std::lock_guard<std::mutex> table(tableLock(*index->graph));
    return index->graph->cur_element_count;
}

size_t vshnsw_memory_bytes(const vshnsw_index *index) {
    std::lock_guard<std::mutex> writing(index->writer);  // no add is setting a node's level
    std::shared_lock<std::shared_mutex> reading(index->layout);
    const Graph &g = *index->graph;
    size_t upper = 0;
    for (size_t i = 0; i < g.cur_element_count; i++) {
        if (g.element_levels_[i] > 0) upper += g.size_links_per_element_ * g.element_levels_[i];
    }
    // Level 0 (links, vector, label) for every slot, upper levels, the label table (~4 words a
    // node in libstdc++'s unordered_map), a lock, a level and a visited mark per slot.
    return g.max_elements_ * (g.size_data_per_element_ + sizeof(std::mutex) + sizeof(int) + sizeof(char *) + sizeof(unsigned short))
        + upper + g.label_lookup_.size() * 4 * sizeof(void *);
}

vshnsw_status vshnsw_add(vshnsw_index *index, const uint64_t *labels, const float *vectors, size_t count, size_t threads,
                         vshnsw_progress progress, void *context, char *message, size_t message_size) {
    if (count == 0) return VSHNSW_OK;
    const size_t dimensions = index->space.dimensions();
    for (size_t i = 0; i < count; i++) {
        if (!vshnsw::Int8Space::roundable(vectors + i * dimensions, dimensions)) {
            say(message, message_size, "%s", "a vector is zero or not finite");
            return VSHNSW_INVALID_ARGUMENT;
        }
    }
    std::lock_guard<std::mutex> writing(index->writer);
    Graph &g = *index->graph;
    try {
        {
            // Room for every label that is new (hnswlib refuses to grow during adds).
            std::unique_lock<std::shared_mutex> resizing(index->layout);
            size_t fresh = 0;
            for (size_t i = 0; i < count; i++) {
                auto found = g.label_lookup_.find(labels[i]);
                if (found == g.label_lookup_.end()) fresh++;
                else if (g.isMarkedDeleted(found->second)) g.unmarkDeletedInternal(found->second);  // one thread: num_deleted_ is not atomic
            }
            if (g.cur_element_count + fresh > g.max_elements_) {
                g.resizeIndex(std::max(g.cur_element_count + fresh, g.max_elements_ + g.max_elements_ / 4));
            }
        }
        std::shared_lock<std::shared_mutex> reading(index->layout);
        std::atomic<size_t> next{0}, done{0};
        std::atomic<bool> stop{false};
        std::exception_ptr failed;
        std::mutex failedGuard;
        auto work = [&](bool reports) {
            std::vector<unsigned char> row(index->space.rowSize());
            size_t lastReport = 0;
            for (;;) {
                if (stop.load(std::memory_order_relaxed)) return;
                const size_t i = next.fetch_add(1);
                if (i >= count) return;
                try {
                    vshnsw::Int8Space::round(vectors + i * dimensions, dimensions, row.data());
                    g.addPoint(row.data(), labels[i]);
                } catch (...) {
                    std::lock_guard<std::mutex> guard(failedGuard);
                    if (!failed) failed = std::current_exception();
                    stop = true;
                    return;
                }
                const size_t finished = done.fetch_add(1) + 1;
                if (reports && progress && finished - lastReport >= 1024) {
                    lastReport = finished;
                    if (progress(context, finished, count) != 0) stop = true;
                }
            }
        };
        const size_t helpers = std::min(threads > 0 ? threads - 1 : 0, count / 256);
        std::vector<std::thread> pool;
        for (size_t t = 0; t < helpers; t++) pool.emplace_back(work, false);
        work(true);
        for (auto &thread : pool) thread.join();
        if (failed) std::rethrow_exception(failed);
        if (stop) {
            say(message, message_size, "%s", "stopped");
            return VSHNSW_CANCELLED;
        }
        if (progress) progress(context, count, count);
        return VSHNSW_OK;
    } catch (const std::exception &error) {
        return failure(error, message, message_size);
    }
}

size_t vshnsw_remove(vshnsw_index *index, const uint64_t *labels, size_t count) {
    std::lock_guard<std::mutex> writing(index->writer);
    std::shared_lock<std::shared_mutex> reading(index->layout);
    Graph &g = *index->graph;
    size_t removed = 0;
    std::lock_guard<std::mutex> table(tableLock(g));  // num_deleted_, which count reads
    for (size_t i = 0; i < count; i++) {
        auto found = g.label_lookup_.find(labels[i]);
        if (found == g.label_lookup_.end()) continue;
        std::lock_guard<std::mutex> node(nodeLock(g, found->second));
        if (g.isMarkedDeleted(found->second)) continue;
        g.markDeletedInternal(found->second);
        removed++;
    }
    return removed;
}

vshnsw_presence vshnsw_compare(const vshnsw_index *index, uint64_t label, const float *vector) {
    std::shared_lock<std::shared_mutex> reading(index->layout);
    const Graph &g = *index->graph;
    hnswlib::tableint node;
    if (!nodeOf(g, label, node)) return VSHNSW_ABSENT;
    const size_t size = index->space.rowSize();
    std::vector<unsigned char> row(size);
    const bool roundable = vshnsw::Int8Space::roundable(vector, index->space.dimensions());
    if (roundable) vshnsw::Int8Space::round(vector, index->space.dimensions(), row.data());
    std::lock_guard<std::mutex> locked(nodeLock(g, node));
    if (g.isMarkedDeleted(node)) return VSHNSW_REMOVED;
    if (!roundable) return VSHNSW_DIFFERENT;
    return memcmp(row.data(), g.getDataByInternalId(node), size) == 0 ? VSHNSW_SAME : VSHNSW_DIFFERENT;
}

size_t vshnsw_mismatches(const vshnsw_index *index, const uint64_t *labels, const float *vectors, size_t count) {
    std::shared_lock<std::shared_mutex> reading(index->layout);
    const Graph &g = *index->graph;
    const size_t dimensions = index->space.dimensions(), size = index->space.rowSize();
    std::vector<unsigned char> row(size);
    size_t mismatches = 0;
    for (size_t i = 0; i < count; i++) {
        hnswlib::tableint node;
        const float *vector = vectors + i * dimensions;
        if (!nodeOf(g, labels[i], node) || !vshnsw::Int8Space::roundable(vector, dimensions)) {
            mismatches++;
            continue;
        }
        vshnsw::Int8Space::round(vector, dimensions, row.data());
        std::lock_guard<std::mutex> locked(nodeLock(g, node));
        if (g.isMarkedDeleted(node) || memcmp(row.data(), g.getDataByInternalId(node), size) != 0) mismatches++;
    }
    return mismatches;
}

size_t vshnsw_mismatches_rounded(const vshnsw_index *index, const uint64_t *labels, const int8_t *values, size_t count) {
    std::shared_lock<std::shared_mutex> reading(index->layout);
    const Graph &g = *index->graph;
    const size_t dimensions = index->space.dimensions();
    size_t mismatches = 0;
    for (size_t i = 0; i < count; i++) {
        hnswlib::tableint node;
        if (!nodeOf(g, labels[i], node)) {
            mismatches++;
            continue;
        }
        std::lock_guard<std::mutex> locked(nodeLock(g, node));
        if (g.isMarkedDeleted(node) || memcmp(values + i * dimensions, g.getDataByInternalId(node), dimensions) != 0) mismatches++;
    }
    return mismatches;
}

size_t vshnsw_labels(const vshnsw_index *index, uint64_t *labels, size_t capacity) {
    std::shared_lock<std::shared_mutex> reading(index->layout);
    const Graph &g = *index->graph;
    size_t written = 0;
    std::lock_guard<std::mutex> table(tableLock(g));  // an add inserting a label may rehash the table
    for (const auto &entry : g.label_lookup_) {
        if (written == capacity) break;
        std::lock_guard<std::mutex> node(nodeLock(g, entry.second));
        if (!g.isMarkedDeleted(entry.second)) labels[written++] = entry.first;
    }
    return written;
}

size_t vshnsw_search(const vshnsw_index *index, const float *query, size_t ef, uint64_t *labels, float *distances,
                     size_t capacity) {
    const size_t dimensions = index->space.dimensions();
    if (ef == 0 || capacity == 0 || !vshnsw::Int8Space::roundable(query, dimensions)) return 0;
    // The query stays in floats (only the rows are rounded): half the rounding noise of comparing two rows.
    std::vector<unsigned char> row(index->space.rowSize());
    vshnsw::Int8Space::queryRow(query, dimensions, row.data());
    std::shared_lock<std::shared_mutex> reading(index->layout);
    const Graph &g = *index->graph;
    if (g.cur_element_count == 0) return 0;
    // hnswlib's searchKnn with ef as an argument instead of the graph's one
    // setting (so concurrent queries may each have their own): greedy descent
    // through the upper levels, then the library's bottom-layer search.
    hnswlib::tableint current = g.enterpoint_node_;
    float currentDistance = g.fstdistfunc_(row.data(), g.getDataByInternalId(current), g.dist_func_param_);
    for (int level = g.maxlevel_; level > 0; level--) {
        bool changed = true;
        while (changed) {
            changed = false;
            hnswlib::linklistsizeint *list = g.get_linklist(current, level);
            const size_t size = g.getListCount(list);
            const auto *targets = reinterpret_cast<const hnswlib::tableint *>(list + 1);
            for (size_t i = 0; i < size; i++) {
                const float distance = g.fstdistfunc_(row.data(), g.getDataByInternalId(targets[i]), g.dist_func_param_);
                if (distance < currentDistance) {
                    currentDistance = distance;
                    current = targets[i];
                    changed = true;
                }
            }
        }
    }
    auto found = g.num_deleted_ ? g.searchBaseLayerST<true>(current, row.data(), ef)
                                : g.searchBaseLayerST<false>(current, row.data(), ef);
    while (found.size() > capacity) found.pop();
    const size_t total = found.size();
    for (size_t i = total; i-- > 0;) {  // the queue pops farthest first
        labels[i] = g.getExternalLabel(found.top().second);
        if (distances) distances[i] = found.top().first;
        found.pop();
    }
    return total;
}

const char *vshnsw_kernel(void) { return vshnsw::Int8Space::kernelName(); }

uint32_t vshnsw_crc32(uint32_t crc, const void *data, size_t size) { return libdeflate_crc32(crc, data, size); }

}  // extern "C"
