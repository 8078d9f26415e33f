import ConcurrencyToolkit
import Foundation
import SearchEngine
import TestSupport
import Testing

/// The HNSW graph as the engine uses it: labels in, nearest labels out, the
/// graph's own bookkeeping (removal, presence, growth) and its file.
struct HNSWGraphTests {
    /// `count` vectors of ``Items/vector(_:)`` from `first`, row after row.
    static func vectors(_ count: Int, from first: Int = 0) -> [Float] {
        (first..<(first + count)).flatMap { Items.vector($0) }
    }

    /// The exact ten nearest labels (by dot product) of `query` among `count` vectors.
    static func exactTop(_ query: [Float], among vectors: [Float], count: Int, k: Int = 10) -> [Int64] {
        let dimensions = query.count
        let scored = (0..<count).map { row -> (Int64, Float) in
            var dot: Float = 0
            for i in 0..<dimensions { dot += query[i] * vectors[row * dimensions + i] }
            return (Int64(row), dot)
        }
        return scored.sorted { $0.1 > $1.1 }.prefix(k).map(\.0)
    }

    static func graph(_ count: Int, capacity: Int? = nil) throws -> (HNSWGraph, [Float]) {
        let vectors = vectors(count)
        let graph = try HNSWGraph(dimensions: 112, capacity: capacity ?? count)
        try vectors.withUnsafeBufferPointer { try graph.add(labels: (0..<count).map(Int64.init), vectors: $0, threads: 2) }
        return (graph, vectors)
    }

    @Test("each vector finds itself first; a wide search finds the exact ten nearest of queries it never saw (recall ≥ 0.98)")
    func nearest() throws {
        let (graph, vectors) = try Self.graph(2000)
        #expect(graph.count == 2000 && graph.nodes == 2000 && graph.memoryBytes > 2000 * 116)
        for row in stride(from: 0, to: 2000, by: 97) {
            let own = Array(vectors[(row * 112)..<((row + 1) * 112)])
            #expect(own.withUnsafeBufferPointer { graph.search($0.baseAddress!, ef: 50) }.first == Int64(row))
        }
        var found = 0
        for seed in 10_000..<10_050 {
            let query = Items.vector(seed)
            let top = Set(query.withUnsafeBufferPointer { graph.search($0.baseAddress!, ef: 200) }.prefix(10))
            found += Self.exactTop(query, among: vectors, count: 2000).filter(top.contains).count
        }
        #expect(Double(found) / 500 >= 0.98)
    }

