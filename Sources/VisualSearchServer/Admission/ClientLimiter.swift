import Foundation
import ConcurrencyToolkit

/// Keeps ``ClientLimits`` per client: a token bucket for the rate and its
/// requests in flight in each lane. Clients idle for a minute are forgotten,
/// so the table stays small whatever the number of addresses seen.
///
/// A client is limited only when the lane it asks for is contended (counted
/// here, from admitted requests, under the same lock as the decision, so a
/// burst cannot slip past it) and it takes more than its share there: while a
/// lane has capacity free, every request goes on, however fast one client
/// sends them. When contended, a client may have in flight its fair share of
/// the lane's slots — the slots divided among the clients in it plus one, so
/// a newcomer always has room — and never more than the configured caps; and
/// its token bucket, charged only then, bounds its rate.
///
/// Searches have one more limit: a share of the processors (issue 37).
/// Searches by `im_name`, recommendations and colour search
/// (``RoutePath/isSearch(_:)``) are the engine's work on the processors every
/// such request shares; beyond one a core, a search only waits for the
/// others. Once ``ClientLimits/searchProcessors`` searches are in flight
/// (the cores), a client keeps to its share of them while other clients are
/// searching too (a search in flight, or one answered within ``presence``):
/// `searchProcessors` divided among the clients present, at least one search
/// each. So eight expensive searches of one client cannot stand between the
/// processors and every other client's: while others search it has its
/// share (on two cores with one other client, one search at a time); alone
/// it keeps only the lane's limits. Thumbnails (made on the image work pool),
/// the page and the collector are not searches.
///
/// Refusals are the exception (``recordRefusal(_:)``): a request the
/// server had to refuse for what it sent (400, 413: a pixel bomb, a body over
/// the limit) costs it work, so those are counted in a second bucket
/// (``ClientLimits/refusalsPerSecond``, ``ClientLimits/refusalBurst``), in every lane, busy or not. A client that keeps
/// sending what is refused is limited (429) once that bucket is empty, even
/// while capacity is free; a client that sends what the server can answer never is.
///
/// Both buckets refill by the ``ElapsedClock`` given at init.
final class ClientLimiter: Sendable {
    /// Whether a request may go on.
    enum Decision: Equatable {
        case admitted
        /// Over the rate: retry after this many seconds.
        case rateLimited(retryAfter: Int)
        /// Over the rate of refused requests (``recordRefusal(_:)``): retry after this many seconds.
        case refusedTooOften(retryAfter: Int)
        /// Over the client's requests in flight (in the lane, for image requests).
        case tooManyInFlight(limit: Int, lane: RequestLane?)
    }

    struct Client {
        var tokens: Double
        /// The bucket refusals are charged to.
        var refusalTokens: Double
        /// When the buckets were last refilled (``ElapsedClock/now``).
        var refilled: Duration
        var inFlight: [RequestLane: Int] = [:]
        /// Of those, searches (``RoutePath/isSearch(_:)``).
        var searching = 0

        var total: Int { inFlight.values.reduce(0, +) }
    }

    struct State {
        var clients: [String: Client] = [:]
        /// Clients with a request in flight, per lane.
        var active: [RequestLane: Int] = [:]
        /// Requests admitted and not yet released, per lane (running, queued, or reading their body).
        var admitted: [RequestLane: Int] = [:]
        /// Searches admitted and not yet released, in all.
        var searching = 0
        /// When each client that searched recently was last seen searching (admitted or released).
        var searchers: [String: Duration] = [:]
    }

    let limits: ClientLimits
    let clock: ElapsedClock
    let state = Locked(State())
    /// Forget clients idle this long once the table holds more than ``sweepThreshold`` of them.
    static let idleForgotten: Duration = .seconds(60)
    static let sweepThreshold = 4096
    /// How long a client counts as searching after its last search ended.
    static let presence: Duration = .seconds(1)

    init(limits: ClientLimits, clock: ElapsedClock = ElapsedClock()) {
        self.limits = limits
        self.clock = clock
    }

