import ArgumentParser
import Foundation
import Tracking
import Logging
import SearchEngine
import VisualSearch
import CatalogStores
import EventDelivery

/// `vsearch track …`: record analytics events durably and deliver them.
struct TrackCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "track",
        abstract: "Record an analytics event (queued durably, then delivered), or deliver the queue.",
        discussion: """
          vsearch track ACTION [fields] --endpoint URL
              queue the event, then try to deliver the queue
          vsearch track ACTION [fields] --catalog PATH
              store it straight into a catalog's collector tables
          vsearch track flush --endpoint URL
              deliver what is queued (e.g. after being offline)
          vsearch track status
              the queue's counters

        ACTION: click, view, product_click, product_view, add_to_cart, add_to_wishlist, transaction, \
        result_load, search, or any custom name. Events are validated as the ViSearch guide documents \
        (required fields per action, lengths, ISO 4217 currency, price ≥ 0, pos ≥ 1, json valid). \
        The queue is $VSEARCH_TRACKING_QUEUE, else .vsearch/events-queue.sqlite.

        Example:
          vsearch track product_click --query-id 1158812345678901234 --pid dress_17 \\
            --im-url https://cdn.example/dress_17.jpg --pos 3 \\
            --endpoint http://127.0.0.1:8080
        """,
        subcommands: [TrackSendCommand.self, TrackFlushCommand.self, TrackStatusCommand.self],
        defaultSubcommand: TrackSendCommand.self
    )
}

/// Where events are queued and sent.
struct DeliveryOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Collector or analytics base URL, e.g. http://127.0.0.1:8080. Default $VSEARCH_TRACKING_ENDPOINT.", valueName: "url"))
    var endpoint: String?
    @Option(name: .customLong("app-key"), help: ArgumentHelp("The app key events are sent with (the tracker's `code`; app_key:placement_id for ProductSearch). Default vsearch.", valueName: "key"))
    var appKey: String?
    /// `--code`, the tracker's wire name, kept for scripts written before `--app-key`.
    @Option(name: .customLong("code"), help: .hidden) var legacyCode: String?

    /// The tracker code in effect.
    var code: String { appKey ?? legacyCode ?? "vsearch" }
    @Option(help: ArgumentHelp("batch: POST /v3/events (vsearch serve); pixel: GET /v3/__va.gif per event (the hosted tracker).", valueName: "batch|pixel"))
    var mode = "batch"
    @Option(help: ArgumentHelp("The durable queue file. Default $VSEARCH_TRACKING_QUEUE, else .vsearch/events-queue.sqlite.", valueName: "path"))
    var queue: String?
    @Option(name: .customLong("queue-cap"), help: "Most events kept queued; the oldest beyond are dropped and counted.") var queueCap = 100_000

    var environment: [String: String] { ProcessInfo.processInfo.environment }
    var queuePath: String { queue ?? environment["VSEARCH_TRACKING_QUEUE"].flatMap { $0.isEmpty ? nil : $0 } ?? ".vsearch/events-queue.sqlite" }
    var endpointURL: URL? { (endpoint ?? environment["VSEARCH_TRACKING_ENDPOINT"]).flatMap { $0.isEmpty ? nil : URL(string: $0) } }

    func validate() throws {
        if appKey != nil && legacyCode != nil { throw ValidationError("give --app-key once (--code is its old name)") }
        if legacyCode != nil { Deprecation.warn("--code", instead: "--app-key") }
        guard ["batch", "pixel"].contains(mode) else { throw ValidationError("--mode must be batch or pixel") }
        if let text = endpoint ?? environment["VSEARCH_TRACKING_ENDPOINT"], !text.isEmpty {
            guard let url = URL(string: text), ["http", "https"].contains(url.scheme?.lowercased() ?? ""), url.host != nil else {
                throw ValidationError("--endpoint \"\(text)\" is not an http(s) URL")
            }
        }
        guard queueCap >= 1 else { throw ValidationError("--queue-cap must be at least 1") }
    }

    func openQueue() throws -> EventQueue {
        do { return try EventQueue(path: queuePath, capacity: queueCap) } catch {
            Terminal.err("error: \(error.description)\n")
            throw ExitCodes.ioError
        }
    }

    func tracker(_ queue: EventQueue, url: URL) -> Tracker {
        Tracker(queue: queue, transport: HTTPEventTransport(endpoint: .custom(url), code: code, mode: mode == "pixel" ? .pixel : .batch),
                logger: Logger(label: "vsearch.tracking", factory: { StreamLogHandler.standardError(label: $0) }))
    }
}

