import Foundation
import Hummingbird
import Logging
import NIOCore
import Tracking
import VisualSearch

/// `vsearch serve`: a local HTTP server that speaks the ViSearch and
/// ProductSearch protocols (and collects tracking events), answered by the
/// offline engine — so an app, or any public ViSearch SDK pointed at it,
/// runs with no account and no network.
///
/// Assembled from small parts: middleware for the request log and the
/// concurrency cap; an ``Endpoint`` frame for parameters, auth, deadline and
/// error JSON; route groups per API family.
///
/// ```swift
/// let server = try VisualSearchServer(configuration: ServerConfiguration(catalogPath: "catalog.sqlite", port: 0))
/// try await server.run { port in print("listening on", port) }   // until SIGINT/SIGTERM
/// ```
public struct VisualSearchServer: Sendable {
    public let configuration: ServerConfiguration
    public let engine: VisualSearchEngine
    /// The collector's store, in the catalog file.
    public let events: EventStore
    let logger: Logger

    /// Opens the catalog and loads the engine.
    /// - Throws: ``VisualSearchError`` for an unusable catalog.
    public init(configuration: ServerConfiguration, logger: Logger? = nil) throws(VisualSearchError) {
        self.configuration = configuration
        engine = try VisualSearchEngine(catalog: try Catalog(path: configuration.catalogPath))
        do { events = try EventStore(path: configuration.catalogPath) } catch {
            throw .catalog(path: configuration.catalogPath, reason: error.description)
        }
        self.logger = logger ?? Logger(label: "vsearch.serve")
    }

    /// The router with every route and middleware.
    func router() -> Router<ServerContext> {
        let router = Router(context: ServerContext.self)
        router.add(middleware: RequestLogMiddleware(logger: logger))
        router.add(middleware: ConcurrencyLimitMiddleware(limit: configuration.maxConcurrentRequests))
        let endpoint = Endpoint(configuration: configuration)
        let viSearch = ViSearchRoutes(engine: engine, endpoint: endpoint)
        viSearch.register(on: router)
        ProductSearchRoutes(engine: engine, endpoint: endpoint, viSearch: viSearch).register(on: router)
        DataAPIRoutes(catalog: engine.catalog, jobs: InsertJobs(catalog: engine.catalog, configuration: configuration), endpoint: endpoint)
            .register(on: router)
        HealthRoute(catalog: engine.catalog, endpoint: endpoint).register(on: router)
        TrackingRoutes(store: events, endpoint: endpoint).register(on: router)
        return router
    }

    /// Serves until SIGINT or SIGTERM, then finishes requests in flight and returns.
    /// `onListening` receives the bound port (useful with port 0).
    public func run(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        let application = Application(
            router: router(),
            server: .http1(configuration: .init(idleTimeout: .milliseconds(Int64(configuration.idleTimeout * 1000)))),
            configuration: ApplicationConfiguration(address: .hostname(configuration.host, port: configuration.port),
                                                    serverName: "vsearch/\(ClientConfiguration.version)"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? configuration.port) },
            logger: logger
        )
        try await application.runService()  // graceful on SIGTERM and SIGINT
    }
}
