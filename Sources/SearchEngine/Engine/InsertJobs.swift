import Foundation
import ConcurrencyToolkit
import VisualSearch

/// The data API's asynchronous inserts: each `/insert` becomes a
/// transaction whose images are fetched (under the engine's
/// ``ImageSourcePolicy``), decoded and committed by the ``Indexer``'s
/// pipeline in batches, with progress that `/insert/status/{trans_id}` reports.
/// The transactions run as child tasks of ``run()``, which the engine's
/// owner runs (a server's `EngineUpkeep`; a command line's
/// ``VisualSearchEngine/withInserts(_:)``), as PostgresNIO's owner runs its
/// client's `run()`: their lifetime is that scope's.
///
/// The progress is saved in the catalog (``InsertJournal/saveInsertTransaction(_:)``)
/// at most every ``saveInterval`` while the transaction runs and always at
/// its end, so every server on the catalog — another replica, this one after
/// a restart — answers the status, and the work stays linear in the number
/// of images (saving after every batch rewrote the growing error list each
/// time: 10,000 images took 40 s). What a status reports as succeeded is
/// committed. One request carries at most ``maxItemsPerRequest`` images.
///
/// When ``run()``'s task is cancelled (the server stops), running transactions
/// stop between batches and keep their last progress, saved then
/// (`processed_percent` below 100), and waiting ones are dropped (their
/// status stays at 0 %): re-send the insert to finish it — an insert is an
/// upsert by `im_name`.
///
/// Bounded (issue 37): at most ``InsertLimits/maxRunning`` transactions run
/// at once and ``InsertLimits/maxQueued`` wait (more are refused, 503); each
/// batch a transaction fetches holds its encoded bytes in the
/// ``ImageWorkPool``'s budget (``ImageWorkPool/reserve(pixels:)``) from before
/// its downloads start until it is committed; and a status keeps the
/// first ``maxErrorsKept`` errors, their image names cut to
/// ``maxNameCharacters`` and messages to ``maxMessageCharacters``
/// (`fail_count` counts them all) — 1,000 failing images with 15 kB names
/// made a 30 MB status.
final class InsertJobs: Sendable {
    let indexer: Indexer
    let loader: QueryImageLoader
    /// Where each transaction's progress is saved.
    let journal: any InsertJournal
    /// How many transactions run and wait.
    let limits: InsertLimits
    /// The transactions running in this process, and those waiting to run (observed: ``finishAll()`` waits on it).
    let queue = Observed(Queue())

    struct Pending: Sendable {
        var progress: InsertStatusResponse.Progress
        var items: [InsertItem]
    }

    struct Queue {
        /// Launched (under ``InsertLimits/maxRunning``), by id: waiting in ``toStart`` or running.
        var running: Set<String> = []
        /// Launched, for ``run()`` to start.
        var toStart: [Pending] = []
        /// Running their batches now, by id (tests wait for a transaction to have begun).
        var begun: Set<String> = []
        /// Waiting for a running one to end, oldest first.
        var pending: [Pending] = []
        /// Accepted, their first state being saved.
        var starting = 0

        var accepted: Int { running.count + pending.count + starting }
    }
    /// Images fetched and committed together.
    static let batchSize = 16
    /// Images one insert request may carry: 1,000 (more is a 400: send several requests).
    static let maxItemsPerRequest = 1000
    /// The longest a running transaction's saved progress lags behind it.
    static let saveInterval: Duration = .milliseconds(500)
    /// Errors a status lists: the first 100 (`fail_count` counts every failure).
    static let maxErrorsKept = 100
    /// Characters of an image name a status error keeps: 200 (longer names are cut, with "…").
    static let maxNameCharacters = 200
    /// Characters of a status error's message: 1,000.
    static let maxMessageCharacters = 1000

    /// Forgotten after every batch, so the engine's next query sees the new images.
    let versionCheck: VersionCheck

