import ArgumentParser
import Foundation
import SearchEngine
import VisualSearch
import Tracking
import EventDelivery

/// `vsearch debug …`: measurement helpers for bench/ (hidden from help).
struct DebugCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "debug",
        abstract: "Measurement helpers used by the benchmarks in bench/.",
        shouldDisplay: false,
        subcommands: [KNN.self, Latency.self, LoadVectors.self, QueryVectors.self, TrackLoad.self, TrackDeliver.self]
    )

    static func milliseconds(_ body: () throws -> Void) rethrows -> Double {
        let start = DispatchTime.now().uptimeNanoseconds
        try body()
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
    }

    /// Seconds since `start`.
    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = start.duration(to: .now)
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
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
                var top: [Ranking.Entry] = []
                var parameters = SearchParameters()
                parameters.limit = min(k, SearchParameters.maximumLimit)
                let ranking = Ranking(parameters: parameters)
                times.append(DebugCommand.milliseconds {
                    top = ranking.rank(scores: index.dotProducts(with: query), rows: nil, names: index.names).page
                })
                if q == 0 { firstTop = top.map(\.row) }
            }
            Terminal.json(["count": Double(count), "dims": Double(dims), "queries": Double(queries),
                           "ms_per_query_median": DebugCommand.median(times), "ms_per_query_min": times.min() ?? 0])
            Terminal.out("first_query_top: " + firstTop.map(String.init).joined(separator: ","))
        }
    }

    /// In-process query latency on a catalog.
    struct Latency: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Median latency of find-similar queries on a catalog, in process.")
        @OptionGroup var catalog: CatalogOptions
        @OptionGroup var model: ModelOptions
        @Option(name: .customLong("im-name")) var imageName: String
        @Option var repeats = 200
        @Option(name: .customLong("fq")) var filters: [String] = []
        @Option var limit = 10

        func run() async throws {
            try await catalog.withEngine(model: model) { engine in
                var parameters = SearchParameters()
                parameters.limit = limit
                parameters.includesScore = true
                parameters.filters = try filters.map { try Filter(parsing: $0, acceptsEquals: true) }
                var times: [Double] = []
                var total = 0
                for _ in 0..<repeats {
                    let start = ContinuousClock.now
                    total = try await engine.search(SearchRequest(imageName: imageName, parameters: parameters)).total
                    times.append(DebugCommand.seconds(since: start) * 1000)
                }
                Terminal.json(["repeats": Double(repeats), "total": Double(total), "ms_median": DebugCommand.median(times),
                               "ms_p99": times.sorted()[min(times.count - 1, times.count * 99 / 100)]])
            }
        }
    }
}


extension DebugCommand {
    /// Appends events one `track` at a time, printing `queued N` after each
    /// returns — for the kill -9 test and the enqueue benchmark.
    struct TrackLoad: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "track-load", abstract: "Track N events one at a time into a queue.")
        @Option var count = 1000
        @Option var queue: String
        @Flag(help: "Print `queued N` after each event (flushed), else only a JSON summary.") var echo = false

        func run() async throws {
            let eventQueue = try EventQueue(path: queue)
            let tracker = Tracker(queue: eventQueue, transport: NoTransport())
            let start = DispatchTime.now().uptimeNanoseconds
            let cpuStart = clock()
            for index in 0..<count {
                var event = TrackingEvent.productClick(queryId: "q\(index % 97)", pid: "p\(index % 101)", imgUrl: "https://cdn.example/p\(index % 101).jpg",
                                                       pos: 1 + index % 10)
                event.s1 = "load \(index)"
                try await tracker.track(event)
                if echo {
                    var line = Array("queued \(index + 1)\n".utf8)
                    _ = write(STDOUT_FILENO, &line, line.count)
                }
            }
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            let cpu = Double(clock() - cpuStart) / Double(CLOCKS_PER_SEC)
            if !echo { Terminal.out(#"{"events":\#(count),"seconds":\#(seconds),"cpu_seconds":\#(cpu),"max_rss_kib":\#(ProcessStatistics.maxResidentKiB)}"#) }
        }
    }

    /// Delivers a queue to an endpoint and reports the rate and peak memory.
    struct TrackDeliver: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "track-deliver", abstract: "Flush a queue to an endpoint; report rate and memory.")
        @Option var queue: String
        @Option var endpoint: String
        @Option(name: .customLong("batch-size")) var batchSize = 50

        func run() async throws {
            let eventQueue = try EventQueue(path: queue)
            let backlog = try await eventQueue.count()
            let tracker = Tracker(queue: eventQueue, transport: HTTPEventTransport(endpoint: .custom(URL(string: endpoint)!), code: "bench"),
                                  configuration: Tracker.Configuration(batchSize: batchSize))
            let start = DispatchTime.now().uptimeNanoseconds
            let report = await tracker.flush(maxFailures: 3)
            let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
            Terminal.out(#"{"backlog":\#(backlog),"sent":\#(report.sent),"remaining":\#(report.remaining),"seconds":\#(seconds),"max_rss_kib":\#(ProcessStatistics.maxResidentKiB)}"#)
        }
    }

    /// A transport that never sends (enqueue-only runs).
    struct NoTransport: EventTransport {
        func send(_ events: [TrackingEvent], uid: String?) async -> BatchOutcome {
            .results(events.map { _ in .retry(reason: "not sending", retryAfter: nil) })
        }
    }
}
