import Foundation
import Synchronization
import VisualSearch

/// The data API's asynchronous inserts: each `/insert` becomes a
/// transaction whose images are fetched (under the engine's
/// ``ImageSourcePolicy``), decoded and committed by the ``Indexer``'s
/// pipeline in batches, in a background task, with progress that
/// `/insert/status/{trans_id}` reports.
///
/// The progress is saved in the catalog after every batch
/// (``CatalogStore/saveInsertTransaction(_:)``), so every server on the
/// catalog — another replica, this one after a restart — answers the status.
/// What a status reports as succeeded is committed. A transaction whose
/// server stopped mid-way keeps its last saved progress (re-send the insert
/// to finish it: an insert is an upsert by `im_name`).
final class InsertJobs: Sendable {
    let indexer: Indexer
    let loader: QueryImageLoader
    var store: any CatalogStore { indexer.store }
    /// Images fetched and committed together.
    static let batchSize = 16

    init(indexer: Indexer, loader: QueryImageLoader) {
        self.indexer = indexer
        self.loader = loader
    }

    /// Starts a transaction, saves its first state and returns its id.
    func start(_ items: [InsertItem]) async throws(VisualSearchError) -> String {
        let id = RequestID.make()
        let now = InsertJobs.timestamp()
        let progress = InsertStatusResponse.Progress(transactionID: id, processedPercent: items.isEmpty ? 100 : 0, total: items.count,
                                                     successCount: 0, failCount: 0, startTime: now, updateTime: now, errorList: [])
        try await store.saveInsertTransaction(progress)
        Task.detached(priority: .utility) { await self.run(progress, items) }
        return id
    }

    /// The progress of a transaction, as last saved by whichever server runs it.
    func status(_ id: String) async throws(VisualSearchError) -> InsertStatusResponse.Progress? {
        try await store.insertTransaction(id)
    }

    func run(_ initial: InsertStatusResponse.Progress, _ items: [InsertItem]) async {
        var progress = initial
        for batchStart in stride(from: 0, to: items.count, by: InsertJobs.batchSize) {
            let batch = Array(items[batchStart..<min(items.count, batchStart + InsertJobs.batchSize)])
            let sources = await fetch(batch)
            let errors = Mutex<[DataAPIError]>([])
            let outcome: Result<Indexer.Summary, VisualSearchError>
            do throws(VisualSearchError) {
                outcome = .success(try await indexer.ingest(sources, updatesMetadataOfUnchanged: true, onEvent: { event in
                    if case .image(let name, let position, let error?, _, _) = event {
                        errors.withLock { $0.append(DataAPIError(imageName: name, index: batchStart + position, code: 400, message: error)) }
                    }
                }))
            } catch {
                outcome = .failure(error)
            }
            let failed = errors.withLock { $0 }
            switch outcome {
            case .success:
                progress.successCount += batch.count - failed.count
                progress.failCount += failed.count
                progress.errorList += failed
            case .failure(let error):
                progress.failCount += batch.count
                progress.errorList += batch.enumerated().map {
                    DataAPIError(imageName: $0.element.imageName, index: batchStart + $0.offset, code: 500, message: error.message)
                }
            }
            let processed = batchStart + batch.count
            progress.processedPercent = items.isEmpty ? 100 : min(100, processed * 100 / items.count)
            progress.updateTime = InsertJobs.timestamp()
            // A failed save (the database away for a moment) is retried with the next batch's.
            try? await store.saveInsertTransaction(progress)
        }
    }

    /// Fetches a batch's images concurrently; a failed fetch becomes a failed source.
    func fetch(_ batch: [InsertItem]) async -> [Indexer.Source] {
        await withTaskGroup(of: (Int, Indexer.Source).self) { group in
            for (offset, item) in batch.enumerated() {
                group.addTask {
                    let content: Indexer.Source.Content
                    do throws(VisualSearchError) { content = .bytes(try await self.loader.load(location: item.imageURL)) } catch {
                        content = .failed(error.message)
                    }
                    return (offset, Indexer.Source(imageName: item.imageName, origin: item.imageURL, content: content, metadata: item.metadata))
                }
            }
            var sources = [Indexer.Source?](repeating: nil, count: batch.count)
            for await (offset, source) in group { sources[offset] = source }
            return sources.compactMap { $0 }
        }
    }

    static func timestamp() -> String {
        ISO8601DateFormatter().string(from: Date())
    }
}
