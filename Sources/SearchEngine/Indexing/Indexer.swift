import Foundation
import ImageOps
import VisualSearch

/// Adds images to a ``CatalogStore``: the one pipeline behind `vsearch index`
/// (a folder) and the data API's `/insert` (fetched images).
///
/// - Unchanged images (same ``StoredContentHash/fingerprint(of:learned:)``: the
///   file's ``ContentHash``, the features version and the learned model) are
///   not decoded again; their metadata is still updated when metadata was
///   given. Without a learned model, an image whose stored row has learned
///   vectors of some model is unchanged too (they are kept, not dropped).
/// - With a learned model in ``Configuration/features`` each image gets its learned vector beside
///   the colour one, from the same decode; the catalog records the model
///   (``CatalogStore/recordLearnedModel(_:)``) before the first batch, and a
///   model other than the recorded one recomputes every image.
/// - Images are decoded with shrink-on-load (features need only 128 px) on
///   ``Configuration/jobs`` threads and committed in batches of
///   ``Configuration/batchSize``, one transaction each: a process killed at
///   any moment leaves every acknowledged batch, and a re-run finishes the job.
/// - Bad images and metadata that does not fit the schema are reported per
///   image and skipped; the rest are indexed.
///
/// ```swift
/// let summary = try await Indexer(store: store).run(directory: "corpus/images", metadata: table)
/// ```
public struct Indexer: Sendable {
    /// Indexing options; every property has a documented default.
    public struct Configuration: Sendable {
        /// Images per transaction. 64 by default.
        public var batchSize = 64
        /// Decoding threads. The number of active processors by default.
        public var jobs = ProcessInfo.processInfo.activeProcessorCount
        /// How images become vectors: decoded under ``FeaturePipeline/limits``
        /// (``ImageLimits/default`` by default), embedded with colour and, when
        /// it has one, the learned model (colour only by default).
        public var features = FeaturePipeline()
        /// The part of a folder this run indexes (``Shard``; by each file's
        /// relative path). The whole folder by default.
        public var shard: Shard = .whole
        /// Whether a run may record the pipeline's learned model as the catalog's model (and so make
        /// it the model of every image). `true` by default (`vsearch index`); the
        /// data API's inserts set `false`: they add learned vectors only to a catalog
        /// already made by the same model, and colour vectors alone otherwise, so a
        /// single insert never switches a colour-only catalog to visual similarity.
        public var recordsLearnedModel = true
        /// Where images are decoded and embedded: the indexer's own ``jobs``
        /// threads when nil (the default, right for `vsearch index`, which has
        /// the machine to itself), or an ``ImageWorkPool`` under its pixel
        /// budget — a server's inserts share the pool its queries decode on,
        /// so an insert of large images cannot take more memory or CPU than
        /// the server gives image work.
        public var imageWork: ImageWorkPool?
        public init() {}
    }

    /// One image to index.
    public struct Source: Sendable {
        /// Where the bytes come from.
        public enum Content: Sendable {
            /// A local file, read on a decoding thread.
            case file(String)
            /// Bytes already at hand (fetched).
            case bytes([UInt8])
            /// The image could not be obtained; the reason is reported.
            case failed(String)
        }

        public var imageName: String
        /// What the catalog records as the image's origin: a path or URL.
        public var origin: String
        public var content: Content
        public var metadata: [String: String]

        public init(imageName: String, origin: String, content: Content, metadata: [String: String]) {
            self.imageName = imageName
            self.origin = origin
            self.content = content
            self.metadata = metadata
        }
    }

    /// Progress events, delivered one at a time.
    public enum Event: Sendable {
        /// `total` images to process.
        case started(total: Int)
        /// One image processed: `position` is its index among the sources; a nil error means indexed.
        case image(name: String, position: Int, error: String?, done: Int, total: Int)
        /// One image found unchanged (same fingerprint): not decoded again; its metadata is updated when metadata was given.
        case unchanged(name: String, position: Int, done: Int, total: Int)
        /// A batch committed: `committed` images are now durable in total this run.
        case committed(Int)
    }

