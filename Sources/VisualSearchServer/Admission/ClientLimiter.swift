import Foundation
import Synchronization

/// Keeps ``ClientLimits`` per client: a token bucket for the rate and a count
/// of requests in flight. Clients idle for a minute are forgotten, so the
/// table stays small whatever the number of addresses seen.
final class ClientLimiter: Sendable {
    /// Whether a request may go on.
    enum Decision: Equatable {
        case admitted
        /// Over the rate: retry after this many seconds.
        case rateLimited(retryAfter: Int)
        /// Over the client's requests in flight (of the lane, for image requests).
        case tooManyInFlight(limit: Int, lane: RequestLane?)
    }

    struct Client {
        var tokens: Double
        var refilled: ContinuousClock.Instant
        var inFlight = 0
        var imageInFlight = 0
    }

    let limits: ClientLimits
    let clients = Mutex<[String: Client]>([:])
    /// Forget clients idle this long once the table holds more than ``sweepThreshold`` of them.
    static let idleForgotten: Duration = .seconds(60)
    static let sweepThreshold = 4096

    init(limits: ClientLimits) {
        self.limits = limits
    }

    /// Takes a token and a slot for `client`, or says why not. An admitted
    /// request must be ``release(_:)``d when it ends.
    func admit(_ client: String, lane: RequestLane = .light, now: ContinuousClock.Instant = .now) -> Decision {
        clients.withLock { clients in
            if clients.count > Self.sweepThreshold {
                clients = clients.filter { $0.value.inFlight > 0 || $0.value.refilled.duration(to: now) < Self.idleForgotten }
            }
            var entry = clients[client] ?? Client(tokens: Double(max(1, limits.burst)), refilled: now)
            if limits.requestsPerSecond > 0 {
                let elapsed = entry.refilled.duration(to: now)
                let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
                entry.tokens = min(Double(max(1, limits.burst)), entry.tokens + seconds * limits.requestsPerSecond)
                entry.refilled = now
                if entry.tokens < 1 {
                    clients[client] = entry
                    return .rateLimited(retryAfter: max(1, Int(((1 - entry.tokens) / limits.requestsPerSecond).rounded(.up))))
                }
            }
            if limits.maxConcurrent > 0 && entry.inFlight >= limits.maxConcurrent {
                clients[client] = entry
                return .tooManyInFlight(limit: limits.maxConcurrent, lane: nil)
            }
            if lane == .image && limits.maxConcurrentImageRequests > 0 && entry.imageInFlight >= limits.maxConcurrentImageRequests {
                clients[client] = entry
                return .tooManyInFlight(limit: limits.maxConcurrentImageRequests, lane: .image)
            }
            if limits.requestsPerSecond > 0 { entry.tokens -= 1 }
            entry.inFlight += 1
            if lane == .image { entry.imageInFlight += 1 }
            clients[client] = entry
            return .admitted
        }
    }

    /// Gives back the slot of an admitted request.
    func release(_ client: String, lane: RequestLane = .light) {
        clients.withLock { clients in
            if var entry = clients[client] {
                entry.inFlight = max(0, entry.inFlight - 1)
                if lane == .image { entry.imageInFlight = max(0, entry.imageInFlight - 1) }
                clients[client] = entry
            }
        }
    }
}
