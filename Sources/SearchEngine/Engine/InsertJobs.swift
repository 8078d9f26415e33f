import Foundation
import Synchronization
import VisualSearch

/// The data API's asynchronous inserts: each `/insert` becomes a
/// transaction whose images are fetched (under the engine's
/// ``ImageSourcePolicy``), decoded and committed by the ``Indexer``'s
/// pipeline in batches, in a background task, with progress that
/// `/insert/status/{trans_id}` reports.
///
/// What a status reports as succeeded is committed, so it survives a stop;
/// the transaction records themselves live in memory and are forgotten on
/// restart (re-send an insert to redo it: an insert is an upsert by `im_name`).
final class InsertJobs: Sendable {
    let indexer: Indexer
    let loader: QueryImageLoader
    let transactions = Mutex<[String: InsertStatusResponse.Progress]>([:])
    /// Transactions kept for status queries: the most recent 1000.
    static let retained = 1000
    /// Images fetched and committed together.
    static let batchSize = 16

    init(indexer: Indexer, loader: QueryImageLoader) {
        self.indexer = indexer
        self.loader = loader
    }

    /// Starts a transaction and returns its id at once.
    func start(_ items: [InsertItem]) -> String {
        let id = RequestID.make()
        let now = InsertJobs.timestamp()
        let progress = InsertStatusResponse.Progress(transactionID: id, processedPercent: items.isEmpty ? 100 : 0, total: items.count,
                                                     successCount: 0, failCount: 0, startTime: now, updateTime: now, errorList: [])
        transactions.withLock { all in
            if all.count >= InsertJobs.retained, let oldest = all.values.min(by: { ($0.startTime ?? "") < ($1.startTime ?? "") }) {
                all[oldest.transactionID] = nil
            }
            all[id] = progress
        }
        Task.detached(priority: .utility) { await self.run(id, items) }
        return id
    }

    /// The progress of a transaction.
    func status(_ id: String) -> InsertStatusResponse.Progress? {
        transactions.withLock { $0[id] }
    }

    func run(_ id: String, _ items: [InsertItem]) async {
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
            record(id, total: items.count, processed: batchStart + batch.count) { progress in
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
            }
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

    func record(_ id: String, total: Int, processed: Int, _ update: (inout InsertStatusResponse.Progress) -> Void) {
        transactions.withLock { all in
            guard var progress = all[id] else { return }
            update(&progress)
            progress.processedPercent = total == 0 ? 100 : min(100, processed * 100 / total)
            progress.updateTime = InsertJobs.timestamp()
            all[id] = progress
        }
    }

    static func timestamp() -> String {
        ISO8601DateFormatter().string(from: Date())
    }
}