    /// The result of a run.
    public struct Summary: Sendable, Codable {
        public var files: Int
        public var indexed: Int
        public var unchanged: Int
        public var failed: Int
        public var catalogCount: Int
        public var seconds: Double
        public var failures: [String]
        /// Metadata rows whose `im_name` matches no image file (they were not used).
        public var unmatchedMetadata: [String]

        enum CodingKeys: String, CodingKey {
            case files, indexed, unchanged, failed, catalogCount = "catalog_count", seconds, failures
            case unmatchedMetadata = "unmatched_metadata"
        }
    }

    public let store: any CatalogWriter
    public let configuration: Configuration

    public init(store: any CatalogWriter, configuration: Configuration = Configuration()) {
        self.store = store
        self.configuration = configuration
    }

    /// Indexes `directory` (or one file): `im_name` is each file's path
    /// relative to the folder without its extension (`shoes/red.jpg` →
    /// `shoes/red`); `metadata` rows join on it; `schema` overrides inferred types.
    /// - Parameter excluding: a folder not to descend into (the catalog's own).
    public func run(directory: String, metadata: MetadataTable? = nil, schema overrides: FieldSchema = FieldSchema(),
                    excluding: String? = nil, isCancelled: @escaping @Sendable () -> Bool = { false },
                    onEvent: @escaping @Sendable (Event) -> Void = { _ in }) async throws(VisualSearchError) -> Summary {
        let files: [String]
        do { files = try ImageFiles.find(in: directory, excluding: excluding ?? "/dev/null") } catch { throw .image(error) }
        let stored = try await fromStore { () async throws(CatalogStoreError) in try await store.schema() }
        var declared = stored
        if let metadata {
            let inferred = FieldSchema.infer(columns: metadata.columns, rows: metadata.order.compactMap { metadata.rows[$0] })
            for (name, type) in inferred.fields where declared.fields[name] == nil && overrides.fields[name] == nil {
                declared.fields[name] = type
            }
        }
        try Indexer.checkOverrides(overrides, stored: stored, columns: metadata?.columns ?? [])
        for (name, type) in overrides.fields { declared.fields[name] = type }
        let fileNames = Set(files.map { ($0 as NSString).deletingPathExtension })
        if let metadata {
            try Indexer.checkFit(of: metadata.order.filter(fileNames.contains).compactMap { metadata.rows[$0] }, to: declared)
        }
        try await fromStore { () async throws(CatalogStoreError) in try await store.declare(declared) }
        let isFolder = ImageFiles.isDirectory(directory)
        let sources = files.filter(configuration.shard.contains).map { relative -> Source in
            let path = isFolder ? (directory as NSString).appendingPathComponent(relative) : directory
            let name = (relative as NSString).deletingPathExtension
            return Source(imageName: name, origin: Indexer.absolute(path),
                          content: .file(path), metadata: metadata?.rows[name] ?? [:])
        }
        var summary = try await ingest(sources, updatesMetadataOfUnchanged: metadata != nil, isCancelled: isCancelled, onEvent: onEvent)
        if let metadata {
            // Against every file, not only this shard's: a row of another shard's image is not unmatched.
            summary.unmatchedMetadata = metadata.order.filter { !fileNames.contains($0) }
        }
        return summary
    }

