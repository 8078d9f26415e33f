import Foundation
import ConcurrencyToolkit
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import CatalogStores
import SearchEngine
import ServiceLifecycle
import Tracking
import VisualSearch

/// `vsearch serve`: an HTTP server that speaks the ViSearch and
/// ProductSearch protocols (and collects tracking events), answered by any
/// ``VisualSearchService`` — the offline engine for `vsearch serve` — so an
/// app, or any public ViSearch SDK pointed at it, runs with no account and
/// no network.
///
/// Assembled from parts you can also use on their own: middleware for the
/// response headers (`nosniff`, `no-store`), the request log, metrics,
/// admission (``ServerLimits``: client limits, lanes, load shedding); an ``AcceptGate`` before any connection
/// has a pipeline (bursts closed at accept) and a ``ConnectionGuard`` on every connection (slow clients, the
/// connection limits' answers); ``ServiceRoutes`` (any
/// ``VisualSearchService``), ``CollectorRoutes`` and ``StatsRoute`` (any
/// ``CollectorStore``), ``HealthRoute`` and ``CatalogRoute`` (any
/// ``CatalogAdmin``), ``ImageRoutes`` (any ``CatalogImageSources``: originals
/// and thumbnails) and ``WebPageRoutes`` (the search and analytics pages),
/// each mountable on your own Hummingbird router; and ``application()``, a
/// Hummingbird application you can run alone or add to your own `ServiceGroup`.
///
/// ```swift
/// let configuration = ServerConfiguration(catalog: .sqlite(path: "catalog.sqlite"), port: 0)
/// try await configuration.catalog.withCatalog { catalog in   // a database's pool lives in this scope
///     let server = try await VisualSearchServer(configuration: configuration, catalog: catalog)
///     try await server.run { port in print("listening on", port) }   // until SIGINT/SIGTERM
/// }
/// ```
public struct VisualSearchServer<Service: VisualSearchService>: Sendable where Service.Failure: ServedFailure {
    public let configuration: ServerConfiguration
    /// What answers the ViSearch and ProductSearch routes.
    public let service: Service
    /// The catalog `/health` and `/catalog` read.
    public let catalog: any CatalogAdmin
    /// Where `/v3/events` stores events and `/stats` reads them.
    public let collector: any CollectorStore
    /// Where the image routes find a catalog image's file or URL.
    public let imageSources: any CatalogImageSources
    /// The thumbnails `/images/{im_name}?size=N` makes and keeps.
    public let thumbnails: ThumbnailCache
    /// Where thumbnails are made (the pool the service decodes uploads on, when it has one).
    public let imageWork: ImageWorkPool?
    /// What `/metrics` reports.
    public let metrics: ServerMetrics
    /// Services the application owns beside its HTTP server (Hummingbird's
    /// `Application(router:services:)`): started with it, stopped after it —
    /// the last of them first — so they stop after the last request (the engine's ``EngineUpkeep``).
    public let services: [any ServiceLifecycle.Service]
    let admission: Admission
    let connections = ConnectionCounter()
    /// Decides at accept whether a connection gets a pipeline at all.
    let gate: AcceptGate
    let logger: Logger

    /// Serves `service` with the given stores.
    /// - Parameters:
    ///   - imageWork: the pool thumbnails are made on (the service's own, when it decodes on one).
    ///   - services: owned by the application, stopped after its HTTP server, the last of them first.
    public init(configuration: ServerConfiguration, service: Service, catalog: any CatalogAdmin, collector: any CollectorStore,
                imageSources: any CatalogImageSources, imageWork: ImageWorkPool? = nil, services: [any ServiceLifecycle.Service] = [],
                logger: Logger? = nil) {
        self.configuration = configuration
        self.service = service
        self.catalog = catalog
        self.collector = collector
        self.imageSources = imageSources
        self.services = services
        self.logger = logger ?? Logger(label: "vsearch.serve")
        self.imageWork = imageWork
        metrics = ServerMetrics()
        gate = AcceptGate(limits: configuration.limits.connections, limitsPerAddress: configuration.limits.clients.addressHeader == nil)
        admission = Admission(limits: configuration.limits, maxConcurrentLightRequests: configuration.maxConcurrentRequests,
                              clock: configuration.admissionClock)
        thumbnails = ThumbnailCache(directory: configuration.thumbnailCache, imageWork: imageWork, logger: self.logger)
    }
    /// The router with every route and middleware. Every GET route answers
    /// HEAD too: the same status and headers, no body (Hummingbird's
    /// `autoGenerateHeadEndpoints`, which runs the GET handler).
    public func router() -> Router<ServerContext> {
        let router = Router(context: ServerContext.self, options: .autoGenerateHeadEndpoints)
        router.add(middleware: ResponseHeadersMiddleware())  // outermost: every answer, refusals and 404s included
        router.add(middleware: RequestLogMiddleware(logger: logger))
        router.add(middleware: MetricsMiddleware(metrics: metrics))
        router.add(middleware: AdmissionMiddleware(admission: admission, limits: configuration.limits, credentials: configuration.credentials,
                                                  maxBodyBytes: configuration.maxBodyBytes, requestTimeout: configuration.requestTimeout,
                                                  metrics: metrics))
        ServiceRoutes(service: service, settings: configuration.endpoints).register(on: router)
        HealthRoute(store: catalog, installed: configuration.engine.learned?.descriptor, settings: configuration.endpoints).register(on: router)
        CollectorRoutes(store: collector, settings: configuration.endpoints, metrics: metrics, limits: configuration.limits.collector,
                        addressHeader: configuration.limits.clients.addressHeader, clock: configuration.admissionClock).register(on: router)
        if configuration.servesMetrics {
            let catalog = self.catalog
            MetricsRoute(metrics: metrics, settings: configuration.endpoints, admission: admission, imageWork: imageWork,
                         catalogSize: { try? await catalog.count() }).register(on: router)
        }
        StatsRoute(store: collector, settings: configuration.endpoints).register(on: router)
        CatalogRoute(store: catalog, settings: configuration.endpoints).register(on: router)
        ImageRoutes(cache: thumbnails, sources: imageSources).register(on: router)
        if configuration.servesWebPage {
            WebPageRoutes(assets: configuration.webRoot.map(WebAssets.folder) ?? .embedded).register(on: router)
        }
        return router
    }

