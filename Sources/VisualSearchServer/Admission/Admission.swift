import Foundation
import Synchronization

/// The server's admission control, shared by every request: the client
/// table, one queue per ``RequestLane`` and the budget of body bytes in memory.
final class Admission: Sendable {
    let clients: ClientLimiter
    let lanes: [RequestLane: AdmissionQueue]
    let maxBodyBytesInFlight: Int
    let bodyBytesInFlight = Atomic<Int>(0)

    init(limits: ServerLimits, maxConcurrentLightRequests: Int) {
        clients = ClientLimiter(limits: limits.clients)
        let wait = Duration.milliseconds(Int64(limits.maxQueueWait * 1000))
        lanes = [
            .light: AdmissionQueue(limit: maxConcurrentLightRequests, maxQueued: limits.maxQueuedRequests, maxWait: wait),
            .image: AdmissionQueue(limit: limits.maxConcurrentImageRequests, maxQueued: limits.maxQueuedRequests, maxWait: wait),
        ]
        maxBodyBytesInFlight = limits.maxBodyBytesInFlight
    }

    /// Reserves `bytes` of the body budget; false when they do not fit.
    func reserveBody(_ bytes: Int) -> Bool {
        guard bytes > 0 else { return true }
        let total = bodyBytesInFlight.wrappingAdd(bytes, ordering: .relaxed).newValue
        if total > maxBodyBytesInFlight && total != bytes {
            bodyBytesInFlight.wrappingSubtract(bytes, ordering: .relaxed)
            return false
        }
        return true
    }

    /// Gives reserved body bytes back.
    func releaseBody(_ bytes: Int) {
        if bytes > 0 { bodyBytesInFlight.wrappingSubtract(bytes, ordering: .relaxed) }
    }
}
