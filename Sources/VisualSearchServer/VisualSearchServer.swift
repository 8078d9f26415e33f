import Foundation
import Hummingbird
import Logging
import NIOCore
import SearchEngine
import ServiceLifecycle
import Tracking
import VisualSearch

/// `vsearch serve`: an HTTP server that speaks the ViSearch and
/// ProductSearch protocols (and collects tracking events), answered by the
/// offline engine — so an app, or any public ViSearch SDK pointed at it,
/// runs with no account and no network.
///
/// Assembled from parts you can also use on their own: middleware for the
/// response headers (`nosniff`, `no-store`), the request log, metrics,
/// admission (``ServerLimits``: client limits, lanes, load shedding); a ``ConnectionGuard`` on every connection
/// (slow clients, the connection limit); ``ServiceRoutes`` (any
/// ``VisualSearchService``), ``CollectorRoutes`` and ``StatsRoute`` (any
/// ``CollectorStore``), ``HealthRoute``, ``CatalogRoute``, ``ImageRoutes``
/// (originals and thumbnails) and ``WebPageRoutes`` (the search and
/// analytics pages), each mountable on your own Hummingbird router; and
/// ``application()``, a Hummingbird application you can run alone or add to
/// your own `ServiceGroup`.
///
/// ```swift
/// let server = try await VisualSearchServer(configuration: ServerConfiguration(catalog: .sqlite(path: "catalog.sqlite"), port: 0))
/// try await server.run { port in print("listening on", port) }   // until SIGINT/SIGTERM
/// ```
public struct VisualSearchServer: Sendable {
    public let configuration: ServerConfiguration
    /// The catalog and the collector's events.
    public let store: any CatalogStore & CollectorStore
    public let engine: VisualSearchEngine
    /// The thumbnails `/images/{im_name}?size=N` makes and keeps.
    public let thumbnails: ThumbnailCache
    /// Where uploads are decoded and thumbnails made: the engine's
    /// ``VisualSearchEngine/Configuration/imageWork`` when it has one.
    public let imageWork: ImageWorkPool?
    /// What `/metrics` reports.
    public let metrics: ServerMetrics
    let admission: Admission
    let connections = ConnectionCounter()
    let logger: Logger

    /// Opens the catalog (it must exist) and loads the engine, with the
    /// server's image limits and an ``ImageWorkPool`` of ``ServerLimits/imageWork``.
    /// - Throws: ``VisualSearchError`` for a missing or unusable catalog.
    public init(configuration: ServerConfiguration, logger: Logger? = nil) async throws(VisualSearchError) {
        let store = try await configuration.catalog.open(creating: false)
        try await self.init(configuration: configuration, store: store,
                            engine: try await VisualSearchEngine(store: store, configuration: Self.engineConfiguration(for: configuration)),
                            logger: logger)
    }

    /// What the engine of a server with `configuration` is told: where `im_url`
    /// may read, the server's image limits (not the command line's) and an image work pool.
    public static func engineConfiguration(for configuration: ServerConfiguration) -> VisualSearchEngine.Configuration {
        var engine = VisualSearchEngine.Configuration()
        engine.imageSources = configuration.imageSourcePolicy
        engine.recommendations = configuration.recommendations
        engine.limits = configuration.limits.image
        engine.imageWork = ImageWorkPool(limits: configuration.limits.imageWork)
        engine.imageRoute = "/images/"  // ImageRoutes: never a path on the server's disk
        engine.learned = configuration.learned
        engine.similarity = configuration.similarity
        return engine
    }

    /// Serves an engine you made, over its store. Uploads are decoded where
    /// the engine's configuration says (on the request's task when it has no
    /// ``ImageWorkPool``; ``engineConfiguration(for:)`` gives one).
    public init(configuration: ServerConfiguration, store: any CatalogStore & CollectorStore, engine: VisualSearchEngine,
                logger: Logger? = nil) async throws(VisualSearchError) {
        self.configuration = configuration
        self.store = store
        self.engine = engine
        self.logger = logger ?? Logger(label: "vsearch.serve")
        imageWork = engine.configuration.imageWork
        metrics = ServerMetrics()
        admission = Admission(limits: configuration.limits, maxConcurrentLightRequests: configuration.maxConcurrentRequests,
                              clock: configuration.admissionClock)
        thumbnails = ThumbnailCache(directory: configuration.thumbnailCache, imageWork: imageWork, logger: self.logger)
    }

    /// The router with every route and middleware.
    public func router() -> Router<ServerContext> {
        let router = Router(context: ServerContext.self)
        router.add(middleware: ResponseHeadersMiddleware())  // outermost: every answer, refusals and 404s included
        router.add(middleware: RequestLogMiddleware(logger: logger))
        router.add(middleware: MetricsMiddleware(metrics: metrics))
        router.add(middleware: AdmissionMiddleware(admission: admission, configuration: configuration, metrics: metrics))
        ServiceRoutes(service: engine, configuration: configuration).register(on: router)
        HealthRoute(store: store, configuration: configuration).register(on: router)
        CollectorRoutes(store: store, configuration: configuration, metrics: metrics).register(on: router)
        if configuration.servesMetrics {
            let store = self.store
            MetricsRoute(metrics: metrics, configuration: configuration, admission: admission, imageWork: imageWork,
                         catalogSize: { try? await store.count() }).register(on: router)
        }
        StatsRoute(store: store, configuration: configuration).register(on: router)
        CatalogRoute(store: store, configuration: configuration).register(on: router)
        let engine = self.engine
        ImageRoutes(cache: thumbnails, sources: { names in await engine.sources(of: names) }).register(on: router)
        if configuration.servesWebPage {
            WebPageRoutes(assets: configuration.webRoot.map(WebAssets.folder) ?? .embedded).register(on: router)
        }
        return router
    }

    /// The Hummingbird application: a `Service`, to run or to add to a `ServiceGroup`.
    /// `onListening` receives the bound port (useful with port 0).
    public func application(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) -> some ApplicationProtocol {
        let configuration = self.configuration
        let limits = configuration.limits.connections, connections = self.connections, metrics = self.metrics
        let perAddress = configuration.limits.clients.addressHeader == nil, refusalDelay = configuration.limits.clients.refusalDelay
        return Application(
            router: router(),
            server: .http1(configuration: .init(
                additionalChannelHandlers: [ConnectionPersistence.installer(), ConnectionGuard(limits: limits, counter: connections, metrics: metrics,
                                                            limitsPerAddress: perAddress, refusalDelay: refusalDelay)],
                idleTimeout: .milliseconds(Int64(configuration.idleTimeout * 1000)))),
            configuration: ApplicationConfiguration(address: .hostname(configuration.host, port: configuration.port),
                                                    serverName: "vsearch/\(ClientConfiguration.version)"),
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? configuration.port) },
            logger: logger
        )
    }

    /// Serves until SIGINT or SIGTERM (or until its task is cancelled), then
    /// finishes requests in flight, stops running insert transactions between
    /// batches (their progress saved) and returns.
    public func run(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        do {
            try await application(onListening: onListening).runService()  // graceful on SIGTERM and SIGINT
        } catch {
            await engine.cancelInserts()
            throw error
        }
        await engine.cancelInserts()
    }
}
