import Foundation
import ImageOps
import Synchronization
import VisualSearch

/// The data API's asynchronous inserts: each `/insert` becomes a
/// transaction whose images are fetched, decoded and committed on a
/// background queue (never on the request's thread), with progress that
/// `/insert/status/{trans_id}` reports.
///
/// Images are committed in small batches, so what a status reports as
/// succeeded is in the catalog even if the server stops; transactions
/// themselves live in memory and are forgotten on restart (re-send an
/// insert to redo it — an insert is an upsert by `im_name`).
final class InsertJobs: Sendable {
    let catalog: Catalog
    let configuration: ServerConfiguration
    let queue = DispatchQueue(label: "vsearch.insert", qos: .utility)
    let transactions = Mutex<[String: InsertStatusResponse.Progress]>([:])
    /// Transactions kept for status queries: the most recent 1000.
    static let retained = 1000
    static let batchSize = 16

    init(catalog: Catalog, configuration: ServerConfiguration) {
        self.catalog = catalog
        self.configuration = configuration
    }

    /// Starts a transaction and returns its id at once.
    func start(_ items: [InsertItem]) -> String {
        let id = VisualSearchEngine.newRequestID()
        let now = InsertJobs.timestamp()
        let progress = InsertStatusResponse.Progress(transactionID: id, processedPercent: 0, total: items.count, successCount: 0,
                                                     failCount: 0, startTime: now, updateTime: now, errorList: [])
        transactions.withLock { all in
            if all.count >= InsertJobs.retained, let oldest = all.values.min(by: { ($0.startTime ?? "") < ($1.startTime ?? "") }) {
                all[oldest.transactionID] = nil
            }
            all[id] = progress
        }
        queue.async { self.run(id, items) }
        return id
    }

    /// The progress of a transaction.
    func status(_ id: String) -> InsertStatusResponse.Progress? {
        transactions.withLock { $0[id] }
    }

    func run(_ id: String, _ items: [InsertItem]) {
        var pending: [CatalogItem] = []
        var done = 0
        func record(success: Int, errors: [DataAPIError]) {
            transactions.withLock { all in
                guard var progress = all[id] else { return }
                progress.successCount += success
                progress.failCount += errors.count
                progress.errorList += errors
                progress.processedPercent = items.isEmpty ? 100 : min(100, done * 100 / items.count)
                progress.updateTime = InsertJobs.timestamp()
                all[id] = progress
            }
        }
        func commit() {
            guard !pending.isEmpty else { return }
            let batch = pending
            pending.removeAll()
            do {
                try declareFields(of: batch)
                try catalog.upsert(batch, schema: try catalog.schema())
                record(success: batch.count, errors: [])
            } catch {
                record(success: 0, errors: batch.map { DataAPIError(imageName: $0.imageName, index: nil, code: 500, message: error.message) })
            }
        }
        for (index, item) in items.enumerated() {
            do {
                let bytes = try load(item)
                let schema = try catalog.schema()
                if let problem = MetadataTable.validate(item.metadata, schema: schema) {
                    throw VisualSearchError.invalidMetadata(row: index, field: problem.field, reason: problem.reason)
                }
                let row = try Indexer.item(named: item.imageName, bytes: bytes, source: item.imageURL, metadata: item.metadata)
                pending.append(row)
                done += 1
                if pending.count >= InsertJobs.batchSize { commit() }
            } catch {
                done += 1
                let message: String
                switch error {
                case let error as VisualSearchError: message = error.message
                case let error as ImageOpsError: message = "Invalid image: \(error.description)"
                case let error as ServerError: message = error.message
                default: message = "\(error)"
                }
                record(success: 0, errors: [DataAPIError(imageName: item.imageName, index: index, code: 400, message: message)])
            }
        }
        commit()
        done = items.count
        record(success: 0, errors: [])
    }

    func load(_ item: InsertItem) throws -> [UInt8] {
        switch try configuration.imageSource(item.imageURL, parameter: "im_url") {
        case .file(let path): return try FileIO.read(path, maxBytes: ImageLimits.default.maxInputBytes)
        case .url(let text):
            guard let url = URL(string: text) else { throw VisualSearchError.invalidParameter(name: "im_url", reason: "not a URL") }
            return try QueryImage.download(url)
        default: throw VisualSearchError.invalidParameter(name: "im_url", reason: "unsupported")
        }
    }

    /// Declares fields new to the schema, their types inferred from this batch.
    func declareFields(of batch: [CatalogItem]) throws(VisualSearchError) {
        var schema = try catalog.schema()
        let columns = Set(batch.flatMap { $0.metadata.keys }).filter { schema.fields[$0] == nil }
        guard !columns.isEmpty else { return }
        let inferred = FieldSchema.infer(columns: Array(columns), rows: batch.map(\.metadata))
        for (name, type) in inferred.fields { schema.fields[name] = type }
        try catalog.declare(schema)
    }

    static func timestamp() -> String {
        ISO8601DateFormatter().string(from: Date())
    }
}