/// `vsearch track ACTION …`.
struct TrackSendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send", abstract: "Record one event (the default: `vsearch track ACTION …`).",
        discussion: """
        Required fields, as the ViSearch guide lists them (all missing ones are named):
          click, view, search, result_load: --query-id
          product_click, product_view, add_to_cart, add_to_wishlist:
              --query-id --pid --im-url --pos
          transaction: --query-id --transaction-id --value
          any other (custom) action: nothing but its name
        """)

    @Argument(help: "The action, e.g. product_click.") var action: String
    @Option(name: .customLong("query-id"), help: "The reqid of the search the event follows.") var queryId: String?
    @Option(help: "Product id (im_name).") var pid: String?
    @Option(name: .customLong("im-url"), help: "Product image URL.") var imageURL: String?
    /// `--img-url`, this option's spelling before 0.3.0 (one spelling per concept: `--im-url`); hidden, for one release.
    @Option(name: .customLong("img-url"), help: .hidden) var legacyImageURL: String?
    var imgUrl: String? { imageURL ?? legacyImageURL }
    @Option(help: "Position in the results, from 1.") var pos: Int?
    @Option(name: .customLong("transaction-id"), help: "Transaction id.") var transactionId: String?
    @Option(help: "Transaction value.") var value: Double?
    @Option(help: "Product price (≥ 0).") var price: Double?
    @Option(help: "ISO 4217 currency, e.g. USD.") var currency: String?
    @Option(help: "Brand (≤ 64).") var brand: String?
    @Option(help: "Category (≤ 32).") var category: String?
    @Option(help: "Event name (≤ 32).") var name: String?
    @Option(help: "Label (≤ 32).") var label: String?
    @Option(help: "Traffic source (≤ 32).") var source: String?
    @Option(help: "User id (default: the queue's persisted uid).") var uid: String?
    @Option(name: .customLong("json-payload"), help: "Custom JSON payload of the event (≤ 512 bytes).") var jsonPayload: String?
    @Option(name: .customLong("catalog"), help: ArgumentHelp("Store into this catalog's collector tables instead of queueing.", valueName: "path"))
    var catalog: String?
    @OptionGroup var delivery: DeliveryOptions
    @Flag(name: .customLong("no-send"), help: "Only queue; deliver later with `vsearch track flush`.") var noSend = false
    @Flag(name: .customLong("json"), help: "Print the result as JSON (machine output).") var jsonOutput = false

    var event: TrackingEvent {
        var event = TrackingEvent(action: TrackingAction(rawValue: action))
        event.queryId = queryId; event.pid = pid; event.imgUrl = imgUrl; event.pos = pos
        event.transactionId = transactionId; event.value = value; event.price = price; event.currency = currency
        event.brand = brand; event.category = category; event.name = name; event.label = label; event.source = source
        event.uid = uid; event.json = jsonPayload
        return event
    }

    func validate() throws {
        if legacyImageURL != nil { Deprecation.warn("--img-url", instead: "--im-url") }
        // Every required field that is missing at once, as options (not one per try).
        let missing = EventValidator.missingRequiredFields(event)
        if !missing.isEmpty {
            throw ValidationError("\(missing.map { Self.flags[$0] ?? $0 }.joined(separator: ", ")): required for \(event.action)")
        }
        do { try EventValidator.validate(event) } catch { throw ValidationError(Self.commandLineMessage(error)) }
        if catalog == nil && delivery.endpointURL == nil && !noSend {
            throw ValidationError("give --endpoint URL (queue and deliver), --catalog PATH (store locally) or --no-send (queue only)")
        }
    }

    /// The options that set each event field the validator names (its wire or model name).
    static let flags: [String: String] = [
        "queryId": "--query-id", "pid": "--pid", "imgUrl": "--im-url", "pos": "--pos", "transactionId": "--transaction-id",
        "value": "--value", "price": "--price", "currency": "--currency", "brand": "--brand", "category": "--category",
        "name": "--name", "label": "--label", "source": "--source", "uid": "--uid", "json": "--json-payload", "action": "ACTION",
    ]

    /// A validation error in the command line's words: `--im-url: required for product_click`, not the wire field `imgUrl`.
    static func commandLineMessage(_ error: TrackingError) -> String {
        guard case .invalidEvent(let field, let rule) = error, let flag = flags[field] else { return error.description }
        return "\(flag): \(rule)"
    }

    struct Output: Encodable {
        var eventID: String?
        var stored: String
        var report: Tracker.Report?
        enum CodingKeys: String, CodingKey { case eventID = "event_id", stored, report }
    }

    func run() async throws {
        if let catalog {
            let location = CatalogLocation(parsing: catalog)
            do {
                var event = self.event
                event.timestamp = Int64(Date().timeIntervalSince1970 * 1000)
                event.eventID = UUID().uuidString.lowercased()
                let sent = event
                let result = try await location.withCatalog { try await $0.store.receive([sent])[0] }
                guard result.code == 0 else { throw TrackingError.invalidEvent(field: "event", rule: result.message) }
                if jsonOutput { Terminal.json(Output(eventID: event.eventID, stored: location.description)) } else { Terminal.out("stored \(event.eventID ?? "") in \(location)") }
            } catch {
                throw CLIError.report(error)
            }
            return
        }
        let queue = try delivery.openQueue()
        let stored: TrackingEvent
        let tracker = delivery.endpointURL.map { delivery.tracker(queue, url: $0) }
        do {
            if let tracker { stored = try await tracker.track(event) } else {
                try EventValidator.validate(event)
                stored = try await queue.append(event, now: Date())
            }
        } catch {
            Terminal.err("error: \(error.description)\n")
            throw ExitCodes.ioError
        }
        var report: Tracker.Report?
        if let tracker, !noSend { report = await tracker.flush(maxFailures: 1) }
        if jsonOutput {
            Terminal.json(Output(eventID: stored.eventID, stored: queue.path, report: report))
        } else {
            Terminal.out("queued \(stored.eventID ?? "")")
            if let report { Terminal.out(TrackFlushCommand.summary(report)) }
        }
    }
}