    /// Takes a slot for `client` in `lane` (of `slots`) — and a token when the
    /// lane is contended — or says why not; `search` says it is a search
    /// (its share of the processors). An admitted request must be
    /// ``release(_:lane:search:)``d when it ends.
    func admit(_ client: String, lane: RequestLane = .light, slots: Int, search: Bool = false) -> Decision {
        state.withLock { state in
            let now = clock.now  // read under the lock: the instants a client's entry sees only move forward
            if state.clients.count > Self.sweepThreshold {
                state.clients = state.clients.filter { $0.value.total > 0 || now - $0.value.refilled < Self.idleForgotten }
            }
            if state.searchers.count > Self.sweepThreshold { _ = Self.othersSearching(&state, besides: client, now: now) }
            var entry = refilled(state.clients[client], now: now)
            if limits.refusalsPerSecond > 0 && entry.refusalTokens < 1 {  // keeps sending what is refused: limited in any lane
                state.clients[client] = entry
                return .refusedTooOften(retryAfter: max(1, Int(((1 - entry.refusalTokens) / limits.refusalsPerSecond).rounded(.up))))
            }
            // The processors busy: a searcher keeps to its share of them while others search.
            if search && state.searching >= max(1, limits.searchProcessors) {
                let others = Self.othersSearching(&state, besides: client, now: now)
                let share = max(1, limits.searchProcessors / (others + 1))
                if others > 0 && entry.searching >= share {
                    state.clients[client] = entry
                    return .tooManyInFlight(limit: share, lane: nil)
                }
            }
            let inLane = entry.inFlight[lane, default: 0]
            // Half the slots or more taken: from here on clients keep to their share.
            if state.admitted[lane, default: 0] * 2 >= slots {
                if limits.requestsPerSecond > 0 && entry.tokens < 1 {
                    state.clients[client] = entry
                    return .rateLimited(retryAfter: max(1, Int(((1 - entry.tokens) / limits.requestsPerSecond).rounded(.up))))
                }
                let share = self.share(of: lane, slots: slots, others: state.active[lane, default: 0] - (inLane > 0 ? 1 : 0))
                if inLane >= share {
                    state.clients[client] = entry
                    return .tooManyInFlight(limit: share, lane: lane == .image ? .image : nil)
                }
                if limits.maxConcurrent > 0 && entry.total >= limits.maxConcurrent {
                    state.clients[client] = entry
                    return .tooManyInFlight(limit: limits.maxConcurrent, lane: nil)
                }
                if limits.requestsPerSecond > 0 { entry.tokens -= 1 }
            }
            if inLane == 0 { state.active[lane, default: 0] += 1 }
            state.admitted[lane, default: 0] += 1
            if search {
                entry.searching += 1
                state.searching += 1
                state.searchers[client] = now
            }
            entry.inFlight[lane] = inLane + 1
            state.clients[client] = entry
            return .admitted
        }
    }

    /// Clients other than `client` searching: a search in flight, or one
    /// seen within ``presence``. Forgets the others.
    static func othersSearching(_ state: inout State, besides client: String, now: Duration) -> Int {
        var present = 0
        for (other, seen) in state.searchers where other != client {
            if now - seen < presence || state.clients[other]?.searching ?? 0 > 0 {
                present += 1
            } else {
                state.searchers[other] = nil
            }
        }
        return present
    }

    /// The seconds to wait when `client`'s refusal bucket is empty (it would
    /// get ``Decision/refusedTooOften(retryAfter:)``), else nil. Takes nothing.
    func refusalsExhausted(_ client: String) -> Int? {
        guard limits.refusalsPerSecond > 0 else { return nil }
        return state.withLock { state in
            let entry = refilled(state.clients[client], now: clock.now)
            state.clients[client] = entry
            guard entry.refusalTokens < 1 else { return nil }
            return max(1, Int(((1 - entry.refusalTokens) / limits.refusalsPerSecond).rounded(.up)))
        }
    }

    /// Counts a request of `client` that the server refused for what it sent
    /// (400, 413; 401 and 403 for credentials) against its refusal bucket.
    func recordRefusal(_ client: String) {
        guard limits.refusalsPerSecond > 0 else { return }
        state.withLock { state in
            let now = clock.now
            var entry = refilled(state.clients[client], now: now)
            entry.refusalTokens = max(-Double(max(1, limits.refusalBurst)), entry.refusalTokens - 1)
            state.clients[client] = entry
        }
    }

    /// A client's entry with both buckets refilled up to `now` (a new one full).
    func refilled(_ existing: Client?, now: Duration) -> Client {
        let burst = Double(max(1, limits.burst)), refusalBurst = Double(max(1, limits.refusalBurst))
        guard var entry = existing else { return Client(tokens: burst, refusalTokens: refusalBurst, refilled: now) }
        let elapsed = now - entry.refilled
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        if limits.requestsPerSecond > 0 { entry.tokens = min(burst, entry.tokens + seconds * limits.requestsPerSecond) }
        if limits.refusalsPerSecond > 0 { entry.refusalTokens = min(refusalBurst, entry.refusalTokens + seconds * limits.refusalsPerSecond) }
        entry.refilled = now
        return entry
    }

    /// A client's share of a contended lane, with `others` clients in it:
    /// the slots divided among them, itself and one more (at least 1),
    /// capped by ``ClientLimits/maxConcurrentImageRequests`` in the image
    /// lane and ``ClientLimits/maxConcurrent`` in both.
    func share(of lane: RequestLane, slots: Int, others: Int) -> Int {
        var share = max(1, slots / (max(0, others) + 2))
        if limits.maxConcurrent > 0 { share = min(share, limits.maxConcurrent) }
        if lane == .image && limits.maxConcurrentImageRequests > 0 { share = min(share, limits.maxConcurrentImageRequests) }
        return share
    }

    /// Gives back the slot of an admitted request (`search`: as it was admitted).
    func release(_ client: String, lane: RequestLane = .light, search: Bool = false) {
        state.withLock { state in
            guard var entry = state.clients[client], let inLane = entry.inFlight[lane], inLane > 0 else { return }
            entry.inFlight[lane] = inLane - 1
            if inLane == 1 { state.active[lane, default: 1] -= 1 }
            if search && entry.searching > 0 {
                entry.searching -= 1
                state.searching -= 1
                state.searchers[client] = clock.now
            }
            state.admitted[lane, default: 1] -= 1
            state.clients[client] = entry
        }
    }
}