    init(indexer: Indexer, journal: any InsertJournal, loader: QueryImageLoader, versionCheck: VersionCheck,
         limits: InsertLimits = InsertLimits()) {
        self.indexer = indexer
        self.journal = journal
        self.loader = loader
        self.versionCheck = versionCheck
        self.limits = limits
    }

    /// Starts a transaction (or queues it behind ``InsertLimits/maxRunning``
    /// running ones), saves its first state and returns its id.
    /// - Throws: ``VisualSearchError/invalidParameter(name:reason:)`` beyond ``maxItemsPerRequest`` images;
    ///   ``VisualSearchError/overloaded(reason:retryAfter:)`` when ``InsertLimits/maxRunning`` transactions
    ///   run and ``InsertLimits/maxQueued`` wait already (nothing is saved).
    func start(_ items: [InsertItem]) async throws(VisualSearchError) -> String {
        guard items.count <= Self.maxItemsPerRequest else {
            throw .invalidParameter(name: "im_name", reason: "\(items.count) images in one insert is over the limit of \(Self.maxItemsPerRequest); send them in several requests")
        }
        let limits = self.limits
        let accepted = queue.withLock { queue in
            guard queue.accepted < limits.maxRunning + limits.maxQueued else { return false }
            queue.starting += 1
            return true
        }
        guard accepted else {
            throw .overloaded(reason: "\(limits.maxRunning) insert transactions are running and \(limits.maxQueued) waiting, the most this server takes",
                              retryAfter: limits.retryAfter)
        }
        let id = RequestID.make()
        let now = InsertJobs.timestamp()
        let progress = InsertStatusResponse.Progress(transactionID: id, processedPercent: items.isEmpty ? 100 : 0, total: items.count,
                                                     successCount: 0, failCount: 0, startTime: now, updateTime: now, errorList: [])
        do throws(CatalogStoreError) {
            try await journal.saveInsertTransaction(progress)
        } catch {
            queue.withLock { $0.starting -= 1 }
            throw VisualSearchError(error)
        }
        queue.withLock { queue in
            queue.starting -= 1
            if queue.running.count < limits.maxRunning {
                launch(Pending(progress: progress, items: items), in: &queue)
            } else {
                queue.pending.append(Pending(progress: progress, items: items))
            }
        }
        return id
    }

    /// Hands a transaction to ``run()``; when it ends, the oldest waiting one starts.
    func launch(_ transaction: Pending, in queue: inout Queue) {
        queue.running.insert(transaction.progress.transactionID)
        queue.toStart.append(transaction)
    }

    /// Runs the transactions ``start(_:)`` accepts, each as a child task of
    /// this call, until the task running it is cancelled. Then each running
    /// transaction stops between two batches and saves its progress, those
    /// not yet started are dropped (their saved status stays at 0 %: re-send
    /// the insert), and it returns once every one has saved. Transactions
    /// accepted while nothing runs them wait for the next call.
    func run() async {
        await withDiscardingTaskGroup { group in
            // Woken by each change of the queue (an observation, never a timer); false once this task is cancelled.
            while await queue.until({ queue.read { !$0.toStart.isEmpty } }), !Task.isCancelled {
                let starting = queue.withLock { queue in
                    defer { queue.toStart.removeAll() }
                    return queue.toStart
                }
                for transaction in starting {
                    group.addTask(priority: .utility) {
                        let id = transaction.progress.transactionID
                        self.queue.withLock { _ = $0.begun.insert(id) }
                        await self.run(transaction.progress, transaction.items)
                        self.queue.withLock { queue in
                            queue.begun.remove(id)
                            queue.running.remove(id)
                            if !queue.pending.isEmpty, queue.running.count < self.limits.maxRunning {
                                self.launch(queue.pending.removeFirst(), in: &queue)
                            }
                        }
                    }
                }
            }
            // Stopping: those not started and those waiting are dropped, their saved status at 0 %.
            queue.withLock { queue in
                for transaction in queue.toStart { queue.running.remove(transaction.progress.transactionID) }
                queue.toStart.removeAll()
                queue.pending.removeAll()
            }
        }
    }

