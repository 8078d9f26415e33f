import ArgumentParser
import Foundation
import ImageOps
import SearchEngine
import VisualSearchServer

/// `vsearch serve`'s limits for running exposed to the network: what an
/// image may declare and how much decoding runs at once, what one client may
/// ask, how requests queue and are shed, and what a connection may cost.
/// Defaults are ``ServerLimits``'; the README's "Running it in production" explains them.
struct ServerLimitOptions: ParsableArguments {
    static let defaults = ServerLimits()

    // Images
    @Option(name: .customLong("max-image-megapixels"),
            help: ArgumentHelp("Largest image an upload or im_url may declare, in megapixels (413 before decoding). Default \(Self.megapixels(defaults.image.maxPixels)).",
                               valueName: "MP"))
    var maxImageMegapixels: Double?
    @Option(name: .customLong("max-image-side"), help: ArgumentHelp("Longest side an image may declare, in pixels. Default \(defaults.image.maxSide).", valueName: "px"))
    var maxImageSide: Int?
    @Option(name: .customLong("decode-budget-megapixels"),
            help: ArgumentHelp("Decoded pixels in memory across all image work at once (after JPEG/WebP shrink-on-load), in megapixels; "
                               + "more wait. Default \(Self.megapixels(defaults.imageWork.pixelBudget)) (about 4 bytes each).", valueName: "MP"))
    var decodeBudgetMegapixels: Double?
    @Option(name: .customLong("image-workers"),
            help: ArgumentHelp("Threads decoding uploads and making thumbnails, at a lower priority than request handling. Default the cores (\(defaults.imageWork.workers)).",
                               valueName: "n"))
    var imageWorkers: Int?
    @Option(name: .customLong("max-queued-images"),
            help: ArgumentHelp("Images that may wait to be decoded; more are refused with 503 and Retry-After. Default \(defaults.imageWork.maxQueued).", valueName: "n"))
    var maxQueuedImages: Int?
    @Option(name: .customLong("max-insert-jobs"),
            help: ArgumentHelp("Data API insert transactions fetching and indexing at once (each holds its fetched images in the decode budget). "
                               + "Default \(defaults.inserts.maxRunning).", valueName: "n"))
    var maxInsertJobs: Int?
    @Option(name: .customLong("max-queued-inserts"),
            help: ArgumentHelp("Insert transactions that may wait for one of those; more are refused with 503 and Retry-After. "
                               + "Default \(defaults.inserts.maxQueued).", valueName: "n"))
    var maxQueuedInserts: Int?

    // Requests
    @Option(name: .customLong("max-concurrent-image-requests"),
            help: ArgumentHelp("Image requests (uploads, inserts) in flight at once, reading their bodies included; "
                               + "light requests have --max-concurrent. Default \(defaults.maxConcurrentImageRequests).", valueName: "n"))
    var maxConcurrentImageRequests: Int?
    @Option(name: .customLong("max-queued"),
            help: ArgumentHelp("Requests that may wait for a slot, per lane (light, image); more are shed with 503 and Retry-After. Default \(defaults.maxQueuedRequests).",
                               valueName: "n"))
    var maxQueued: Int?
    @Option(name: .customLong("queue-timeout"),
            help: ArgumentHelp("Seconds a request may wait for a slot before it is shed (503). Default \(Self.number(defaults.maxQueueWait)).", valueName: "s"))
    var queueTimeout: Double?
    @Option(name: .customLong("max-body-memory-mb"),
            help: ArgumentHelp("Request bodies held in memory at once, in MiB (by declared length); more are shed (503). One client may hold a quarter "
                               + "(429 beyond); with keys, requests without a verified key a quarter in all. Default \(defaults.maxBodyBytesInFlight >> 20).",
                               valueName: "MiB"))
    var maxBodyMemoryMB: Int?

    // Queries
    @Option(name: .customLong("max-result-limit"),
            help: ArgumentHelp("Results a page a search may ask for (limit, discover's result_limit); more is refused with 400 "
                               + "(the hosted service documents 100). Default \(defaults.queries.maxResultLimit).", valueName: "n"))
    var maxResultLimit: Int?
    @Option(name: .customLong("max-result-depth"),
            help: ArgumentHelp("How deep a search may page: page × limit at most; deeper is refused with 400. Default \(defaults.queries.maxResultDepth).",
                               valueName: "n"))
    var maxResultDepth: Int?
    @Option(name: .customLong("max-discover-objects"),
            help: ArgumentHelp("Objects (a box and each point) one /discoversearch may name; more is refused with 400. "
                               + "Default \(defaults.queries.maxDiscoverObjects).", valueName: "n"))
    var maxDiscoverObjects: Int?

