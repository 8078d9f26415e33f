import Foundation
import ConcurrencyToolkit

/// The server's admission control, shared by every request: the client
/// table, one queue per ``RequestLane``, the budget of body bytes in memory
/// and the places for reading bodies whose credentials are not known yet.
/// Its rules keep time by `clock` (``ElapsedClock``): the client rate and the queue wait.
final class Admission: Sendable {
    let clients: ClientLimiter
    let lanes: [RequestLane: AdmissionQueue]
    let bodies: BodyBudget
    let unverified: UnverifiedBodies
    let clock: ElapsedClock

    init(limits: ServerLimits, maxConcurrentLightRequests: Int, clock: any Clock<Duration> = ContinuousClock()) {
        let time = ElapsedClock(clock)
        self.clock = time
        unverified = UnverifiedBodies(limits: limits.unverifiedBodies)
        clients = ClientLimiter(limits: limits.clients, clock: time)
        let wait = Duration.milliseconds(Int64(limits.maxQueueWait * 1000))
        lanes = [
            .light: AdmissionQueue(limit: maxConcurrentLightRequests, maxQueued: limits.maxQueuedRequests, maxWait: wait, clock: time),
            .image: AdmissionQueue(limit: limits.maxConcurrentImageRequests, maxQueued: limits.maxQueuedRequests, maxWait: wait, clock: time),
        ]
        bodies = BodyBudget(limit: limits.maxBodyBytesInFlight)
    }

    /// The slots of `lane`, for ``ClientLimiter``.
    func slots(of lane: RequestLane) -> Int {
        lanes[lane]?.limit ?? 1
    }
}
