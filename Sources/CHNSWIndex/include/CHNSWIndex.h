/*
 * CHNSWIndex — the C face of an HNSW graph from hnswlib (Debian's
 * libhnswlib-dev 0.6.2, header-only C++), for the embedded store's
 * approximate k-NN. Only this file's declarations cross into Swift; the C++
 * stays in HNSWIndex.cpp.
 *
 * What the graph holds: each vector as Int8 values scaled so its largest
 * magnitude is 127, with the inverse of that row's length (the rule of
 * SearchEngine's QuantizedMatrix), compared by cosine: distance = 1 − cos.
 * Vectors are given as floats and the graph rounds them; a query is compared
 * in floats with the rounded rows. Labels are
 * the caller's (catalog ids). The graph only chooses candidates: the caller
 * scores them exactly.
 *
 * Thread safety: searches, comparisons and label listings may run at once
 * with each other and with one writer (add, remove, save); writers are
 * serialised. No C++ exception crosses this interface: every failure is a
 * status, with a message when a buffer is given.
 */
#ifndef CHNSWINDEX_H
#define CHNSWINDEX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct vshnsw_index vshnsw_index;

typedef enum vshnsw_status {
    VSHNSW_OK = 0,
    /** A dimension that is not a positive multiple of 16, a zero or non-finite vector. */
    VSHNSW_INVALID_ARGUMENT = 1,
    VSHNSW_NO_MEMORY = 2,
    /** The file could not be read or written (the message says why). */
    VSHNSW_IO = 3,
    /** The file is not the graph it should be: size, checksum or structure. */
    VSHNSW_DAMAGED = 4,
    /** The progress callback asked to stop; what was added stays. */
    VSHNSW_CANCELLED = 5,
    VSHNSW_FAILED = 6,
} vshnsw_status;

/** What the graph holds for a label, against a given vector. */
typedef enum vshnsw_presence {
    VSHNSW_ABSENT = 0,
    /** Present, and holding the vector's rounding exactly. */
    VSHNSW_SAME = 1,
    /** Present with another vector. */
    VSHNSW_DIFFERENT = 2,
    /** Present but marked removed. */
    VSHNSW_REMOVED = 3,
} vshnsw_presence;

/** Called by the adding thread now and then; returning non-zero stops the add. */
typedef int (*vshnsw_progress)(void *context, size_t done, size_t total);

/**
 * An empty graph for vectors of `dimensions` floats (a multiple of 16), room
 * for `capacity` (it grows), `m` links per node (2m on the bottom layer),
 * `ef_construction` candidates while linking, levels drawn from `seed`.
 */
vshnsw_status vshnsw_create(size_t dimensions, size_t capacity, size_t m, size_t ef_construction, uint64_t seed,
                            vshnsw_index **out, char *message, size_t message_size);

/**
 * Reads a graph `vshnsw_save` wrote, after checking that the file has
 * `expected_bytes` bytes with CRC-32 `expected_crc` (so a torn or damaged
 * file is refused before hnswlib reads it) and that its header's node count
 * fits in the file (so a forged count never sizes an allocation), then that
 * its structure holds (element size for `dimensions`, every link inside the
 * graph). Room for `capacity` elements or the file's nodes, whichever is more
 * (never the file's own recorded capacity).
 */
vshnsw_status vshnsw_load(const char *path, size_t dimensions, uint64_t expected_bytes, uint32_t expected_crc,
                          size_t capacity, vshnsw_index **out, char *message, size_t message_size);

/**
 * Writes the graph in hnswlib's file format to `path` (created or
 * truncated), flushed to disk (fsync), and gives its size and CRC-32.
 * Waits for a running add; searches go on.
 */
vshnsw_status vshnsw_save(vshnsw_index *index, const char *path, uint64_t *bytes, uint32_t *crc,
                          char *message, size_t message_size);

void vshnsw_free(vshnsw_index *index);

/*
 * Threads: searches and the readers below (count, nodes, compare, mismatches,
 * labels) may run beside each other and beside one writer (add, remove,
 * save); writers wait for each other. The readers take hnswlib's own locks of
 * what they read (the label table and counts, a node's vector and deleted
 * mark), so none sees a label table being rehashed or a vector half written.
 */
size_t vshnsw_dimensions(const vshnsw_index *index);
/** Labels present and not removed. */
size_t vshnsw_count(const vshnsw_index *index);
/** Nodes, removed ones included (a removed node keeps its place in the graph). */
size_t vshnsw_nodes(const vshnsw_index *index);
/** Bytes the graph holds in memory (nodes, links, label table, locks), estimated from its sizes. */
size_t vshnsw_memory_bytes(const vshnsw_index *index);

/**
 * Adds `count` vectors (`count × dimensions` floats) under their labels,
 * on `threads` threads (the caller's among them); a label already present
 * is replaced (and restored when removed). Grows the graph as needed.
 * `progress` (may be NULL) is called from the caller's thread.
 */
vshnsw_status vshnsw_add(vshnsw_index *index, const uint64_t *labels, const float *vectors, size_t count, size_t threads,
                         vshnsw_progress progress, void *context, char *message, size_t message_size);

/** Marks labels removed (searches no longer return them); returns how many were present and not removed. */
size_t vshnsw_remove(vshnsw_index *index, const uint64_t *labels, size_t count);

/** Whether the graph holds `vector` (rounded) under `label`. */
vshnsw_presence vshnsw_compare(const vshnsw_index *index, uint64_t label, const float *vector);

/**
 * How many of `count` labels are not held with their vector (`count ×
 * dimensions` floats, row after row, rounded as `vshnsw_add` rounds them):
 * absent, removed or holding another vector. Zero, with as many labels
 * present as given, means the graph holds exactly these rows under these labels.
 */
size_t vshnsw_mismatches(const vshnsw_index *index, const uint64_t *labels, const float *vectors, size_t count);

/**
 * `vshnsw_mismatches` for rows already rounded: `count × dimensions` Int8
 * values (largest magnitude 127, as `vshnsw_add` rounds a vector), compared
 * with the graph's rows byte for byte — no rounding, a memcmp each.
 */
size_t vshnsw_mismatches_rounded(const vshnsw_index *index, const uint64_t *labels, const int8_t *values, size_t count);

/** Writes up to `capacity` labels present and not removed, in no order; returns how many were written. */
size_t vshnsw_labels(const vshnsw_index *index, uint64_t *labels, size_t capacity);

/**
 * The `ef` nearest labels to `query` as the graph finds them (removed ones
 * skipped), nearest first, at most `capacity`; their distances (1 − cosine
 * of the query and the rounded rows) in `distances` (may be NULL). Returns how many.
 */
size_t vshnsw_search(const vshnsw_index *index, const float *query, size_t ef, uint64_t *labels, float *distances,
                     size_t capacity);

/** CRC-32 of `size` bytes continuing `crc` (libdeflate's): the fingerprint of the vectors a graph reflects. */
uint32_t vshnsw_crc32(uint32_t crc, const void *data, size_t size);

/** Which distance kernel this CPU runs ("avx2" or "portable"). */
const char *vshnsw_kernel(void);

#ifdef __cplusplus
}
#endif

#endif
