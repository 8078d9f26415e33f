import Foundation
import Synchronization
import VisualSearch

/// The data API's asynchronous inserts: each `/insert` becomes a
/// transaction whose images are fetched (under the engine's
/// ``ImageSourcePolicy``), decoded and committed by the ``Indexer``'s
/// pipeline in batches, in a background task, with progress that
/// `/insert/status/{trans_id}` reports.
///
/// The progress is saved in the catalog (``InsertJournal/saveInsertTransaction(_:)``)
/// at most every ``saveInterval`` while the transaction runs and always at
/// its end, so every server on the catalog — another replica, this one after
/// a restart — answers the status, and the work stays linear in the number
/// of images (saving after every batch rewrote the growing error list each
/// time: 10,000 images took 40 s). What a status reports as succeeded is
/// committed. One request carries at most ``maxItemsPerRequest`` images.
///
/// When the server stops, running transactions are cancelled between
/// batches (``cancelAll()``) and keep their last progress, saved then
/// (`processed_percent` below 100): re-send the insert to finish it — an
/// insert is an upsert by `im_name`.
final class InsertJobs: Sendable {
    let indexer: Indexer
    let loader: QueryImageLoader
    /// Where each transaction's progress is saved.
    let journal: any InsertJournal
    /// The transactions running in this process, by id.
    let running = Mutex<[String: Task<Void, Never>]>([:])
    /// Images fetched and committed together.
    static let batchSize = 16
    /// Images one insert request may carry: 1,000 (more is a 400: send several requests).
    static let maxItemsPerRequest = 1000
    /// The longest a running transaction's saved progress lags behind it.
    static let saveInterval: Duration = .milliseconds(500)

    /// Forgotten after every batch, so the engine's next query sees the new images.
    let versionCheck: VersionCheck

    init(indexer: Indexer, journal: any InsertJournal, loader: QueryImageLoader, versionCheck: VersionCheck) {
        self.indexer = indexer
        self.journal = journal
        self.loader = loader
        self.versionCheck = versionCheck
    }

    /// Starts a transaction, saves its first state and returns its id.
    /// - Throws: ``VisualSearchError/invalidParameter(name:reason:)`` beyond ``maxItemsPerRequest`` images.
    func start(_ items: [InsertItem]) async throws(VisualSearchError) -> String {
        guard items.count <= Self.maxItemsPerRequest else {
            throw .invalidParameter(name: "im_name", reason: "\(items.count) images in one insert is over the limit of \(Self.maxItemsPerRequest); send them in several requests")
        }
        let id = RequestID.make()
        let now = InsertJobs.timestamp()
        let progress = InsertStatusResponse.Progress(transactionID: id, processedPercent: items.isEmpty ? 100 : 0, total: items.count,
                                                     successCount: 0, failCount: 0, startTime: now, updateTime: now, errorList: [])
        try await journal.saveInsertTransaction(progress)
        running.withLock { running in
            running[id] = Task.detached(priority: .utility) {
                await self.run(progress, items)
                _ = self.running.withLock { $0.removeValue(forKey: id) }
            }
        }
        return id
    }

    /// Cancels every running transaction and waits until each has saved its last progress.
    func cancelAll() async {
        let tasks = running.withLock { Array($0.values) }
        for task in tasks { task.cancel() }
        for task in tasks { await task.value }
    }

    /// Waits until every transaction running now has finished and saved its progress.
    func finishAll() async {
        for task in running.withLock({ Array($0.values) }) { await task.value }
    }

    /// Transactions running in this process now.
    var runningCount: Int { running.withLock { $0.count } }

    /// The progress of a transaction, as last saved by whichever server runs it.
    func status(_ id: String) async throws(VisualSearchError) -> InsertStatusResponse.Progress? {
        try await journal.insertTransaction(id)
    }

    func run(_ initial: InsertStatusResponse.Progress, _ items: [InsertItem]) async {
        var progress = initial
        var saved = ContinuousClock.now
        for batchStart in stride(from: 0, to: items.count, by: InsertJobs.batchSize) {
            if Task.isCancelled { break }
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
            versionCheck.forget()
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
            let now = ContinuousClock.now
            guard Self.savesProgress(processed: processed, of: items.count, lastSaved: saved, now: now) else { continue }
            // A failed save (the database away for a moment) is retried with a later batch's.
            try? await journal.saveInsertTransaction(progress)
            saved = now
        }
        if Task.isCancelled {  // stopped between batches: what ran is committed and reported
            progress.updateTime = InsertJobs.timestamp()
            try? await journal.saveInsertTransaction(progress)
        }
    }

    /// Whether progress is saved after a batch: at the end, and otherwise once ``saveInterval`` has passed since the last save.
    static func savesProgress(processed: Int, of total: Int, lastSaved: ContinuousClock.Instant, now: ContinuousClock.Instant) -> Bool {
        processed >= total || lastSaved.duration(to: now) >= saveInterval
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
