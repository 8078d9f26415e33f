import ArgumentParser
import Foundation
import VisualSearch

/// `vsearch debug …`: measurement helpers for bench/ (hidden from help).
struct DebugCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "debug",
        abstract: "Measurement helpers used by the benchmarks in bench/.",
        shouldDisplay: false,
        subcommands: [KNN.self, Latency.self]
    )

    static func milliseconds(_ body: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }

    /// k-NN over synthetic unit vectors: the in-memory scan alone.
    struct KNN: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Time top-k scans over synthetic unit vectors; optionally write them for numpy/faiss.")
        @Option var count = 100_000
        @Option var dims = 112
        @Option var queries = 50
        @Option var k = 10
        @Option var seed: UInt64 = 42
        @Option(help: "Write the vectors (float32, row-major) here and the queries to PATH.queries.") var write: String?

        func run() throws {
            var state = seed | 1
            func next() -> Float {  // xorshift64*, uniform in [-1, 1)
                state ^= state >> 12; state ^= state << 25; state ^= state >> 27
                return Float((state &* 2_685_821_657_736_338_717) >> 40) / Float(1 << 23) - 1
            }
            func unitRows(_ rows: Int) -> [Float] {
                var data = [Float](repeating: 0, count: rows * dims)
                for row in 0..<rows {
                    var norm: Float = 0
                    for d in 0..<dims { let v = next(); data[row * dims + d] = v; norm += v * v }
                    let scale = 1 / max(norm.squareRoot(), 1e-9)
                    for d in 0..<dims { data[row * dims + d] *= scale }
                }
                return data
            }
            let vectors = unitRows(count)
            let queryVectors = unitRows(queries)
            if let write {
                try vectors.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: write)) }
                try queryVectors.withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: write + ".queries")) }
            }
            let index = FeatureIndex(dimensions: dims, vectors: vectors)
            var times: [Double] = []
            var firstTop: [Int] = []
            for q in 0..<queries {
                let query = Array(queryVectors[(q * dims)..<((q + 1) * dims)])
                var top: [(row: Int, value: Float)] = []
                times.append(DebugCommand.milliseconds {
                    top = index.top(k, of: index.dotProducts(with: query), rows: nil)
                })
                if q == 0 { firstTop = top.map(\.row) }
            }
            Terminal.json(["count": Double(count), "dims": Double(dims), "queries": Double(queries),
                           "ms_per_query_median": DebugCommand.median(times), "ms_per_query_min": times.min() ?? 0])
            Terminal.out("first_query_top: " + firstTop.map(String.init).joined(separator: ","))
        }
    }

    /// In-process query latency on a catalog.
    struct Latency: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Median latency of find-similar queries on a catalog, in process.")
        @OptionGroup var catalog: CatalogOptions
        @Option(name: .customLong("im-name")) var imageName: String
        @Option var repeats = 200
        @Option(name: .customLong("fq")) var filters: [String] = []
        @Option var limit = 10

        func run() throws {
            let engine = try VisualSearchEngine(catalog: try catalog.open())
            var parameters = SearchParameters()
            parameters.limit = limit
            parameters.includesScore = true
            parameters.filters = try filters.map { try Filter(parsing: $0) }
            var times: [Double] = []
            var total = 0
            for _ in 0..<repeats {
                times.append(try DebugCommand.milliseconds { total = try engine.search(imageName: imageName, parameters: parameters).total })
            }
            Terminal.json(["repeats": Double(repeats), "total": Double(total), "ms_median": DebugCommand.median(times),
                           "ms_p99": times.sorted()[min(times.count - 1, times.count * 99 / 100)]])
        }
    }
}
