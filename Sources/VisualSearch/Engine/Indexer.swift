import Foundation
import ImageOps

/// Indexes a folder of images into a ``Catalog``.
///
/// - `im_name` is the file's path relative to the folder, without its
///   extension (`shoes/red.jpg` → `shoes/red`); metadata rows join on it.
/// - Unchanged files (same ``ContentHash``) are not decoded again; their
///   metadata is still updated when a metadata file is given.
/// - Images are decoded with shrink-on-load (features need only 128 px) on
///   ``Configuration/jobs`` threads and committed in batches of
///   ``Configuration/batchSize``, one transaction each: a process killed at
///   any moment leaves every acknowledged batch and a consistent file, and a
///   re-run finishes the job.
/// - Bad images and metadata rows that do not fit the schema are reported
///   and skipped.
///
/// ```swift
/// let summary = try Indexer(catalog: catalog).run(directory: "corpus/images", metadata: table)
/// ```
public struct Indexer: Sendable {
    /// Indexing options; every property has a documented default.
    public struct Configuration: Sendable {
        /// Images per transaction. 64 by default.
        public var batchSize = 64
        /// Decoding threads. The number of active processors by default.
        public var jobs = ProcessInfo.processInfo.activeProcessorCount
        /// Limits for decoding. ``ImageLimits/default`` by default.
        public var limits: ImageLimits = .default
        public init() {}
    }

    /// Progress events, delivered one at a time.
    public enum Event: Sendable {
        /// `total` image files found.
        case started(total: Int)
        /// One file processed (`nil` error: indexed or unchanged).
        case file(name: String, error: String?, done: Int, total: Int)
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
    }

    public let catalog: Catalog
    public let configuration: Configuration

    public init(catalog: Catalog, configuration: Configuration = Configuration()) {
        self.catalog = catalog
        self.configuration = configuration
    }

    /// Indexes `directory`, joining `metadata` rows by `im_name`, with `schema`
    /// overriding inferred field types.
    public func run(directory: String, metadata: MetadataTable? = nil, schema overrides: FieldSchema = FieldSchema(),
                    isCancelled: @escaping @Sendable () -> Bool = { false },
                    onEvent: @escaping @Sendable (Event) -> Void = { _ in }) throws(VisualSearchError) -> Summary {
        let start = Date()
        let files: [String]
        do { files = try ImageFiles.find(in: directory, excluding: (catalog.path as NSString).deletingLastPathComponent) } catch {
            throw .image(error)
        }
        // Schema: existing, plus inferred from the metadata, overridden by flags.
        var declared = try catalog.schema()
        if let metadata {
            let inferred = FieldSchema.infer(columns: metadata.columns, rows: metadata.order.compactMap { metadata.rows[$0] })
            for (name, type) in inferred.fields where declared.fields[name] == nil && overrides.fields[name] == nil {
                declared.fields[name] = type
            }
        }
        for (name, type) in overrides.fields { declared.fields[name] = type }
        try catalog.declare(declared)
        let schema = try catalog.schema()

        let known = try catalog.contentHashes()
        let isFolder = ImageFiles.isDirectory(directory)
        onEvent(.started(total: files.count))
        var indexed = 0, unchanged = 0, committed = 0
        var failures: [String] = []
        var done = 0
        let pool = WorkerPool(workers: configuration.jobs)
        let limits = configuration.limits
        for batchStart in stride(from: 0, to: files.count, by: max(1, configuration.batchSize)) {
            if isCancelled() { break }
            let batch = Array(files[batchStart..<min(files.count, batchStart + configuration.batchSize)])
            let outcomes = pool.map(count: batch.count) { i -> Outcome in
                let relative = batch[i]
                let path = isFolder ? (directory as NSString).appendingPathComponent(relative) : directory
                let name = (relative as NSString).deletingPathExtension
                let values = metadata?.rows[name] ?? [:]
                if let problem = MetadataTable.validate(values, schema: schema) {
                    return .failed(name, "\(name): metadata field \(problem.field): \(problem.reason)")
                }
                do {
                    let bytes = try FileIO.read(path, maxBytes: limits.maxInputBytes)
                    if known[name] == ContentHash.of(bytes) { return .unchanged(name, values) }
                    return .item(try Indexer.item(named: name, bytes: bytes, source: path, metadata: values, limits: limits))
                } catch let error as ImageOpsError {
                    return .failed(name, error.description)
                } catch {
                    return .failed(name, "\(path): \(error)")
                }
            }.compactMap { $0 }
            var items: [CatalogItem] = []
            var metadataOnly: [(String, [String: String])] = []
            for outcome in outcomes {
                done += 1
                switch outcome {
                case .item(let item):
                    items.append(item)
                    onEvent(.file(name: item.imageName, error: nil, done: done, total: files.count))
                case .unchanged(let name, let values):
                    unchanged += 1
                    if metadata != nil { metadataOnly.append((name, values)) }
                    onEvent(.file(name: name, error: nil, done: done, total: files.count))
                case .failed(let name, let reason):
                    failures.append(reason)
                    onEvent(.file(name: name, error: reason, done: done, total: files.count))
                }
            }
            try catalog.upsert(items, schema: schema)
            if !metadataOnly.isEmpty { try catalog.updateMetadata(metadataOnly, schema: schema) }
            indexed += items.count
            committed += items.count + metadataOnly.count
            onEvent(.committed(committed))
        }
        return Summary(files: files.count, indexed: indexed, unchanged: unchanged, failed: failures.count,
                       catalogCount: try catalog.count(), seconds: Date().timeIntervalSince(start), failures: failures)
    }

    /// A catalog row for one encoded image: decoded small (shrink-on-load),
    /// then colour features and palette from one ≤ 256 px copy.
    /// - Throws: ``ImageOpsError`` naming `source`.
    public static func item(named name: String, bytes: [UInt8], source: String, metadata: [String: String],
                            limits: ImageLimits = .default) throws(ImageOpsError) -> CatalogItem {
        let decoded = try ImageDecoder.decode(bytes, source: source, options: DecodingOptions(
            minimumSize: PixelSize(width: ColorFeatures.workingSide, height: ColorFeatures.workingSide), limits: limits))
        // One small copy serves both the features and the palette.
        let small = Resampler.resample(decoded.pixels, to: decoded.pixels.size.fitting(inside: ColorFeatures.workingSide),
                                       filter: .triangle)
        return CatalogItem(imageName: name, source: source, width: decoded.header.size.width,
                           height: decoded.header.size.height, contentHash: ContentHash.of(bytes),
                           features: ColorFeatures.vector(of: small),
                           palette: DominantColors.palette(of: small), metadata: metadata)
    }

    enum Outcome: Sendable {
        case item(CatalogItem)
        case unchanged(String, [String: String])
        case failed(String, String)
    }
}

extension Catalog {
    /// Replaces the metadata of existing images (their features are kept), in one transaction.
    public func updateMetadata(_ updates: [(String, [String: String])], schema: FieldSchema) throws(VisualSearchError) {
        try write { db in
            for (name, values) in updates {
                guard let id = try Int64.fetchOne(db, sql: "SELECT id FROM images WHERE im_name = ?", arguments: [name]) else { continue }
                try Catalog.replaceValues(of: id, with: values, schema: schema, in: db)
            }
            try Catalog.bumpVersion(db)
        }
    }
}

import GRDB