    /// Waits until every transaction running or waiting now has finished and saved its progress.
    func finishAll() async {
        _ = await queue.until { queue.read { $0.running.isEmpty && $0.pending.isEmpty } }
    }

    /// Transactions running or waiting in this process now.
    var runningCount: Int { queue.read { $0.running.count + $0.pending.count } }

    /// The progress of a transaction, as last saved by whichever server runs it.
    func status(_ id: String) async throws(VisualSearchError) -> InsertStatusResponse.Progress? {
        try await fromStore { () async throws(CatalogStoreError) in try await journal.insertTransaction(id) }
    }

    func run(_ initial: InsertStatusResponse.Progress, _ items: [InsertItem]) async {
        var progress = initial
        var saved = ContinuousClock.now
        for batchStart in stride(from: 0, to: items.count, by: InsertJobs.batchSize) {
            if Task.isCancelled { break }
            let batch = Array(items[batchStart..<min(items.count, batchStart + InsertJobs.batchSize)])
            // The batch's bytes are charged to the pool's budget before they are fetched, until it is committed.
            let held: ImageWorkPool.Reservation?
            do throws(VisualSearchError) { held = try await reserve(batch) } catch { break }  // cancelled while waiting
            let sources = await fetch(batch)
            held?.shrink(to: ImageWorkPool.pixels(forBytes: Self.byteCount(of: sources)))
            let errors = Locked<[DataAPIError]>([])
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
            held?.release()  // the batch is committed; its bytes go with it
            versionCheck.forget()
            let failed = errors.withLock { $0 }
            switch outcome {
            case .success:
                progress.successCount += batch.count - failed.count
                progress.failCount += failed.count
                Self.keep(failed, in: &progress)
            case .failure(let error):
                progress.failCount += batch.count
                Self.keep(batch.enumerated().map {
                    DataAPIError(imageName: $0.element.imageName, index: batchStart + $0.offset, code: 500, message: error.message)
                }, in: &progress)
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

    /// Adds errors to a status's list, at most ``maxErrorsKept`` in all, each bounded (``bounded(_:)``).
    static func keep(_ errors: [DataAPIError], in progress: inout InsertStatusResponse.Progress) {
        let room = max(0, maxErrorsKept - progress.errorList.count)
        progress.errorList += errors.sorted { ($0.index ?? 0) < ($1.index ?? 0) }.prefix(room).map(bounded)
    }

    /// An error as a status keeps it: its image name cut to ``maxNameCharacters``
    /// (and the name cut the same way where the message repeats it), its message to ``maxMessageCharacters``.
    static func bounded(_ error: DataAPIError) -> DataAPIError {
        var message = error.message
        var name = error.imageName
        if let full = name, full.count > maxNameCharacters {
            let cut = String(full.prefix(maxNameCharacters)) + "…"
            message = message.replacingOccurrences(of: full, with: cut)
            name = cut
        }
        if message.count > maxMessageCharacters { message = String(message.prefix(maxMessageCharacters)) + "…" }
        return DataAPIError(imageName: name, index: error.index, code: error.code, message: message)
    }

    /// With an ``ImageWorkPool``, reserves in its budget the most a batch's
    /// images may hold once fetched (``QueryImageLoader/expectedBytes(location:)``,
    /// at 4 bytes a pixel), all at once: a transaction never holds part of a
    /// batch while it waits for the rest, so two cannot keep each other waiting.
    func reserve(_ batch: [InsertItem]) async throws(VisualSearchError) -> ImageWorkPool.Reservation? {
        guard let pool = indexer.configuration.imageWork else { return nil }
        let bytes = batch.reduce(0) { $0 + loader.expectedBytes(location: $1.imageURL) }
        return try await pool.reserve(pixels: ImageWorkPool.pixels(forBytes: bytes))
    }

    /// The encoded bytes fetched sources hold.
    static func byteCount(of sources: [Indexer.Source]) -> Int {
        sources.reduce(0) { total, source in
            guard case .bytes(let bytes) = source.content else { return total }
            return total + bytes.count
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