    /// Indexes sources in batches; the shared pipeline.
    /// - Parameter updatesMetadataOfUnchanged: whether an unchanged image's metadata is rewritten.
    public func ingest(_ sources: [Source], updatesMetadataOfUnchanged: Bool, isCancelled: @escaping @Sendable () -> Bool = { false },
                       onEvent: @escaping @Sendable (Event) -> Void = { _ in }) async throws(VisualSearchError) -> Summary {
        let start = Date()
        var usable = configuration.features.learned
        if let embedder = usable {
            if configuration.recordsLearnedModel {
                // A model that cannot run fails the job here: nothing written, no model recorded.
                do { try embedder.load() } catch { throw error.searchError }
                try await fromStore { () async throws(CatalogStoreError) in try await store.recordLearnedModel(embedder.descriptor) }
            } else if try await !embedder.descriptor.makesSameVectors(as: fromStore { () async throws(CatalogStoreError) in try await store.learnedModel() }) {
                usable = nil
            } else {
                do { try embedder.load() } catch { throw error.searchError }
            }
        }
        let features = configuration.features.with(learned: usable)
        let known = try await fromStore { () async throws(CatalogStoreError) in try await store.contentHashes() }
        onEvent(.started(total: sources.count))
        var indexed = 0, unchanged = 0, committed = 0, done = 0
        var failures: [String] = []
        let pool = WorkerPool(workers: configuration.jobs)
        let batchSize = max(1, configuration.batchSize)
        for batchStart in stride(from: 0, to: sources.count, by: batchSize) {
            if isCancelled() { break }
            let batch = Array(sources[batchStart..<min(sources.count, batchStart + batchSize)])
            let schema = try await declareFields(of: batch)
            // With a learned model each worker takes a group of images: decodes them, then runs them through the model at once.
            let group = features.learned == nil ? 1 : Self.embeddingBatch
            let groups = stride(from: 0, to: batch.count, by: group).map { $0..<min(batch.count, $0 + group) }
            let outcomes: [Outcome]
            if let imageWork = configuration.imageWork {
                outcomes = await Indexer.process(groups.map { Array(batch[$0]) }, on: imageWork, known: known, schema: schema,
                                                 features: features)
            } else {
                outcomes = await pool.map(count: groups.count) { g -> [Outcome] in
                    Indexer.process(Array(batch[groups[g]]), known: known, schema: schema, features: features)
                }.compactMap { $0 }.flatMap { $0 }
            }
            var items: [CatalogItem] = []
            var metadataOnly: [MetadataUpdate] = []
            for (offset, outcome) in outcomes.enumerated() {
                done += 1
                let position = batchStart + offset
                switch outcome {
                case .item(let item):
                    items.append(item)
                    onEvent(.image(name: item.imageName, position: position, error: nil, done: done, total: sources.count))
                case .unchanged(let update):
                    unchanged += 1
                    if updatesMetadataOfUnchanged { metadataOnly.append(update) }
                    onEvent(.unchanged(name: update.imageName, position: position, done: done, total: sources.count))
                case .failed(let name, let reason):
                    failures.append(reason)
                    onEvent(.image(name: name, position: position, error: reason, done: done, total: sources.count))
                case .described(let item, _):
                    // process(_ sources:...) embeds every described image before it returns.
                    let reason = "\(item.imageName): its learned vector was not computed"
                    failures.append(reason)
                    onEvent(.image(name: item.imageName, position: position, error: reason, done: done, total: sources.count))
                }
            }
            try await fromStore { () async throws(CatalogStoreError) in try await store.upsert(items, schema: schema) }
            if !metadataOnly.isEmpty { try await fromStore { () async throws(CatalogStoreError) in try await store.updateMetadata(metadataOnly, schema: schema) } }
            indexed += items.count
            committed += items.count + metadataOnly.count
            onEvent(.committed(committed))
        }
        return Summary(files: sources.count, indexed: indexed, unchanged: unchanged, failed: failures.count,
                       catalogCount: try await fromStore { () async throws(CatalogStoreError) in try await store.count() }, seconds: Date().timeIntervalSince(start), failures: failures,
                       unmatchedMetadata: [])
    }

    /// Refuses `--schema` fields that are neither a metadata column nor declared in the catalog (a typo would make a phantom field).
    static func checkOverrides(_ overrides: FieldSchema, stored: FieldSchema, columns: [String]) throws(VisualSearchError) {
        let known = Set(stored.fields.keys).union(columns.filter { $0 != "im_name" })
        if let unknown = overrides.fields.keys.sorted().first(where: { !known.contains($0) }) {
            throw .unknownField(unknown, known: known.sorted())
        }
    }