    @Test("removed labels are never returned; adding one again restores it; presence tells same, different, removed, absent")
    func removal() throws {
        let (graph, vectors) = try Self.graph(500)
        let own = Array(vectors[(7 * 112)..<(8 * 112)])
        #expect(graph.remove([7, 8, 9999]) == 2)
        #expect(graph.remove([7]) == 0)
        #expect(graph.count == 498 && graph.nodes == 500)
        let after = own.withUnsafeBufferPointer { graph.search($0.baseAddress!, ef: 100) }
        #expect(!after.contains(7) && !after.contains(8) && after.count == 100)
        own.withUnsafeBufferPointer { #expect(graph.presence(of: 7, vector: $0.baseAddress!) == .removed) }
        own.withUnsafeBufferPointer { #expect(graph.presence(of: 12345, vector: $0.baseAddress!) == .absent) }
        try own.withUnsafeBufferPointer { try graph.add(labels: [7], vectors: $0, threads: 1) }
        #expect(own.withUnsafeBufferPointer { graph.search($0.baseAddress!, ef: 20) }.first == 7)
        own.withUnsafeBufferPointer { #expect(graph.presence(of: 7, vector: $0.baseAddress!) == .same) }
        let other = Items.vector(424_242)
        other.withUnsafeBufferPointer { #expect(graph.presence(of: 7, vector: $0.baseAddress!) == .different) }
        #expect(Set(graph.labels()) == Set((0..<500).map(Int64.init)).subtracting([8]))
    }

    @Test("readers beside an add (labels, count, presence) see the graph whole: only labels added, never fewer, each vector its old or its new one")
    func readersBesideAnAdd() async throws {
        let (graph, old) = try Self.graph(1000, capacity: 30_000)
        let fresh = Self.vectors(20_000, from: 1000), replacing = Self.vectors(1000, from: 50_000)
        let finished = Locked<Result<Void, any Error>?>(nil)
        // The adds run on a thread of their own, as the engine's do: new labels (the label table grows and
        // rehashes), then new vectors for the first thousand (each rewritten in place).
        OwnThread.start(named: "test-writer") {
            let result = Result { () throws in
                try fresh.withUnsafeBufferPointer { try graph.add(labels: (1000..<21_000).map(Int64.init), vectors: $0, threads: 2) }
                try replacing.withUnsafeBufferPointer { try graph.add(labels: (0..<1000).map(Int64.init), vectors: $0, threads: 2) }
            }
            finished.withLock { $0 = result }
        }
        // The reader spins on a thread of its own too (never on the cooperative pool the other tests share).
        let (rounds, wrong) = await OwnThread.run(named: "test-reader") { () -> (Int, [String]) in
            var rounds = 0, lastCount = 1000
            var wrong: [String] = []
            while finished.withLock({ $0 }) == nil {
                let labels = graph.labels(), count = graph.count
                if labels.contains(where: { !(0..<21_000).contains($0) }) || Set(labels).count != labels.count { wrong.append("labels() gave a label never added or one twice") }
                if count < lastCount || count > 21_000 { wrong.append("count \(count) after \(lastCount)") }
                lastCount = count
                let row = rounds % 1000
                let presences = [old, replacing].map { vectors in
                    vectors[(row * 112)..<((row + 1) * 112)].withUnsafeBufferPointer { graph.presence(of: Int64(row), vector: $0.baseAddress!) }
                }
                if !presences.contains(.same) { wrong.append("row \(row) holds neither its old nor its new vector: \(presences)") }
                rounds += 1
            }
            return (rounds, wrong)
        }
        try finished.withLock { $0 }?.get()
        #expect(wrong.isEmpty, "\(wrong.prefix(5)) (\(wrong.count) in \(rounds) rounds)")
        #expect(graph.count == 21_000 && Set(graph.labels()).count == 21_000)
        let labels = (0..<1000).map(Int64.init)
        #expect(labels.withUnsafeBufferPointer { ids in replacing.withUnsafeBufferPointer { graph.mismatches(labels: ids, vectors: $0) } } == 0)
    }

    @Test("it grows past its first capacity")
    func growth() throws {
        let (graph, _) = try Self.graph(300, capacity: 10)
        #expect(graph.count == 300)
        let more = Self.vectors(300, from: 300)
        try more.withUnsafeBufferPointer { try graph.add(labels: (300..<600).map(Int64.init), vectors: $0, threads: 2) }
        #expect(graph.count == 600)
    }

    @Test("zero and non-finite vectors are refused and nothing of the batch is added")
    func refusals() throws {
        let graph = try HNSWGraph(dimensions: 112, capacity: 4)
        var vectors = Items.vector(1) + [Float](repeating: 0, count: 112)
        #expect(throws: HNSWGraphError.self) { try vectors.withUnsafeBufferPointer { try graph.add(labels: [1, 2], vectors: $0, threads: 1) } }
        vectors = Items.vector(1) + Items.vector(2)
        vectors[130] = .nan
        #expect(throws: HNSWGraphError.self) { try vectors.withUnsafeBufferPointer { try graph.add(labels: [1, 2], vectors: $0, threads: 1) } }
        #expect(graph.count == 0)
        #expect(throws: HNSWGraphError.self) { try HNSWGraph(dimensions: 100, capacity: 1) }
    }

    @Test("saved and loaded it answers the same; a flipped byte, a short file or a wrong size is refused as damaged")
    func file() throws {
        let (graph, _) = try Self.graph(800)
        let path = Repository.temporaryDirectory("hnsw-graph") + "/color.graph"
        let (bytes, crc) = try graph.save(to: path)
        #expect(bytes == UInt64(try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int))
        let loaded = try HNSWGraph(loading: path, dimensions: 112, bytes: bytes, crc: crc, capacity: 800)
        for seed in 5000..<5020 {
            let query = Items.vector(seed)
            let a = query.withUnsafeBufferPointer { graph.search($0.baseAddress!, ef: 64) }
            let b = query.withUnsafeBufferPointer { loaded.search($0.baseAddress!, ef: 64) }
            #expect(a == b)
        }
        func refused(_ body: () throws(HNSWGraphError) -> HNSWGraph) -> HNSWGraphError.Kind? {
            do { _ = try body(); return nil } catch { return error.kind }
        }
        #expect(refused { () throws(HNSWGraphError) in try HNSWGraph(loading: path, dimensions: 112, bytes: bytes + 1, crc: crc, capacity: 1) } == .damaged)
        #expect(refused { () throws(HNSWGraphError) in try HNSWGraph(loading: path, dimensions: 112, bytes: bytes, crc: crc ^ 1, capacity: 1) } == .damaged)
        #expect(refused { () throws(HNSWGraphError) in try HNSWGraph(loading: path, dimensions: 128, bytes: bytes, crc: crc, capacity: 1) } == .damaged)
        var data = try Data(contentsOf: URL(fileURLWithPath: path))
        data[data.count / 2] ^= 0x5A
        try data.write(to: URL(fileURLWithPath: path))
        #expect(refused { () throws(HNSWGraphError) in try HNSWGraph(loading: path, dimensions: 112, bytes: bytes, crc: crc, capacity: 1) } == .damaged)
        try data.prefix(data.count - 100).write(to: URL(fileURLWithPath: path))
        #expect(refused { () throws(HNSWGraphError) in try HNSWGraph(loading: path, dimensions: 112, bytes: bytes, crc: crc, capacity: 1) } == .damaged)
        #expect(refused { () throws(HNSWGraphError) in try HNSWGraph(loading: path + ".missing", dimensions: 112, bytes: bytes, crc: crc, capacity: 1) } == .io)
    }
}