    // Clients
    @Option(name: .customLong("client-rate"),
            help: ArgumentHelp("Requests a second one client may sustain while its lane is busy (half its slots taken; 429 with "
                               + "Retry-After beyond; 0: no rate limit). A client is its key once verified, else its address. Default \(Self.number(defaults.clients.requestsPerSecond)).", valueName: "r/s"))
    var clientRate: Double?
    @Option(name: .customLong("client-burst"),
            help: ArgumentHelp("Requests one client may send at once above its rate. Default \(defaults.clients.burst).", valueName: "n"))
    var clientBurst: Int?
    @Option(name: .customLong("client-concurrency"),
            help: ArgumentHelp("Requests of one client in flight at once while its lane is busy (429 beyond, also past its fair share of the "
                               + "lane; 0: no limit). Default \(defaults.clients.maxConcurrent).", valueName: "n"))
    var clientConcurrency: Int?
    @Option(name: .customLong("client-image-concurrency"),
            help: ArgumentHelp("Image requests (uploads, inserts) of one client in flight at once while the image lane is busy (429 beyond; 0: no limit). "
                               + "Default \(defaults.clients.maxConcurrentImageRequests).", valueName: "n"))
    var clientImageConcurrency: Int?
    @Option(name: .customLong("client-refusal-rate"),
            help: ArgumentHelp("Requests a second one client may have refused for what it sent (400, 413: pixel bombs, bodies over the limit) "
                               + "before its requests get 429 in every lane, busy or not (0: no such limit). Default \(Self.number(defaults.clients.refusalsPerSecond)).",
                               valueName: "r/s"))
    var clientRefusalRate: Double?
    @Option(name: .customLong("client-refusal-burst"),
            help: ArgumentHelp("Refusals one client may collect at once above --client-refusal-rate. Default \(defaults.clients.refusalBurst).", valueName: "n"))
    var clientRefusalBurst: Int?
    @Option(name: .customLong("client-refusal-delay"),
            help: ArgumentHelp("Seconds a 429 waits before it is sent (0: at once), so a flooding client gets one answer a second per "
                               + "connection. Default \(Self.number(defaults.clients.refusalDelay)).", valueName: "s"))
    var clientRefusalDelay: Double?
    @Option(name: .customLong("client-address-header"),
            help: ArgumentHelp("Behind a proxy you trust: take the client's address from this header's last entry (e.g. X-Forwarded-For). "
                               + "Default none (the connection's peer).", valueName: "name"))
    var clientAddressHeader: String?
    @Option(name: .customLong("search-processors"),
            help: ArgumentHelp("Searches in flight (by im_name, recommendations, colour) from which a client keeps to its share of them while other "
                               + "clients search: this divided among them, at least 1 (429 beyond). Default the cores (\(defaults.clients.searchProcessors)).",
                               valueName: "n"))
    var searchProcessors: Int?

    // Bodies without a credential in the head (servers with keys)
    @Option(name: .customLong("unverified-bodies"),
            help: ArgumentHelp("With keys: bodies of requests without a credential in the head (collector, a key in a form body) read at once, "
                               + "apart from the lanes, before any slot is taken; more get 503. Default \(defaults.unverifiedBodies.maxInFlight).", valueName: "n"))
    var unverifiedBodies: Int?
    @Option(name: .customLong("unverified-bodies-per-client"),
            help: ArgumentHelp("Of those, from one address; more get 429. Default \(defaults.unverifiedBodies.maxPerClient).", valueName: "n"))
    var unverifiedBodiesPerClient: Int?
    @Option(name: .customLong("unverified-body-grace"),
            help: ArgumentHelp("Seconds such a body may take before it must keep --unverified-body-min-rate-kb; behind that: 408, connection closed. "
                               + "Default \(Self.number(defaults.unverifiedBodies.grace)).", valueName: "s"))
    var unverifiedBodyGrace: Double?
    @Option(name: .customLong("unverified-body-min-rate-kb"),
            help: ArgumentHelp("KiB a second such a body must arrive at after the grace. Default \(defaults.unverifiedBodies.minRate >> 10).", valueName: "KiB/s"))
    var unverifiedBodyMinRateKB: Int?