    /// Refuses a run where some field's type fits none of its values (a wrong
    /// `--schema`, or a type an earlier run declared): every row would fail,
    /// so nothing is declared or indexed, and the message names the type that fits.
    /// A field some values fit is left to the per-image checks.
    static func checkFit(of rows: [[String: String]], to schema: FieldSchema) throws(VisualSearchError) {
        for (field, type) in schema.fields.sorted(by: { $0.key < $1.key }) where type.isNumeric {
            let values = rows.compactMap { $0[field] }.filter { !$0.isEmpty }
            let failing = values.filter { MetadataTable.validate([field: $0], schema: schema) != nil }
            guard !values.isEmpty, failing.count == values.count else { continue }
            let fitting = FieldSchema.infer(columns: [field], rows: values.map { [field: $0] }).fields[field] ?? .string
            throw .invalidParameter(name: "schema", reason: "field \(field) is \(type.rawValue) but none of its \(values.count) values "
                + "is (first: \"\(failing[0])\"); nothing was indexed. Its values fit \(fitting.rawValue): run again with \(SettingName.schemaOverrides) \(field):\(fitting.rawValue)")
        }
    }

    /// Declares fields new to the schema, their types inferred from this batch's metadata; returns the schema.
    func declareFields(of batch: [Source]) async throws(VisualSearchError) -> FieldSchema {
        var schema = try await fromStore { () async throws(CatalogStoreError) in try await store.schema() }
        let columns = Set(batch.flatMap { $0.metadata.keys }).filter { schema.fields[$0] == nil && $0 != "im_name" }
        guard !columns.isEmpty else { return schema }
        let inferred = FieldSchema.infer(columns: columns.sorted(), rows: batch.map(\.metadata))
        for (name, type) in inferred.fields { schema.fields[name] = type }
        try await fromStore { () async throws(CatalogStoreError) in try await store.declare(schema) }
        return try await fromStore { () async throws(CatalogStoreError) in try await store.schema() }
    }

    /// Processes groups of sources on `imageWork`, each group charged the
    /// pixels its images decode to (read from their headers); outcomes in the
    /// groups' order. A group the pool refuses (overloaded) fails its images
    /// with the pool's reason: re-sending the insert retries them.
    static func process(_ groups: [[Source]], on imageWork: ImageWorkPool, known: [String: String], schema: FieldSchema,
                        features: FeaturePipeline) async -> [Outcome] {
        await withTaskGroup(of: (Int, [Outcome]).self) { tasks in
            for (position, group) in groups.enumerated() {
                let pixels = group.reduce(0) { $0 + decodedPixels(of: $1, features: features) }
                tasks.addTask {
                    do throws(VisualSearchError) {
                        let outcomes = try await imageWork.run(pixels: pixels, searching: { () throws(VisualSearchError) -> [Outcome] in
                            Indexer.process(group, known: known, schema: schema, features: features)
                        })
                        return (position, outcomes)
                    } catch {
                        return (position, group.map { .failed($0.imageName, "\($0.imageName): \(error.message)") })
                    }
                }
            }
            var byGroup = [[Outcome]](repeating: [], count: groups.count)
            for await (position, outcomes) in tasks { byGroup[position] = outcomes }
            return byGroup.flatMap { $0 }
        }
    }

    /// The pixels a source's decode produces, from its header (1 when its
    /// bytes are not at hand yet or the header is unusable: reading it is
    /// then the work, and it fails on its own).
    static func decodedPixels(of source: Source, features: FeaturePipeline) -> Int {
        guard case .bytes(let bytes) = source.content,
              let plan = try? features.plan(bytes, box: nil, source: source.imageName) else { return 1 }
        return plan.decodedPixels
    }

    /// Images a worker runs through the learned model at once.
    static let embeddingBatch = 8

