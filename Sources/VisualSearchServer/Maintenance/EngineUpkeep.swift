import SearchEngine
import ServiceLifecycle

/// The engine's background work in a server, as one `Service` the
/// application owns (after the HTTP server in its `ServiceGroup`, so it
/// stops after the last request):
/// - it runs the data API's insert transactions, as child tasks
///   (``VisualSearchEngine/runInserts()``);
/// - every ``compactionInterval`` it asks the engine to rebuild the HNSW
///   graphs whose removed rows passed the policy's share
///   (``VisualSearchEngine/compactGraphs()``), so a catalog that loses many
///   items does not keep their holes until someone runs `vsearch catalog hnsw
///   --rebuild` (searches use the old graph while a new one is built, on one thread);
/// - as the server stops (graceful shutdown, or its task cancelled) it stops
///   the insert transactions running between two batches, each saving its
///   progress (their tasks cancelled), stops a rebuild in
///   flight (``VisualSearchEngine/stopCompacting()``) and saves the graphs
///   caught up in memory since the last save (``VisualSearchEngine/saveGraphs()``),
///   so a restart loads them as they are. Then it returns.
public struct EngineUpkeep: Service {
    public let engine: VisualSearchEngine
    /// How often graphs are compacted; nil: never (`vsearch catalog hnsw --rebuild` still does).
    /// An engine without graphs of its own (PostgreSQL runs its index) never compacts.
    public let compactionInterval: Duration?
    let clock: any Clock<Duration>

    public init(engine: VisualSearchEngine, compactionInterval: Duration?, clock: any Clock<Duration> = ContinuousClock()) {
        self.engine = engine
        self.compactionInterval = compactionInterval
        self.clock = clock
    }

    public func run() async {
        let engine = engine
        await withDiscardingTaskGroup { group in
            group.addTask { await engine.runInserts() }
            await cancelWhenGracefulShutdown {
                await withTaskCancellationHandler {
                    await compactUntilCancelled()
                } onCancel: {
                    engine.stopCompacting()  // a rebuild in flight stops within about a thousand rows; its graph stays the old one
                }
            }
            // The server has stopped taking requests: the inserts stop between batches, each saving its progress.
            group.cancelAll()
        }
        try? await engine.saveGraphs()
    }

    /// Compacts every ``compactionInterval`` until the task is cancelled; only waits when there is nothing to compact.
    func compactUntilCancelled() async {
        guard let interval = compactionInterval, engine.approximate != nil else {
            while !Task.isCancelled { try? await clock.sleep(for: .seconds(3600)) }
            return
        }
        while !Task.isCancelled {
            do { try await clock.sleep(for: interval) } catch { return }
            await engine.compactGraphs()
        }
    }
}
