/// Every family `GET /metrics` reports: the one place their names, types,
/// help texts and labels are written. README.md's metrics table lists the
/// same; `MetricsExpositionTests` checks that a live server's `/metrics`
/// holds nothing else.
extension MetricFamily {
    // MARK: HTTP requests

    static let httpRequests = MetricFamily(
        "vsearch_http_requests_total", .counter,
        "HTTP requests answered, refusals included, by route pattern (unknown paths: unmatched) and status code.",
        labels: ["endpoint", "status"])
    static let httpRequestDuration = MetricFamily(
        "vsearch_http_request_duration_seconds", .histogram,
        "Seconds from a request's head to its answer, by route pattern.",
        labels: ["endpoint"])
    static let httpRequestsInFlight = MetricFamily(
        "vsearch_http_requests_in_flight", .gauge,
        "Requests admitted by their lane (light, image) and being served now.",
        labels: ["lane"])
    static let httpRequestsQueued = MetricFamily(
        "vsearch_http_requests_queued", .gauge,
        "Requests waiting in their lane's queue now.",
        labels: ["lane"])
    static let httpRequestsShed = MetricFamily(
        "vsearch_http_requests_shed_total", .counter,
        "Requests refused with 503 by their lane: queue full, waited too long, or request-body memory full.",
        labels: ["lane"])
    static let httpRequestsRateLimited = MetricFamily(
        "vsearch_http_requests_rate_limited_total", .counter,
        "Requests refused with 429 by their client's limits, by reason (rate, refusals, concurrency, body_memory, collector).",
        labels: ["reason"])

    // MARK: Connections

    static let connectionsOpen = MetricFamily(
        "vsearch_connections_open", .gauge,
        "Client connections open now.")
    static let connectionsClosed = MetricFamily(
        "vsearch_connections_closed_total", .counter,
        "Connections the server closed itself, by reason: a timeout (header_timeout, body_timeout) or a connection limit.",
        labels: ["reason"])

    // MARK: Image decoding

    static let imageDecodes = MetricFamily(
        "vsearch_image_decodes_total", .counter,
        "Image decodes finished on the decode pool.")
    static let imageDecodedPixels = MetricFamily(
        "vsearch_image_decoded_pixels_total", .counter,
        "Pixels decoded by finished decodes on the decode pool.")
    static let imageDecodesRefused = MetricFamily(
        "vsearch_image_decodes_refused_total", .counter,
        "Image decodes refused (503) because the decode queue was full or they waited too long.")
    static let imageDecodesRunning = MetricFamily(
        "vsearch_image_decodes_running", .gauge,
        "Image decodes running now.")
    static let imageDecodesQueued = MetricFamily(
        "vsearch_image_decodes_queued", .gauge,
        "Image decodes waiting for a worker or for pixel budget now.")
    static let imagePixelsInFlight = MetricFamily(
        "vsearch_image_pixels_in_flight", .gauge,
        "Pixels the running decodes have charged to the pixel budget now.")

    // MARK: Catalog and collector

    static let catalogImages = MetricFamily(
        "vsearch_catalog_images", .gauge,
        "Images in the catalog, as of the last scrape.")
    static let collectorEvents = MetricFamily(
        "vsearch_collector_events_total", .counter,
        "Analytics events the collector received, by outcome (accepted, rejected; limited: a batch over a rate, 429; store_full: 507).",
        labels: ["outcome"])

    // MARK: The process (the names and meanings of the Prometheus client libraries' process collector)

    static let processCPU = MetricFamily(
        "process_cpu_seconds_total", .counter,
        "Total user and system CPU time spent in seconds.")
    static let processResidentMemory = MetricFamily(
        "process_resident_memory_bytes", .gauge,
        "Resident memory size in bytes.")
    static let processVirtualMemory = MetricFamily(
        "process_virtual_memory_bytes", .gauge,
        "Virtual memory size in bytes.")
    static let processOpenFDs = MetricFamily(
        "process_open_fds", .gauge,
        "Number of open file descriptors.")
    static let processMaxFDs = MetricFamily(
        "process_max_fds", .gauge,
        "Maximum number of open file descriptors.")
    static let processStartTime = MetricFamily(
        "process_start_time_seconds", .gauge,
        "Start time of the process since unix epoch in seconds.")

    /// The server's own families.
    static let server: [MetricFamily] = [
        httpRequests, httpRequestDuration, httpRequestsInFlight, httpRequestsQueued, httpRequestsShed, httpRequestsRateLimited,
        connectionsOpen, connectionsClosed,
        imageDecodes, imageDecodedPixels, imageDecodesRefused, imageDecodesRunning, imageDecodesQueued, imagePixelsInFlight,
        catalogImages, collectorEvents,
    ]
    /// The standard process families, read from procfs at each scrape (``ProcessMetrics``).
    static let process: [MetricFamily] = [
        processCPU, processResidentMemory, processVirtualMemory, processOpenFDs, processMaxFDs, processStartTime,
    ]
    /// Every family, server and process.
    static let all: [MetricFamily] = server + process

    /// The family called `name`, if there is one.
    static func named(_ name: String) -> MetricFamily? {
        byName[name]
    }

    private static let byName = Dictionary(uniqueKeysWithValues: all.map { ($0.name, $0) })
}