    /// Reads, checks and decodes a group of sources, then embeds the decoded ones
    /// in one run of the model (on a decoding thread); outcomes in the sources' order.
    static func process(_ sources: [Source], known: [String: String], schema: FieldSchema, features: FeaturePipeline) -> [Outcome] {
        guard let learned = features.learned else { return sources.map { process($0, known: known, schema: schema, features: features) } }
        var outcomes: [Outcome] = []
        var pending: [(position: Int, item: CatalogItem, content: PixelBuffer)] = []
        for source in sources {
            let outcome = process(source, known: known, schema: schema, features: features, embeds: false)
            if case .described(let item, let content) = outcome {
                pending.append((outcomes.count, item, content))
            }
            outcomes.append(outcome)
        }
        guard !pending.isEmpty else { return outcomes }
        do throws(EmbeddingError) {
            let vectors = try learned.embed(pending.map(\.content))
            for (entry, vector) in zip(pending, vectors) {
                var item = entry.item
                item.learned = vector
                outcomes[entry.position] = .item(item)
            }
        } catch {
            for entry in pending { outcomes[entry.position] = .failed(entry.item.imageName, "\(entry.item.imageName): \(error)") }
        }
        return outcomes
    }

    /// Reads, checks and decodes one source (on a decoding thread); with
    /// `embeds` false and a learned model, a decoded image comes back
    /// ``Outcome/described(_:_:)`` for the caller to embed with others.
    static func process(_ source: Source, known: [String: String], schema: FieldSchema, features: FeaturePipeline,
                        embeds: Bool = true) -> Outcome {
        let name = source.imageName
        if let scalar = CatalogText.forbiddenInName(name) {
            return .failed(name, "im_name \(CatalogText.reason(name, scalar))")
        }
        if let problem = MetadataTable.validate(source.metadata, schema: schema) {
            return .failed(name, "\(name): metadata field \(problem.field): \(problem.reason)")
        }
        let bytes: [UInt8]
        do throws(ImageOpsError) {
            switch source.content {
            case .file(let path): bytes = try FileIO.read(path, maxBytes: features.limits.maxInputBytes)
            case .bytes(let data): bytes = data
            case .failed(let reason): return .failed(name, "\(name): \(reason)")
            }
        } catch {
            return .failed(name, error.description)
        }
        if let stored = known[name], isUnchanged(stored: stored, bytes: bytes, learned: features.learned?.descriptor) {
            return .unchanged(MetadataUpdate(imageName: name, metadata: source.metadata))
        }
        if !embeds, features.learned != nil {
            do throws(FeaturesError) {
                let described = try features.describe(named: name, bytes: bytes, source: source.origin, metadata: source.metadata)
                guard let content = described.content else { return .item(described.item) }
                return .described(described.item, content)
            } catch {
                return .failed(name, error.description)
            }
        }
        do throws(FeaturesError) {
            return .item(try features.catalogItem(named: name, bytes: bytes, source: source.origin, metadata: source.metadata))
        } catch {
            return .failed(name, error.description)
        }
    }

    /// Whether a stored row needs no new vectors: the same file and colour
    /// features, and the learned model's vector — or, indexing without a
    /// model, any (a colour-only run keeps the learned vectors it cannot make).
    static func isUnchanged(stored: String, bytes: [UInt8], learned: EmbeddingDescriptor?) -> Bool {
        if let learned { return stored == StoredContentHash.fingerprint(of: bytes, learned: learned) }
        return StoredContentHash.colorPart(of: stored) == StoredContentHash.fingerprint(of: bytes)
    }

    /// An absolute, normalised path, so the catalog's sources work from any working directory.
    static func absolute(_ path: String) -> String {
        let full = path.hasPrefix("/") ? path : (FileManager.default.currentDirectoryPath as NSString).appendingPathComponent(path)
        return (full as NSString).standardizingPath
    }

    enum Outcome: Sendable {
        case item(CatalogItem)
        /// Decoded, its learned vector still to compute from `content` (never leaves ``process(_:known:schema:features:embeds:)``).
        case described(CatalogItem, PixelBuffer)
        case unchanged(MetadataUpdate)
        case failed(String, String)
    }
}
