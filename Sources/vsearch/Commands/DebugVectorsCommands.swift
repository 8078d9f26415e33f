import ArgumentParser
import Foundation
import SearchEngine
import VisualSearch

extension DebugCommand {
    /// Loads bare vectors into a catalog through the store's batch upsert — the
    /// ingest half of bench/scale.py.
    struct LoadVectors: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "load-vectors",
            abstract: "Upsert float32 vectors (row-major) as images v0000000…, metadata brand=b{row % 10}; print the rate.")
        @OptionGroup var catalog: CatalogOptions
        @Option(help: "float32 row-major vectors of --dims floats each.") var vectors: String
        @Option var dims = ColorFeatures.dimensions
        @Option var batchSize = 1000

        struct Report: Encodable {
            var count: Int
            var seconds: Double
            var imagesPerSecond: Double
            enum CodingKeys: String, CodingKey { case count, seconds, imagesPerSecond = "images_per_second" }
        }

        func run() async throws {
            let floats = try DebugCommand.readFloats(vectors, dims: dims)
            let count = floats.count / dims
            let schema = FieldSchema(fields: ["brand": .string])
            do {
                let store = try await catalog.open(creating: true)
                try await store.declare(schema)
                let start = ContinuousClock.now
                var batch: [CatalogItem] = []
                batch.reserveCapacity(batchSize)
                for row in 0..<count {
                    let name = DebugCommand.vectorName(row)
                    batch.append(CatalogItem(imageName: name, source: "vectors/" + name, width: 1, height: 1, contentHash: name,
                                             features: Array(floats[(row * dims)..<((row + 1) * dims)]),
                                             palette: DominantColors(entries: []), metadata: ["brand": "b\(row % 10)"]))
                    if batch.count == batchSize || row == count - 1 {
                        try await store.upsert(batch, schema: schema)
                        batch.removeAll(keepingCapacity: true)
                    }
                }
                let seconds = DebugCommand.seconds(since: start)
                Terminal.json(Report(count: count, seconds: seconds, imagesPerSecond: Double(count) / max(seconds, 1e-9)))
            } catch {
                throw CLIError.report(error)
            }
        }
    }

    /// Runs query vectors through the engine one at a time — the k-NN half
    /// of bench/scale.py: per-query latency and the top results' rows.
    struct QueryVectors: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "query-vectors",
            abstract: "Find similar for each float32 query vector through the engine; print per-query ms and the top rows.")
        @OptionGroup var catalog: CatalogOptions
        @Option(help: "float32 row-major query vectors.") var queries: String
        @Option var dims = ColorFeatures.dimensions
        @Option var k = 10
        @Option(name: .customLong("fq")) var filters: [String] = []
        @Option(help: "Queries run first, untimed.") var warmup = 5

        struct Report: Encodable {
            var ms: [Double]
            var tops: [[Int]]
            var cpuSeconds: Double
            enum CodingKeys: String, CodingKey { case ms, tops, cpuSeconds = "cpu_seconds" }
        }

        func run() async throws {
            let floats = try DebugCommand.readFloats(queries, dims: dims)
            let vectors = (0..<(floats.count / dims)).map { Array(floats[($0 * dims)..<(($0 + 1) * dims)]) }
            var parameters = SearchParameters()
            parameters.limit = k
            parameters.filters = try filters.map { try Filter(parsing: $0, acceptsEquals: true) }
            let engine: VisualSearchEngine
            do { engine = try await catalog.engine() } catch { throw CLIError.report(error) }
            do {
                for vector in vectors.prefix(warmup) { _ = try await engine.vectorSearch(vector, parameters: parameters) }
                let cpuBefore = ProcessStatistics.cpuSeconds
                var report = Report(ms: [], tops: [], cpuSeconds: 0)
                for vector in vectors {
                    let start = ContinuousClock.now
                    let response = try await engine.vectorSearch(vector, parameters: parameters)
                    report.ms.append(DebugCommand.seconds(since: start) * 1000)
                    report.tops.append(response.result.compactMap { Int($0.imageName.dropFirst()) })
                }
                report.cpuSeconds = ProcessStatistics.cpuSeconds - cpuBefore
                Terminal.jsonLine(report)
            } catch {
                throw CLIError.report(error)
            }
        }
    }

    /// `v` and the row number in seven digits: the image name of a bare vector.
    static func vectorName(_ row: Int) -> String {
        let digits = String(row)
        return "v" + String(repeating: "0", count: max(0, 7 - digits.count)) + digits
    }

    static func readFloats(_ path: String, dims: Int) throws -> [Float] {
        guard dims == ColorFeatures.dimensions else { throw ValidationError("--dims must be \(ColorFeatures.dimensions), the catalog's vector size") }
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard data.count % (dims * 4) == 0 else { throw ValidationError("\(path): \(data.count) bytes is not a whole number of \(dims)-float rows") }
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }
}
