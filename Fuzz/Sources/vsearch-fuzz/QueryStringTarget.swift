import ImageOps
import Tracking
import VisualSearch

/// `query`: the query-string (and form-body) parsers, and what the server does with the result.
/// The input, as UTF-8 text, is read the way `vsearch serve` reads a request: into a
/// ``WireQuery``, then into every endpoint's request type (the route decides which), and, for the
/// collector's pixel endpoint, into a tracking event; the tracker's own query parser
/// (`EventWireFormat.parameters(fromQuery:)`) reads it too.
enum QueryStringTarget {
    /// The harness.
    static let target = FuzzTarget(
        name: "query",
        summary: "WireQuery(parsing:) + encoded round trip; every WireRequest init(wire:), boxes and points as the engine uses them; "
            + "EventWireFormat.parameters(fromQuery:) / event(from:) / EventValidator, pixel query round trip",
        maximumInputLength: 4096,
        timeoutSeconds: 5,
        seedGlobs: [],
        run: { input in run(String(decoding: input, as: UTF8.self)) }
    )

    /// The size boxes and points are resolved in, as `ImageFeatures.query` does with the query image's size.
    static let imageSize = PixelSize(width: 640, height: 480)

    /// Parses `text` every way above.
    static func run(_ text: String) {
        let query = WireQuery(parsing: text)
        checkRoundTrip(query)
        readRequests(query)
        readPixelEvent(query)
        readTrackerQuery(text)
    }

    /// `WireQuery(parsing: query.encoded)` holds the same parameters, keys sorted as `encoded` sorts them.
    static func checkRoundTrip(_ query: WireQuery) {
        let sorted = query.items.enumerated()
            .sorted { $0.element.name != $1.element.name ? $0.element.name < $1.element.name : $0.offset < $1.offset }
            .map(\.element)
        let reparsed = WireQuery(parsing: query.encoded).items
        invariant(reparsed.map(\.name) == sorted.map(\.name) && reparsed.map(\.value) == sorted.map(\.value),
                  "WireQuery does not survive encoding: \(query.encoded)")
    }

    /// Every request type the routes decode, with and without an uploaded image, then the
    /// arithmetic the engine does on their boxes and points.
    static func readRequests(_ query: WireQuery) {
        for image in [nil, [UInt8(0xFF)]] as [[UInt8]?] {
            let message = WireMessage(query: query, image: image, pathParameter: query.string("id"))
            _ = try? SearchRequest(wire: message)
            _ = try? RecommendationsRequest(wire: message)
            _ = try? ColorSearchRequest(wire: message)
            _ = try? ProductRecommendationsRequest(wire: message)
            _ = try? InsertRequest(wire: message)
            _ = try? InsertStatusRequest(wire: message)
            _ = try? RemoveRequest(wire: message)
            if let upload = try? UploadSearchRequest(wire: message) { resolve(upload.query.box) }
            if let product = try? ProductSearchRequest(wire: message) { resolve(product.query.box) }
            if let discover = try? DiscoverSearchRequest(wire: message) {
                resolve(discover.query.box)
                // The engine prepares the request first: a wire request has no preparation, so its
                // points keep their coordinates (scale 1).
                if let prepared = try? discover.prepared(limits: ImageDecoderHarness.limits) {
                    for point in prepared.points { resolve(point.box) }
                }
            }
        }
        for dialect in [SearchParameters.WireDialect.viSearch, .productSearch] {
            _ = try? SearchParameters(wire: query, dialect: dialect)
        }
    }

    /// A box as the engine resolves it in the query image.
    static func resolve(_ box: PixelBox?) {
        guard let box, let region = try? box.region(in: imageSize) else { return }
        invariant(region.x >= 0 && region.y >= 0 && region.width >= 1 && region.height >= 1
                      && region.x + region.width <= imageSize.width && region.y + region.height <= imageSize.height,
                  "box \(box) resolves to \(region), outside \(imageSize)")
    }

    /// `GET /v3/__va.gif`: the merged parameters, the last value of a name winning, as one event.
    static func readPixelEvent(_ query: WireQuery) {
        var values: [String: String] = [:]
        for item in query.items { values[item.name] = item.value }
        if let event = try? EventWireFormat.event(from: values) { _ = try? EventValidator.validate(event) }
    }

    /// The tracker's parser, and the round trip of a valid event through the pixel query it sends.
    static func readTrackerQuery(_ text: String) {
        guard let event = try? EventWireFormat.event(from: EventWireFormat.parameters(fromQuery: text)),
              (try? EventValidator.validate(event)) != nil else { return }
        let sent = EventWireFormat.query(event, code: "fuzz")
        let received = try? EventWireFormat.event(from: EventWireFormat.parameters(fromQuery: sent))
        invariant(received == event, "a valid event changed through its pixel query \(sent)")
    }
}
