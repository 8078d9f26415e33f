import Foundation
import Tracking
import VisualSearch

/// Copies a catalog between stores — SQLite to PostgreSQL or back — and
/// checks the copy: the declared fields, every image (vector, palette,
/// source, size, content hash, metadata) and the collector's events.
///
/// Writes go through the target's own batch upsert (one transaction per
/// batch, replace by `im_name`), so an interrupted copy is simply run again:
/// it replaces what it already wrote and goes on. The target may be empty
/// or hold a part of this same catalog; images the source does not have are
/// refused before anything is written, since the copy could not be verified.
///
/// Every read of the source is a separate call; for a catalog in use, give
/// the copy a snapshot of it (``CatalogSnapshots/withSnapshot(_:)``), so
/// the schema, hashes, vectors, metadata and events all come from one moment
/// (`vsearch catalog migrate` does).
///
/// ```swift
/// let copy = CatalogCopy(from: sqlite, to: postgres)
/// let summary = try await copy.run { done, total in print(done, total) }
/// ```
public struct CatalogCopy: Sendable {
    /// What a copy did and checked.
    public struct Summary: Sendable, Hashable, Codable {
        public var from: String
        public var to: String
        public var images: Int
        public var values: Int
        public var events: Int
        public var fields: Int
        public var seconds: Double
    }

    public let source: any CatalogStore & CollectorStore
    public let target: any CatalogStore & CollectorStore
    /// Images per transaction on the target.
    public var batchSize = 500

    public init(from source: any CatalogStore & CollectorStore, to target: any CatalogStore & CollectorStore) {
        self.source = source
        self.target = target
    }

    /// Copies, then verifies by counts and content hashes.
    /// - Parameter progress: images copied so far and in all, after each batch.
    /// - Throws: ``CatalogStoreError/unusable(location:reason:)`` naming the
    ///   target when it holds other images or the copy does not verify; the
    ///   stores' own errors otherwise.
    public func run(progress: (Int, Int) -> Void = { _, _ in }) async throws(CatalogStoreError) -> Summary {
        let start = Date()
        let schema = try await source.schema()
        let sourceHashes = try await source.contentHashes()
        let foreign = try await target.contentHashes().keys.filter { sourceHashes[$0] == nil }.sorted()
        if let first = foreign.first {
            throw .unusable(location: target.location, reason: "it holds \(foreign.count) images that \(source.location) does not "
                           + "(such as \(first)); copy into an empty catalog")
        }
        try await target.declare(schema)
        if let model = try await source.learnedModel() { try await target.recordLearnedModel(model) }

        let index = try await source.loadIndex(learned: .exact)
        let exported = Dictionary(try await source.export().map { ($0.imageName, $0) }, uniquingKeysWith: { first, _ in first })
        var items: [CatalogItem] = []
        items.reserveCapacity(batchSize)
        var copied = 0, values = 0
        for row in 0..<index.count {
            let name = index.names[row]
            guard let image = exported[name], let hash = sourceHashes[name] else { continue }
            items.append(CatalogItem(imageName: name, source: image.source, width: image.width, height: image.height, contentHash: hash,
                                     features: index.vector(at: row), learned: index.learnedVector(at: row),
                                     palette: index.palettes[row], metadata: image.metadata))
            values += image.metadata.count
            if items.count == batchSize {
                try await target.upsert(items, schema: schema)
                copied += items.count
                items.removeAll(keepingCapacity: true)
                progress(copied, index.count)
            }
        }
        if !items.isEmpty {
            try await target.upsert(items, schema: schema)
            copied += items.count
            progress(copied, index.count)
        }

        var cursor: Int64 = 0
        do throws(TrackingError) {
            while true {
                let page = try await source.storedEvents(after: cursor, limit: batchSize)
                guard let last = page.last else { break }
                let results = try await target.receive(page.map(\.event))
                if let refused = results.first(where: { $0 != .accepted }) {
                    throw TrackingError.storage(path: target.location, reason: "an event was refused: \(refused.message)")
                }
                cursor = last.cursor
            }
        } catch {
            throw .statement(reason: error.description, sql: nil)
        }

        let summary = Summary(from: source.location, to: target.location, images: copied, values: values,
                              events: try await eventCount(source), fields: schema.fields.count,
                              seconds: Date().timeIntervalSince(start))
        try await verify(summary, schema: schema, hashes: sourceHashes, index: index, exported: exported)
        return summary
    }

    /// The copy holds what the source holds: the fields, the images by name
    /// and content hash, each image's vector, palette, source, size and
    /// metadata as read from the source, every event. (A source read
    /// outside a snapshot that changes during the copy fails this check.)
    func verify(_ summary: Summary, schema: FieldSchema, hashes: [String: String], index: FeatureIndex,
                exported: [String: ExportedImage]) async throws(CatalogStoreError) {
        var problems: [String] = []
        let targetSchema = try await target.schema()
        if schema.fields.contains(where: { targetSchema.fields[$0.key] != $0.value }) { problems.append("the declared fields differ") }
        let targetHashes = try await target.contentHashes()
        if targetHashes.count != hashes.count { problems.append("\(targetHashes.count) images, not \(hashes.count)") }
        let differing = hashes.filter { targetHashes[$0.key] != $0.value }.count
        if differing > 0 { problems.append("\(differing) images missing or with another content hash") }
        let targetExport = try await target.export()
        let targetValues = targetExport.reduce(0) { $0 + $1.metadata.count }
        if targetValues != summary.values { problems.append("\(targetValues) metadata values, not \(summary.values)") }
        let differentRecords = targetExport.filter { exported[$0.imageName] != $0 }.count
        if differentRecords > 0 { problems.append("\(differentRecords) images with another source, size or metadata") }
        let targetIndex = try await target.loadIndex(learned: .exact)
        var differentFeatures = 0
        for row in 0..<index.count {
            guard let other = targetIndex.row(named: index.names[row]),
                  targetIndex.vector(at: other) == index.vector(at: row),
                  targetIndex.learnedVector(at: other) == index.learnedVector(at: row),
                  targetIndex.palettes[other] == index.palettes[row] else { differentFeatures += 1; continue }
        }
        if differentFeatures > 0 { problems.append("\(differentFeatures) images with another vector, learned vector or palette") }
        if try await target.learnedModel() != source.learnedModel() { problems.append("the learned model recorded differs") }
        let targetEvents = try await eventCount(target)
        if targetEvents < summary.events { problems.append("\(targetEvents) events, fewer than \(summary.events)") }
        if !problems.isEmpty {
            throw .unusable(location: target.location, reason: "the copy does not verify: " + problems.joined(separator: "; "))
        }
    }

    func eventCount(_ store: any CollectorStore) async throws(CatalogStoreError) -> Int {
        do { return try await store.eventCount() } catch { throw .statement(reason: error.description, sql: nil) }
    }
}
