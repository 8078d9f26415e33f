import Foundation
import ConcurrencyToolkit
import Testing
@testable import ImageOps

/// A batch job's workers share a memory budget: a source that does not fit
/// waits for another to finish; one alone always runs; what a decode holds is
/// known from the header before it starts.
@Suite("Memory budget of a batch job")
struct MemoryBudgetTests {
    @Test("a reservation that does not fit waits until another is returned")
    func waitsForRoom() {
        let budget = MemoryBudget(bytes: 100)
        let first = budget.reserve(80)
        let reservedWhenGranted = Locked<Int?>(nil)
        let finished = DispatchSemaphore(value: 0)
        OwnThread.start(named: "test-reserve") {
            let second = budget.reserve(50)
            reservedWhenGranted.withLock { $0 = budget.reservedBytes }
            budget.release(second)
            finished.signal()
        }
        // Return the first reservation only once the second waits for it (or, were it not to wait, has run).
        while budget.waitingJobs == 0 && reservedWhenGranted.withLock({ $0 }) == nil { usleep(200) }
        budget.release(first)
        finished.wait()
        #expect(reservedWhenGranted.withLock { $0 } == 50, "the second reservation was granted beside the first")
        #expect(budget.reservedBytes == 0)
    }

    @Test("a source larger than the whole budget runs alone, charged as the whole budget")
    func oversizedRunsAlone() {
        let budget = MemoryBudget(bytes: 100)
        let charge = budget.reserve(500)
        #expect(charge == 100)
        #expect(budget.reservedBytes == 100)
        budget.release(charge)
        #expect(budget.reservedBytes == 0)
        #expect(budget.reserve(30) == 30 && budget.reserve(70) == 70, "reservations that fit together are granted at once")
    }

    @Test("a progressive JPEG's decode holds every DCT coefficient; a sequential one and a PNG only their pixels")
    func decodeBytesFromTheHeader() throws {
        let image = Fixtures.quadrants(width: 64, height: 48)
        func decodeBytes(_ encoded: [UInt8], minimum: PixelSize? = nil) throws -> Int {
            ShrinkOnLoad.decodeBytes(of: encoded, header: try ImageDecoder.readHeader(encoded, source: "test"), minimumSize: minimum)
        }
        let pixels = 64 * 48 * 4
        // 4:4:4 (quality ≥ 0.9): three components of 8 × 6 blocks, 128 bytes each.
        #expect(try decodeBytes(try ImageEncoders.JPEG(quality: try JPEGQuality(0.95), isProgressive: true).encode(image)) == pixels + 3 * 48 * 128)
        // 4:2:0: luma 8 × 6 blocks, each chroma 4 × 3.
        #expect(try decodeBytes(try ImageEncoders.JPEG(quality: try JPEGQuality(0.85), isProgressive: true).encode(image)) == pixels + (48 + 2 * 12) * 128)
        #expect(try decodeBytes(try ImageEncoders.JPEG(quality: try JPEGQuality(0.85)).encode(image)) == pixels)
        // Shrink-on-load makes the pixels fewer, never the coefficients.
        #expect(try decodeBytes(try ImageEncoders.JPEG(quality: try JPEGQuality(0.95), isProgressive: true).encode(image),
                                minimum: PixelSize(width: 16, height: 12)) == 16 * 12 * 4 + 3 * 48 * 128)
        #expect(try decodeBytes(try ImageEncoders.PNG().encode(image)) == pixels)
    }

    @Test("a batch whose budget fits one source at a time makes the same thumbnails as one without a budget")
    func budgetOrdersWorkOnly() throws {
        let (input, output) = try ThumbnailBatchTests.makeTree()
        var configuration = ThumbnailBatch.Configuration()
        configuration.jobs = 2
        configuration.memoryBudget = 1
        let summary = try ThumbnailBatch(input: input, output: output, configuration: configuration).run()
        var unbounded = configuration
        unbounded.memoryBudget = nil
        let other = try ThumbnailBatch(input: input, output: output + "-unbounded", configuration: unbounded).run()
        #expect(summary.created == 3 && summary.failed == 1)
        #expect(summary.results.map(\.thumbnails) == other.results.map(\.thumbnails), "the same files, sizes and bytes")
        #expect(configuration.effectiveMemoryBudget == 1)
        #expect(unbounded.effectiveMemoryBudget == 2 * ThumbnailBatch.memoryPerWorker)
    }
}