/// `vsearch track flush`.
struct TrackFlushCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "flush", abstract: "Deliver every queued event now, with retries and backoff.")
    @OptionGroup var delivery: DeliveryOptions
    @Option(name: .customLong("max-failures"), help: "Consecutive failed rounds before giving up (events stay queued).") var maxFailures = 5
    @Flag(help: "Print the report as JSON.") var json = false

    func validate() throws {
        guard delivery.endpointURL != nil else { throw ValidationError("give --endpoint URL (or $VSEARCH_TRACKING_ENDPOINT)") }
    }

    static func summary(_ report: Tracker.Report) -> String {
        var text = "delivered \(report.sent)"
        if report.rejected > 0 { text += ", rejected \(report.rejected)" }
        text += "; \(report.remaining) still queued"
        if report.remaining > 0, let problem = report.problems.first { text += " (\(problem))" }
        return text
    }

    func run() async throws {
        let queue = try delivery.openQueue()
        guard let url = delivery.endpointURL else { return }
        let report = await delivery.tracker(queue, url: url).flush(maxFailures: max(1, maxFailures))
        if json { Terminal.json(report) } else { Terminal.out(Self.summary(report)) }
        if report.remaining > 0 { throw ExitCodes.unavailable }
    }
}

/// `vsearch track status`.
struct TrackStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "status", abstract: "The queue's counters: queued, sent, retried, dropped and why.")
    @OptionGroup var delivery: DeliveryOptions
    @Flag(help: "Print the counters as JSON.") var json = false

    func run() async throws {
        let queue = try delivery.openQueue()
        let counters: TrackingCounters
        do { counters = try await queue.counters() } catch {
            Terminal.err("error: \(error.description)\n")
            throw ExitCodes.ioError
        }
        if json { Terminal.json(counters) } else {
            Terminal.out("\(queue.path): accepted \(counters.accepted), queued \(counters.queued), sent \(counters.sent), retried \(counters.retried), "
                         + "dropped \(counters.droppedRejected) rejected + \(counters.droppedQueueFull) over the queue cap")
        }
    }
}
