import Tracking

/// `events`: the collector's batch decoder (`POST /v3/events`): the body's entries, each
/// decoded and validated as the collector does, and every valid event's round trip through the
/// batch body the tracker sends.
enum EventBatchTarget {
    /// The harness.
    static let target = FuzzTarget(
        name: "events",
        summary: "EventWireFormat.entries(fromBatch:), event(from:), EventValidator.validate; batchBody round trip",
        maximumInputLength: 16 * 1024,
        timeoutSeconds: 5,
        seedGlobs: [],
        run: { input in run(Array(input)) }
    )

    /// Decodes a batch body and checks the round trip of its valid events.
    static func run(_ body: [UInt8]) {
        guard let entries = try? EventWireFormat.entries(fromBatch: body) else { return }
        var valid: [TrackingEvent] = []
        for entry in entries {
            guard let event = try? EventWireFormat.event(from: entry) else { continue }
            if (try? EventValidator.validate(event)) != nil { valid.append(event) }
        }
        guard !valid.isEmpty else { return }
        let resent = EventWireFormat.batchBody(valid, uid: nil)
        guard let again = try? EventWireFormat.entries(fromBatch: resent) else {
            invariant(false, "the tracker's batch body does not decode: \(String(decoding: resent, as: UTF8.self))")
            return
        }
        let decoded = again.map { try? EventWireFormat.event(from: $0) }
        invariant(decoded == valid, "valid events changed through the batch body \(String(decoding: resent, as: UTF8.self))")
    }
}
