import ArgumentParser
import Foundation
import Logging
import SearchEngine
import VisualSearch
import VisualSearchServer

/// `vsearch serve`: the local ViSearch/ProductSearch-compatible server.
struct ServeCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "serve",
        abstract: "Serve the catalog over HTTP, speaking the ViSearch and ProductSearch protocols.",
        discussion: """
        Endpoints: /search, /recommendations (and /recommendation), /uploadsearch, /colorsearch, \
        /discoversearch, /insert, /insert/status/{trans_id}, /remove, /v1/product/search_by_image, \
        /v1/product/recommendations/{product_id} (also under /v1/visearch/), /health; the collector \
        /v3/events (and /v3/__va.gif) with its statistics at /v3/stats. \
        Point any ViSearch SDK's base URL at http://HOST:PORT.

        The web page: open http://HOST:PORT/ in a browser to search by photo, box, colour and facets, \
        and http://HOST:PORT/analytics for views, clicks and CTR. It uses /catalog (fields and names) and \
        /images/{im_name}[?size=400|800|1200|1600] (originals, and thumbnails made on first request and \
        kept in --thumbnail-cache). --no-web-page serves the API alone.

        Keys: --app-key K (accepted as access_key or app_key) and --access-key KEY:SECRET (HTTP Basic), \
        or --keys-file with one KEY or KEY:SECRET per line (keeps secrets out of `ps`). \
        With no keys the server is open and says so. It listens on 127.0.0.1 unless --host says otherwise. \
        Stops gracefully on Ctrl-C or SIGTERM, finishing requests in flight.

        Under load: images are refused beyond --max-image-megapixels (413) before decoding, and decoded on \
        --image-workers threads at a lower priority under --decode-budget-megapixels, so searches by im_name \
        stay fast while uploads wait their turn. When a lane is busy, each client (its verified key, or its \
        address) gets its fair share, at most --client-rate requests a second and --client-concurrency at \
        once (429 with Retry-After); while capacity is free, nobody is refused. Each lane (light, image) \
        queues --max-queued requests for --queue-timeout seconds, then sheds them (503 with Retry-After). \
        Slow clients are cut by --header-timeout, --body-timeout and --min-body-rate-kb; --max-connections \
        bounds connections. /metrics reports all of it in the Prometheus text format (--no-metrics to hide it).

        Example:
          vsearch serve --catalog demo-output/catalog.sqlite --port 8080 --app-key dev
        """
    )

    @OptionGroup var catalog: CatalogOptions
    @OptionGroup var model: ModelOptions
    // Options with a default are optional with the default in their help ("Default X."), as every other serve option:
    // ArgumentParser would add its own "(default: X)" spelling to a property with an initial value.
    @Option(name: .customLong("host"), help: "Address to bind. Anything other than loopback exposes the catalog to the network. Default 127.0.0.1.")
    var hostOption: String?
    var host: String { hostOption ?? "127.0.0.1" }
    @Option(name: .customLong("port"), help: "Port (0: any free port, printed at start). Default 8080.") var portOption: Int?
    var port: Int { portOption ?? 8080 }
    @Option(name: .customLong("app-key"), help: ArgumentHelp("Accept this app key. Repeatable.", valueName: "key")) var appKeys: [String] = []
    @Option(name: .customLong("access-key"), help: ArgumentHelp("Accept this access key and secret. Repeatable.", valueName: "key:secret"))
    var accessKeys: [String] = []
    @Option(name: .customLong("keys-file"), help: ArgumentHelp("Read keys from a file: KEY or KEY:SECRET per line.", valueName: "file"))
    var keysFile: String?
    @Option(name: .customLong("max-body-mb"), help: "Largest request body in MiB (413 beyond). Default 16.") var maxBodyMBOption: Int?
    var maxBodyMB: Int { maxBodyMBOption ?? 16 }
    @Option(name: .customLong("request-timeout"), help: "Seconds a request may take (503 beyond). Default 30.") var requestTimeoutOption: Double?
    var requestTimeout: Double { requestTimeoutOption ?? 30 }
    @Option(name: .customLong("max-concurrent"), help: "Light requests (searches by im_name, recommendations, the collector, the page) handled at once; more queue (--max-queued, --queue-timeout), then 503 with Retry-After. Default 64.")
    var maxConcurrentOption: Int?
    var maxConcurrent: Int { maxConcurrentOption ?? 64 }
    @Option(name: .customLong("image-root"), help: ArgumentHelp("A folder im_url (uploads, inserts) may read local files from (file:// or absolute paths). Repeatable. Default none.", valueName: "folder"))
    var imageRoots: [String] = []
    @Flag(name: .customLong("allow-remote-fetch"), help: "Let im_url fetch http(s) images — public addresses only (no loopback, private, link-local or multicast).")
    var allowRemoteFetch = false
    @Option(name: .customLong("allow-fetch-host"), help: ArgumentHelp("With --allow-remote-fetch, also fetch from this host or host:port even if it is not public. Repeatable.", valueName: "host[:port]"))
    var allowFetchHosts: [String] = []
    @Flag(name: .customLong("json-logs"), help: "Log one JSON object per line.") var jsonLogs = false
    @Flag(name: .customLong("no-web-page"), help: "Serve the API only: no search page at / and /analytics.") var noWebPage = false
    @Option(name: .customLong("thumbnail-cache"), help: ArgumentHelp("Folder for the thumbnails /images makes. Default \(ThumbnailCache.defaultDirectory).", valueName: "folder"))
    var thumbnailCache: String?
    @Option(name: .customLong("web-root"), help: ArgumentHelp("Serve the page's files from this folder instead of the built-in ones (for developing the page).", valueName: "folder"))
    var webRoot: String?
    @Option(help: ArgumentHelp("The similarity of requests that name none (a request may add similarity=visual|color|fused). "
                               + "Default visual when the catalog has learned vectors and the model is installed, else color.",
                               valueName: "visual|color|fused"))
    var similarity: String?
    @Option(name: .customLong("compact-graphs-every"),
            help: ArgumentHelp("Seconds between looks for HNSW indexes of which more than a tenth are removed images (and at least 1,000); "
                               + "each is rebuilt in the background on one thread while searches go on. 0: never (`vsearch catalog "
                               + "hnsw --rebuild` still does). Default 60.", valueName: "seconds"))
    var compactGraphsEvery: Double?
    @OptionGroup(title: "Nearest neighbours (PostgreSQL: set in the --catalog URL)")
    var nearestNeighbours: NearestNeighbourOptions
    @OptionGroup(title: "Recommendations") var blending: RecommendationOptions
    @OptionGroup(title: "Limits (running in production; see the README)") var limits: ServerLimitOptions
    @OptionGroup(title: "Collector limits (the keyless /v3/events; see the README)") var collectorLimits: CollectorLimitOptions

    func validate() throws {
        guard (0...65535).contains(port) else { throw ValidationError("--port must be in 0...65535") }
        guard maxBodyMB >= 1 else { throw ValidationError("--max-body-mb must be at least 1") }
        guard requestTimeout > 0 else { throw ValidationError("--request-timeout must be positive") }
        guard maxConcurrent >= 1 else { throw ValidationError("--max-concurrent must be at least 1") }
        if let compactGraphsEvery, !(compactGraphsEvery == 0 || (1...86_400).contains(compactGraphsEvery)) {
            throw ValidationError("--compact-graphs-every must be 0 (never) or 1 to 86400 seconds")
        }
        for root in imageRoots where !FileManager.default.fileExists(atPath: root) {
            throw ValidationError("--image-root \(root): no such folder")
        }
        if !allowFetchHosts.isEmpty && !allowRemoteFetch { throw ValidationError("--allow-fetch-host needs --allow-remote-fetch") }
        var isFolder: ObjCBool = false
        if let webRoot, !(FileManager.default.fileExists(atPath: webRoot, isDirectory: &isFolder) && isFolder.boolValue) {
            throw ValidationError("--web-root \(webRoot): no such folder")
        }
        if webRoot != nil && noWebPage { throw ValidationError("--web-root and --no-web-page contradict each other") }
        if let similarity { do { _ = try SimilarityMode(parsing: similarity) } catch { throw ValidationError(error.message) } }
        _ = try credentials()
    }

    func credentials() throws -> ServerCredentials {
        do {
            var credentials = ServerCredentials()
            if let keysFile {
                guard let data = FileManager.default.contents(atPath: keysFile) else {
                    throw ValidationError("cannot read --keys-file \(keysFile)")
                }
                credentials = try ServerCredentials(lines: String(decoding: data, as: UTF8.self))
            }
            for key in appKeys {
                guard !key.contains(":") else { throw ValidationError("--app-key \(key) contains ':'; use --access-key KEY:SECRET") }
                try credentials.add(key, where: "--app-key")
            }
            for key in accessKeys {
                guard key.contains(":") else { throw ValidationError("--access-key needs KEY:SECRET") }
                try credentials.add(key, where: "--access-key")
            }
            return credentials
        } catch let error as VisualSearchError {
            throw ValidationError(error.message)
        }
    }

    /// What a start-up failure means, in words (NIO's errors are terse).
    static func explain(_ error: any Error) -> String {
        let text = "\(error)"
        if text.contains("Address already in use") || text.contains("EADDRINUSE") || text.contains("errno: 98") {
            return "the port is already in use by another process; choose another with --port (0 picks a free one)"
        }
        if text.contains("Cannot assign requested address") || text.contains("errno: 99") {
            return "this machine has no such address; use 127.0.0.1, 0.0.0.0 or one of its own addresses with --host"
        }
        if text.contains("Permission denied") || text.contains("errno: 13") {
            return "permission denied: ports below 1024 need privileges; choose a port above 1024"
        }
        return text
    }

    func run() async throws {
        Interrupt.unblockSignals()
        let jsonLogs = self.jsonLogs
        LoggingSystem.bootstrap { label in
            var handler: any LogHandler = jsonLogs ? JSONLogHandler(label: label) : LogfmtLogHandler(label: label)
            handler.logLevel = .info
            return handler
        }
        var settings = ServerConfiguration(
            catalog: catalog.location, host: host, port: port, credentials: try credentials(),
            maxBodyBytes: maxBodyMB << 20, requestTimeout: requestTimeout, maxConcurrentRequests: maxConcurrent,
            imageRoots: imageRoots.map { ($0 as NSString).standardizingPath }, allowRemoteFetch: allowRemoteFetch,
            allowedFetchHosts: Set(allowFetchHosts.map { $0.lowercased() }), servesWebPage: !noWebPage,
            webRoot: webRoot.map { ($0 as NSString).standardizingPath },
            thumbnailCache: thumbnailCache.map { ($0 as NSString).standardizingPath } ?? ThumbnailCache.defaultDirectory)
        settings.engine.recommendations = blending.blend
        settings.settingNames = SettingFlags.servedNames
        settings.limits = limits.limits
        settings.limits.collector = collectorLimits.limits
        settings.servesMetrics = !limits.noMetrics
        settings.engine.similarity = try similarity.map { (text) throws(VisualSearchError) in try SimilarityMode(parsing: text) }
        settings.engine.nearestNeighbours = nearestNeighbours.settings
        let compactionSeconds = compactGraphsEvery ?? 60
        settings.graphCompactionInterval = compactionSeconds > 0 ? .milliseconds(Int64((compactionSeconds * 1000).rounded())) : nil
        let announcer = Announcer(jsonLogs: jsonLogs)
        settings.engine.graphPolicy.progress = GraphReporting.progress()
        settings.engine.graphReports = { result in
            for line in GraphReporting.lines(result, verbose: true) {
                if line.hasPrefix("warning: ") { announcer.warning(String(line.dropFirst(9))) } else { announcer.info(line) }
            }
        }
        settings.engine.indexReports = { load in announcer.info(GraphReporting.describe(load)) }
        // A missing or damaged model leaves the server colour-only: it starts, and says so.
        var modelProblem: String?
        var detectionProblem: String?
        do {
            let learned = try model.learnedEmbedder()
            try learned?.load()
            settings.engine.learned = learned
            if learned == nil { modelProblem = "the learned similarity model is not installed" }
            if let learned {
                do {
                    let detector = try ObjectDetector(embedder: learned)
                    try detector.load()
                    settings.engine.detector = detector
                } catch {
                    detectionProblem = error.description
                }
            }
        } catch {
            modelProblem = error.description
        }
        let configuration = settings
        do { try catalog.checkLocation() } catch { throw CLIError.report(error) }
        // The catalog is opened in this scope and served inside it: a database's connection pool closes after the last request.
        do {
            try await catalog.location.withCatalog { opened in
                let server: VisualSearchServer<VisualSearchEngine>
                do { server = try await VisualSearchServer(configuration: configuration, catalog: opened) } catch {
                    throw CLIError.report(error)
                }
                let images = (try? await server.catalog.count()) ?? 0
                let census = (try? await server.catalog.featureCensus()) ?? (learned: 0, stale: 0)
                let stale = census.stale
                let catalogModel = try? await server.catalog.learnedModel()
                let similarityLine = Self.similarityLine(server: server, catalogModel: catalogModel, installed: configuration.engine.learned,
                                                         problem: modelProblem, images: images, learnedImages: census.learned)
                let host = self.host
                let path = catalog.location.description
                let auth = configuration.credentials.isOpen
                    ? "OPEN — no keys configured: anyone who can reach this address may search, insert and remove"
                    : "keys required (\(Terminal.count(configuration.credentials.appKeys.count, "app key")), "
                        + "\(Terminal.count(configuration.credentials.accessKeys.count, "access key")))"
                let say = Announcer(jsonLogs: jsonLogs)
                let detectionWarning = detectionProblem
                do {
                    try await server.run { port in
                        let shown = host.contains(":") ? "[\(host)]" : host
                        say.info("listening on http://\(shown):\(port) — catalog \(path) (\(Terminal.count(images, "image"))); auth: \(auth)")
                        if configuration.servesWebPage { say.info("search page http://\(shown):\(port)/ — analytics http://\(shown):\(port)/analytics") }
                        if !configuration.isLoopback { say.warning("bound to \(host), not loopback: the catalog is reachable from the network") }
                        say.info(similarityLine.info)
                        if let warning = similarityLine.warning { say.warning(warning) }
                        if let detectionWarning { say.warning("object detection is off (discover searches the whole image): \(detectionWarning)") }
                        if stale > 0 {
                            say.warning("\(stale) of \(Terminal.count(images, "image")) were indexed by an older vsearch and answer with their old "
                                        + "feature vectors; run `vsearch index` on the same folder again to recompute just those")
                        }
                    }
                } catch {
                    say.error("cannot serve on \(host):\(port): \(ServeCommand.explain(error))")
                    throw ExitCodes.unavailable
                }
                say.info("stopped")
            }
        } catch let exit as ExitCode {
            throw exit
        } catch {
            throw CLIError.report(error)
        }
    }

    /// What serve says at start about similarity: which one answers by
    /// default, what the catalog holds, and what is missing.
    static func similarityLine(server: VisualSearchServer<VisualSearchEngine>, catalogModel: EmbeddingDescriptor?, installed: (any ImageEmbedder)?,
                               problem: String?, images: Int, learnedImages: Int) -> (info: String, warning: String?) {
        let holds = catalogModel.map { "the catalog holds learned vectors of \($0.tag) for \(learnedImages) of \(Terminal.count(images, "image"))" }
            ?? "the catalog holds colour vectors only"
        let defaultMode = server.service.defaultSimilarity(catalogModel: catalogModel)
        let info = "similarity: \(defaultMode) by default (requests may add similarity=visual|color|fused); \(holds)"
        if let problem {
            let unused = catalogModel.map { ", although the catalog holds learned vectors (\($0.tag)) for \(learnedImages) of \(Terminal.count(images, "image"))" } ?? ""
            return (info, "\(problem): serving colour similarity only\(unused); `\(EmbeddingError.installCommand)` enables visual similarity "
                    + "(or point VSEARCH_MODEL_DIR at an installed model)")
        }
        if catalogModel == nil, installed != nil {
            return (info, "the catalog was indexed without the learned model: run `vsearch index` on its folder again to add learned vectors")
        }
        // The words every response and /health say too.
        return (info, VisualSearchEngine.learnedModelNotice(catalogModel: catalogModel, installed: installed?.descriptor))
    }

    /// serve's own lines on stderr: plain (`vsearch serve: …`, `warning: …`), or with
    /// --json-logs one JSON object each, like every request line, so the log is all JSON.
    struct Announcer {
        let jsonLogs: Bool
        let logger = Logger(label: "vsearch.serve")

        func info(_ line: String) {
            if jsonLogs { logger.info("\(line)") } else { Terminal.err("vsearch serve: \(line)\n") }
        }

        func warning(_ line: String) {
            if jsonLogs { logger.warning("\(line)") } else { Terminal.err("warning: \(line)\n") }
        }

        func error(_ line: String) {
            if jsonLogs { logger.error("\(line)") } else { Terminal.err("error: \(line)\n") }
        }
    }
}