    /// The Hummingbird application, owning ``services`` beside its HTTP
    /// server: a `Service`, to run or to add to a `ServiceGroup`.
    /// `onListening` receives the bound port (useful with port 0).
    public func application(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) -> some ApplicationProtocol {
        let configuration = self.configuration
        let limits = configuration.limits.connections, connections = self.connections, metrics = self.metrics
        let perAddress = configuration.limits.clients.addressHeader == nil, refusalDelay = configuration.limits.clients.refusalDelay
        let gate = self.gate
        let http = HTTP1Channel.Configuration(
            additionalChannelHandlers: [ConnectionPersistence.installer(),
                                        ConnectionGuard(limits: limits, counter: connections, gate: gate, metrics: metrics, limitsPerAddress: perAddress,
                                                        refusalDelay: refusalDelay)],
            idleTimeout: .milliseconds(Int64(configuration.idleTimeout * 1000)))
        return Application(
            router: router(),
            server: HTTPServerBuilder { responder in
                GatedHTTP1Channel(http: HTTP1Channel(responder: responder, configuration: http), gate: gate, metrics: metrics)
            },
            configuration: ApplicationConfiguration(address: .hostname(configuration.host, port: configuration.port),
                                                    serverName: "vsearch/\(ClientConfiguration.version)", backlog: limits.acceptBacklog),
            services: services,
            onServerRunning: { channel in await onListening(channel.localAddress?.port ?? configuration.port) },
            logger: logger
        )
    }

    /// Serves until SIGINT or SIGTERM (or until its task is cancelled): the
    /// application runs its HTTP server and ``services`` in its own
    /// `ServiceGroup` (Hummingbird's `runService`); on a signal the server
    /// finishes requests in flight, then the services stop, the last first
    /// (the engine's ``EngineUpkeep`` stops its insert transactions between
    /// batches, their progress saved, and saves its graphs). A PostgreSQL
    /// catalog's pool belongs to the scope the catalog was opened in
    /// (``CatalogLocation/withCatalog(creating:_:)``), around this call, so it closes after the last request.
    public func run(onListening: @escaping @Sendable (Int) async -> Void = { _ in }) async throws {
        try await application(onListening: onListening).runService(gracefulShutdownSignals: [.sigterm, .sigint])
    }
}

extension VisualSearchServer where Service == VisualSearchEngine {
    /// Serves an engine on `catalog` (opened from ``ServerConfiguration/catalog``
    /// by ``CatalogLocation/withCatalog(creating:_:)``, whose scope the server
    /// runs in), with the server's image limits and an ``ImageWorkPool`` of
    /// ``ServerLimits/imageWork``.
    /// - Throws: ``VisualSearchError`` when the engine cannot load the catalog.
    public init(configuration: ServerConfiguration, catalog: OpenedCatalog, logger: Logger? = nil) async throws(VisualSearchError) {
        let engine = try await catalog.engine(configuration: Self.engineConfiguration(for: configuration))
        self.init(configuration: configuration, engine: engine, store: catalog.store, logger: logger)
    }

    /// Serves an engine you made over `store` (its catalog and collector),
    /// with the engine's ``EngineUpkeep`` after `services`. Uploads are decoded where the engine's configuration says (on the
    /// request's task when it has no ``ImageWorkPool``; ``engineConfiguration(for:)`` gives one).
    public init(configuration: ServerConfiguration, engine: VisualSearchEngine, store: any CatalogAdmin & CollectorStore,
                services: [any ServiceLifecycle.Service] = [], logger: Logger? = nil) {
        self.init(configuration: configuration, service: engine, catalog: store, collector: store, imageSources: engine,
                  imageWork: engine.configuration.imageWork,
                  // Last: the first service to stop after the HTTP server (its inserts save their progress, its graphs are saved).
                  services: services + [EngineUpkeep(engine: engine, compactionInterval: configuration.graphCompactionInterval)],
                  logger: logger)
    }

    /// What the engine of a server with `configuration` is told: its own
    /// settings (``ServerConfiguration/engine``), and from the server's where
    /// `im_url` may read, the server's image limits (not the command line's),
    /// inserts' limits and an image work pool.
    public static func engineConfiguration(for configuration: ServerConfiguration) -> VisualSearchEngine.Configuration {
        var engine = configuration.engine
        engine.imageSources = configuration.imageSourcePolicy
        engine.limits = configuration.limits.image  // for inserts too: they are refused per image beyond it
        engine.inserts = configuration.limits.inserts
        engine.imageWork = ImageWorkPool(limits: configuration.limits.imageWork, clock: ElapsedClock(configuration.admissionClock))
        engine.imageRoute = "/images/"  // ImageRoutes: never a path on the server's disk
        return engine
    }
}
