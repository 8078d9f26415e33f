import SearchEngine
import ServiceLifecycle

/// The server's background upkeep of its HNSW graphs: every `interval` it
/// asks the engine to rebuild the graphs whose removed rows passed the
/// policy's share (``VisualSearchEngine/compactGraphs()``), so a catalog that
/// loses many items does not keep their holes until someone runs `vsearch
/// catalog hnsw --rebuild`. Searches use the old graph while a new one is
/// built (one thread). As the server stops, its `onStop` stops a rebuild in
/// flight (``VisualSearchEngine/stopCompacting()``) before it saves the
/// graphs; the service itself ends with the group's graceful shutdown.
public struct GraphCompaction: Service {
    public let engine: VisualSearchEngine
    public let interval: Duration
    let clock: any Clock<Duration>

    public init(engine: VisualSearchEngine, interval: Duration, clock: any Clock<Duration> = ContinuousClock()) {
        self.engine = engine
        self.interval = interval
        self.clock = clock
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do { try await clock.sleep(for: interval) } catch { return }
                await engine.compactGraphs()
            }
        }
    }
}