    // Connections
    @Option(name: .customLong("max-connections"),
            help: ArgumentHelp("Connections open at once; at the limit the connection idle longest (from the address holding the most) is closed "
                               + "for a newcomer, with none idle more are answered 503 and closed. Default \(defaults.connections.maxConnections).", valueName: "n"))
    var maxConnections: Int?
    @Option(name: .customLong("max-client-connections"),
            help: ArgumentHelp("Connections open at once from one address; more are answered 429 and closed (0: no limit; off with "
                               + "--client-address-header). Default \(defaults.connections.maxConnectionsPerClient).", valueName: "n"))
    var maxClientConnections: Int?
    @Option(name: .customLong("max-network-connections"),
            help: ArgumentHelp("Connections open at once from one network, an IPv4 /24 or IPv6 /64; at the limit its connection idle longest "
                               + "is closed for a newcomer, with none idle more are answered 429 (0: no limit; off with --client-address-header). "
                               + "Default \(defaults.connections.maxConnectionsPerPrefix).", valueName: "n"))
    var maxNetworkConnections: Int?
    @Option(name: .customLong("health-reserve-connections"),
            help: ArgumentHelp("Connections kept beyond --max-connections for GET /health alone, so a monitor reaches it while every "
                               + "connection is busy. Default \(defaults.connections.healthReserve).", valueName: "n"))
    var healthReserveConnections: Int?
    @Option(name: .customLong("header-timeout"),
            help: ArgumentHelp("Seconds a client has to send a request's headers (from connecting, or from its previous answer: "
                               + "it also bounds idle keep-alive). Default \(Self.number(defaults.connections.headerTimeout)).", valueName: "s"))
    var headerTimeout: Double?
    @Option(name: .customLong("body-timeout"),
            help: ArgumentHelp("Seconds a client has to send a body, plus one per --min-body-rate-kb received; slower connections are closed. "
                               + "Default \(Self.number(defaults.connections.bodyTimeout)).", valueName: "s"))
    var bodyTimeout: Double?
    @Option(name: .customLong("min-body-rate-kb"),
            help: ArgumentHelp("KiB a second a body must keep arriving at to earn more time. Default \(defaults.connections.minBodyRate >> 10).", valueName: "KiB/s"))
    var minBodyRateKB: Int?

    @Flag(name: .customLong("no-metrics"), help: "Do not serve /metrics (Prometheus text format; behind the keys when keys are on).")
    var noMetrics = false

    /// The limits in effect.
    var limits: ServerLimits {
        var limits = ServerLimits()
        if let maxImageMegapixels { limits.image.maxPixels = Int(maxImageMegapixels * 1_000_000) }
        if let maxImageSide { limits.image.maxSide = maxImageSide }
        if let decodeBudgetMegapixels { limits.imageWork.pixelBudget = Int(decodeBudgetMegapixels * 1_000_000) }
        if let imageWorkers { limits.imageWork.workers = imageWorkers }
        if let maxQueuedImages { limits.imageWork.maxQueued = maxQueuedImages }
        if let maxInsertJobs { limits.inserts.maxRunning = maxInsertJobs }
        if let maxQueuedInserts { limits.inserts.maxQueued = maxQueuedInserts }
        if let maxConcurrentImageRequests { limits.maxConcurrentImageRequests = maxConcurrentImageRequests }
        if let maxQueued { limits.maxQueuedRequests = maxQueued }
        if let queueTimeout { limits.maxQueueWait = queueTimeout }
        if let maxBodyMemoryMB { limits.maxBodyBytesInFlight = maxBodyMemoryMB << 20 }
        if let maxResultLimit { limits.queries.maxResultLimit = maxResultLimit }
        if let maxResultDepth { limits.queries.maxResultDepth = maxResultDepth }
        if let maxDiscoverObjects { limits.queries.maxDiscoverObjects = maxDiscoverObjects }
        if let clientRate { limits.clients.requestsPerSecond = clientRate }
        if let clientBurst { limits.clients.burst = clientBurst }
        if let clientConcurrency { limits.clients.maxConcurrent = clientConcurrency }
        if let clientImageConcurrency { limits.clients.maxConcurrentImageRequests = clientImageConcurrency }
        if let clientRefusalDelay { limits.clients.refusalDelay = clientRefusalDelay }
        if let clientRefusalRate { limits.clients.refusalsPerSecond = clientRefusalRate }
        if let clientRefusalBurst { limits.clients.refusalBurst = clientRefusalBurst }
        limits.clients.addressHeader = clientAddressHeader
        if let searchProcessors { limits.clients.searchProcessors = searchProcessors }
        if let unverifiedBodies { limits.unverifiedBodies.maxInFlight = unverifiedBodies }
        if let unverifiedBodiesPerClient { limits.unverifiedBodies.maxPerClient = unverifiedBodiesPerClient }
        if let unverifiedBodyGrace { limits.unverifiedBodies.grace = unverifiedBodyGrace }
        if let unverifiedBodyMinRateKB { limits.unverifiedBodies.minRate = unverifiedBodyMinRateKB << 10 }
        if let maxConnections { limits.connections.maxConnections = maxConnections }
        if let maxClientConnections { limits.connections.maxConnectionsPerClient = maxClientConnections }
        if let maxNetworkConnections { limits.connections.maxConnectionsPerPrefix = maxNetworkConnections }
        if let healthReserveConnections { limits.connections.healthReserve = healthReserveConnections }
        if let headerTimeout { limits.connections.headerTimeout = headerTimeout }
        if let bodyTimeout { limits.connections.bodyTimeout = bodyTimeout }
        if let minBodyRateKB { limits.connections.minBodyRate = minBodyRateKB << 10 }
        return limits
    }

