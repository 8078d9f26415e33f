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
            abstract: "Upsert float32 vectors (row-major) as images v0000000…, metadata brand=b{row % 10}; print the rate.",
            discussion: """
            With --learned, row i also gets row i of that file as its learned vector, and the catalog records a \
            learned model first (as `vsearch index` does): a synthetic descriptor, or with --installed-model the \
            installed model's, so that a server with the model embeds uploads into the same space.
            """)
        @OptionGroup var catalog: CatalogOptions
        @OptionGroup var model: ModelOptions
        @Option(help: "float32 row-major vectors of --dims floats each.") var vectors: String
        @Option var dims = ColorFeatures.dimensions
        @Option(help: "float32 row-major learned vectors of --learned-dims floats each, as many rows as --vectors.") var learned: String?
        @Option var learnedDims = 512
        @Flag(help: "Record the installed model's descriptor for the learned vectors, not a synthetic one.") var installedModel = false
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
            let learnedFloats = try learned.map { try DebugCommand.readFloats($0, dims: learnedDims, learned: true) }
            if let learnedFloats, learnedFloats.count / learnedDims != count {
                throw ValidationError("--learned holds \(learnedFloats.count / learnedDims) rows, --vectors \(count)")
            }
            let schema = FieldSchema(fields: ["brand": .string])
            let model = try learnedModel()
            do {
                try await catalog.withStoreUnreported(creating: true) { store in
                    try await store.declare(schema)
                    if let model { try await store.recordLearnedModel(model) }
                    let start = ContinuousClock.now
                    var batch: [CatalogItem] = []
                    batch.reserveCapacity(batchSize)
                    for row in 0..<count {
                        let name = DebugCommand.vectorName(row)
                        batch.append(CatalogItem(imageName: name, source: "vectors/" + name, width: 1, height: 1, contentHash: name,
                                                 features: Array(floats[(row * dims)..<((row + 1) * dims)]),
                                                 learned: learnedFloats.map { Array($0[(row * learnedDims)..<((row + 1) * learnedDims)]) },
                                                 palette: DominantColors(entries: []), metadata: ["brand": "b\(row % 10)"]))
                        if batch.count == batchSize || row == count - 1 {
                            try await store.upsert(batch, schema: schema)
                            batch.removeAll(keepingCapacity: true)
                        }
                    }
                    let seconds = DebugCommand.seconds(since: start)
                    Terminal.json(Report(count: count, seconds: seconds, imagesPerSecond: Double(count) / max(seconds, 1e-9)))
                }
            } catch {
                throw CLIError.report(error)
            }
        }

        /// What the catalog records as the learned vectors' model; nil without --learned.
        func learnedModel() throws -> EmbeddingDescriptor? {
            guard learned != nil else { return nil }
            guard installedModel else {
                return EmbeddingDescriptor(name: "synthetic", version: "1", dimension: learnedDims,
                                           preprocessing: "none: vectors loaded by vsearch debug load-vectors",
                                           contentHash: SHA256Digest.hex(of: Array("vsearch debug load-vectors \(learnedDims)".utf8)))
            }
            let embedder: LearnedEmbedder
            do { embedder = try LearnedEmbedder(modelDirectory: model.modelDirectory) } catch { throw CLIError.report(error) }
            guard embedder.descriptor.dimension == learnedDims else {
                throw ValidationError("the installed model makes \(embedder.descriptor.dimension) floats, --learned-dims is \(learnedDims)")
            }
            return embedder.descriptor
        }
    }

    /// Runs query vectors through the engine one at a time — the k-NN half
    /// of bench/scale.py: per-query latency and the top results' rows.
    struct QueryVectors: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "query-vectors",
            abstract: "Find similar for each float32 query vector through the engine; print per-query ms and the top rows.")
        @OptionGroup var catalog: CatalogOptions
        @OptionGroup var model: ModelOptions
        @Option(help: "float32 row-major query vectors.") var queries: String
        @Option(help: "Floats per query: 112 for color, the catalog model's dimension for visual.") var dims = ColorFeatures.dimensions
        @Option(help: ArgumentHelp("The space the queries are in.", valueName: "color|visual")) var similarity = "color"
        @Option var k = 10
        @Option(name: .customLong("fq")) var filters: [String] = []
        @Option(help: "Queries run first, untimed.") var warmup = 5
        @Option(help: ArgumentHelp("The request's knn (default: the catalog's, auto).", valueName: "auto|exact|approximate")) var knn: String?
        @Option(name: .customLong("ef-search"), help: "The request's ef_search (default: the catalog's, 100).") var efSearch: Int?

        struct Report: Encodable {
            var ms: [Double]
            var tops: [[Int]]
            var cpuSeconds: Double
            /// Opening the engine: the catalog's vectors loaded, its HNSW index loaded and checked.
            var startSeconds: Double
            enum CodingKeys: String, CodingKey { case ms, tops, cpuSeconds = "cpu_seconds", startSeconds = "start_seconds" }
        }

        func run() async throws {
            let mode: SimilarityMode
            do throws(VisualSearchError) { mode = try SimilarityMode(parsing: similarity) } catch { throw ValidationError(error.message) }
            let floats = try DebugCommand.readFloats(queries, dims: dims, learned: mode != .color)
            let vectors = (0..<(floats.count / dims)).map { Array(floats[($0 * dims)..<(($0 + 1) * dims)]) }
            var parameters = SearchParameters()
            parameters.limit = k
            parameters.filters = try filters.map { try Filter(parsing: $0, acceptsEquals: true) }
            do throws(VisualSearchError) {
                parameters.nearestNeighbours = try knn.map { (text) throws(VisualSearchError) in try NearestNeighbourMode(parsing: text) }
                parameters.efSearch = efSearch
                try parameters.validate()
            } catch {
                throw ValidationError(error.message)
            }
            let opening = ContinuousClock.now
            try await catalog.withEngine(model: model) { engine in
                let startSeconds = DebugCommand.seconds(since: opening)
                do {
                    for vector in vectors.prefix(warmup) { _ = try await engine.vectorSearch(vector, similarity: mode, parameters: parameters) }
                    let cpuBefore = ProcessStatistics.cpuSeconds
                    var report = Report(ms: [], tops: [], cpuSeconds: 0, startSeconds: startSeconds)
                    for vector in vectors {
                        let start = ContinuousClock.now
                        let response = try await engine.vectorSearch(vector, similarity: mode, parameters: parameters)
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
    }

    /// `v` and the row number in seven digits: the image name of a bare vector.
    static func vectorName(_ row: Int) -> String {
        let digits = String(row)
        return "v" + String(repeating: "0", count: max(0, 7 - digits.count)) + digits
    }

    /// Colour vectors are always ``ColorFeatures/dimensions`` long; learned ones as long as their model makes them.
    static func readFloats(_ path: String, dims: Int, learned: Bool = false) throws -> [Float] {
        guard learned ? dims > 0 : dims == ColorFeatures.dimensions else {
            throw ValidationError(learned ? "learned vectors need a positive dimension" : "--dims must be \(ColorFeatures.dimensions), the catalog's colour vector size")
        }
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard data.count % (dims * 4) == 0 else { throw ValidationError("\(path): \(data.count) bytes is not a whole number of \(dims)-float rows") }
        return data.withUnsafeBytes { Array($0.bindMemory(to: Float.self)) }
    }
}
