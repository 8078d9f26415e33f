import Foundation

/// The server's admission control, shared by every request: the client
/// table, one queue per ``RequestLane`` and the budget of body bytes in memory.
final class Admission: Sendable {
    let clients: ClientLimiter
    let lanes: [RequestLane: AdmissionQueue]
    let bodies: BodyBudget

    init(limits: ServerLimits, maxConcurrentLightRequests: Int) {
        clients = ClientLimiter(limits: limits.clients)
        let wait = Duration.milliseconds(Int64(limits.maxQueueWait * 1000))
        lanes = [
            .light: AdmissionQueue(limit: maxConcurrentLightRequests, maxQueued: limits.maxQueuedRequests, maxWait: wait),
            .image: AdmissionQueue(limit: limits.maxConcurrentImageRequests, maxQueued: limits.maxQueuedRequests, maxWait: wait),
        ]
        bodies = BodyBudget(limit: limits.maxBodyBytesInFlight)
    }

    /// The slots of `lane`, for ``ClientLimiter``.
    func slots(of lane: RequestLane) -> Int {
        lanes[lane]?.limit ?? 1
    }
}