    func validate() throws {
        func positive(_ flag: String, _ value: Double?) throws {
            if let value, !(value > 0) { throw ValidationError("\(flag) must be positive") }
        }
        func atLeast(_ flag: String, _ value: Int?, _ minimum: Int) throws {
            if let value, value < minimum { throw ValidationError("\(flag) must be at least \(minimum)") }
        }
        try positive("--max-image-megapixels", maxImageMegapixels)
        try positive("--decode-budget-megapixels", decodeBudgetMegapixels)
        try positive("--queue-timeout", queueTimeout)
        try positive("--header-timeout", headerTimeout)
        try positive("--body-timeout", bodyTimeout)
        try atLeast("--max-image-side", maxImageSide, 1)
        try atLeast("--image-workers", imageWorkers, 1)
        try atLeast("--max-queued-images", maxQueuedImages, 0)
        try atLeast("--max-insert-jobs", maxInsertJobs, 1)
        try atLeast("--max-queued-inserts", maxQueuedInserts, 0)
        try atLeast("--max-concurrent-image-requests", maxConcurrentImageRequests, 1)
        try atLeast("--max-queued", maxQueued, 0)
        try atLeast("--max-body-memory-mb", maxBodyMemoryMB, 1)
        try atLeast("--max-result-limit", maxResultLimit, 1)
        try atLeast("--max-result-depth", maxResultDepth, 1)
        try atLeast("--max-discover-objects", maxDiscoverObjects, 1)
        try atLeast("--client-burst", clientBurst, 1)
        try atLeast("--client-refusal-burst", clientRefusalBurst, 1)
        try atLeast("--client-concurrency", clientConcurrency, 0)
        try atLeast("--client-image-concurrency", clientImageConcurrency, 0)
        try atLeast("--max-connections", maxConnections, 1)
        try atLeast("--max-client-connections", maxClientConnections, 0)
        try atLeast("--max-network-connections", maxNetworkConnections, 0)
        try atLeast("--health-reserve-connections", healthReserveConnections, 0)
        try atLeast("--min-body-rate-kb", minBodyRateKB, 1)
        try atLeast("--search-processors", searchProcessors, 1)
        try atLeast("--unverified-bodies", unverifiedBodies, 1)
        try atLeast("--unverified-bodies-per-client", unverifiedBodiesPerClient, 1)
        try atLeast("--unverified-body-min-rate-kb", unverifiedBodyMinRateKB, 1)
        try positive("--unverified-body-grace", unverifiedBodyGrace)
        if let clientRefusalDelay, !(0...60).contains(clientRefusalDelay) { throw ValidationError("--client-refusal-delay must be in 0…60 s") }
        if let clientRate, clientRate < 0 { throw ValidationError("--client-rate must be 0 (off) or positive") }
        if let clientRefusalRate, clientRefusalRate < 0 { throw ValidationError("--client-refusal-rate must be 0 (off) or positive") }
        if let clientAddressHeader, HTTPHeaderName.isValid(clientAddressHeader) == false {
            throw ValidationError("--client-address-header \(clientAddressHeader) is not a header name")
        }
        if let megapixels = decodeBudgetMegapixels, let image = maxImageMegapixels, megapixels < image {
            throw ValidationError("--decode-budget-megapixels \(Self.number(megapixels)) is below --max-image-megapixels \(Self.number(image)): the largest image could never be decoded")
        }
    }

    static func megapixels(_ pixels: Int) -> String { number(Double(pixels) / 1_000_000) }
    static func number(_ value: Double) -> String { value == value.rounded() ? String(Int(value)) : String(value) }
}

/// Header names as RFC 9110 defines them (tokens).
enum HTTPHeaderName {
    static func isValid(_ name: String) -> Bool {
        !name.isEmpty && name.unicodeScalars.allSatisfy { CharacterSet.alphanumerics.contains($0) || "!#$%&'*+-.^_`|~".unicodeScalars.contains($0) }
    }
}
