#if canImport(Glibc)
import CMalloc
#endif

/// Process-wide allocator tuning for image work.
enum Allocator {
    /// Keeps pixel and codec buffers in the malloc heap instead of a fresh
    /// `mmap` for each one. By default glibc maps large allocations and
    /// unmaps them on free, so every decoded image (and libjpeg-turbo's
    /// whole-image coefficient buffers for progressive files) paid for page
    /// faults and kernel zeroing: 17% of `prepare`'s CPU went to the kernel.
    /// Measured on the bench set (bench/RESULTS.md): kernel time 0.20 → 0.06 s
    /// for 16 JPEG uploads, while `thumbs --jobs 2` on 20-MP inputs stays at
    /// 255–272 MB peak. One arena (both workers share it) and a 96 MB trim
    /// threshold bound what is retained; buffers above 64 MB (a 20-MP RGBA
    /// image) are still mapped and returned at once.
    static func tuneForImageWork() {
        #if canImport(Glibc)
        _ = mallopt(M_MMAP_THRESHOLD, 64 << 20)
        _ = mallopt(M_TRIM_THRESHOLD, 96 << 20)
        _ = mallopt(M_TOP_PAD, 32 << 20)
        _ = mallopt(M_ARENA_MAX, 1)
        #endif
    }
}
