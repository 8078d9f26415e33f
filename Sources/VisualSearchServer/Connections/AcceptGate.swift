import Foundation
import NIOCore
import ConcurrencyToolkit

/// The first check a connection meets: when it is accepted, before it is
/// given a pipeline (no HTTP decoder, no handler, no buffer, no task), the
/// gate decides whether it may have one, and what it may do with it
/// (its ``Verdict``, which the connection's ``ConnectionGuard`` enforces).
///
/// - **Within the limits** it is served.
/// - **Under pressure, idle connections make room.** When all
///   ``ConnectionLimits/maxConnections`` are open, or all
///   ``ConnectionLimits/maxConnectionsPerPrefix`` of the newcomer's network
///   (``AddressPrefix``: its /24 or /64), the connection idle longest — no
///   request in progress: a keep-alive between requests or one that has sent
///   nothing yet — is closed for the newcomer, taken from the address that
///   holds the most connections (nginx and HAProxy close idle keep-alive
///   connections under pressure too). So 600 idle connections from 20
///   addresses cannot keep a new client out; only connections that are
///   working can fill the table.
/// - **Over a limit with nothing idle** a connection still gets a pipeline —
///   and the polite answer the ``ConnectionGuard`` writes (503 or 429,
///   `Retry-After: 1`) — while fewer than ``ConnectionLimits/politeRefusals``
///   such connections are open (in all, for ``ConnectionLimits/maxConnections``;
///   from its address, for ``ConnectionLimits/maxConnectionsPerClient``; from
///   its network, for ``ConnectionLimits/maxConnectionsPerPrefix``). Over the
///   connection limit, `GET /health` is still answered on it.
/// - **Beyond those**, up to ``ConnectionLimits/healthReserve`` connections
///   more may ask `/health` only; a newcomer takes the place of the reserve
///   connection silent longest. Past everything a connection is closed the
///   moment it is accepted. A burst of 500 connections from one address then
///   costs the server 500 accepts and closes and at most
///   `maxConnectionsPerClient + politeRefusals` pipelines, so the other
///   clients' requests, waiting in the same accept queue, are not held behind
///   it (bench/load.py measures exactly that).
///
/// Why here: Hummingbird builds the server bootstrap itself and lets an
/// application add handlers to the server channel only through its
/// connection-count delegate, which never sees the connection's address. The
/// child channel's initializer — ``GatedHTTP1Channel/setup(channel:logger:)``
/// — is the earliest place that does: NIO runs it on an accepted socket before
/// registering it with the event loop.
final class AcceptGate: Sendable {
    /// Why a connection was closed at accept.
    enum Refusal: String, Sendable {
        case connectionLimit = "accept_connection_limit"
        case clientConnectionLimit = "accept_client_connection_limit"
        case prefixConnectionLimit = "accept_prefix_connection_limit"
    }

    /// What an admitted connection may do.
    enum Verdict: Sendable, Hashable {
        /// Served like any other.
        case serve
        /// Over ``ConnectionLimits/maxConnections``: its request is answered 503, except `GET /health`.
        case overConnectionLimit
        /// Over ``ConnectionLimits/maxConnectionsPerClient`` from its address: answered 429.
        case overClientLimit
        /// Over ``ConnectionLimits/maxConnectionsPerPrefix`` from its network: answered 429.
        case overPrefixLimit
        /// One of the ``ConnectionLimits/healthReserve``: `GET /health` only, anything else 503.
        case healthOnly
    }

    /// What ``admit(_:from:close:)`` decided.
    enum Admission: Sendable, Hashable {
        case admitted(Verdict)
        case refused(Refusal)
    }

    /// An admitted connection.
    struct Entry {
        let address: String
        let prefix: AddressPrefix
        let verdict: Verdict
        /// When it last became idle (on the gate's own clock, which ticks once per change); nil while a request is in progress.
        var idleSince: UInt64?
        /// Closes it (when it is evicted).
        let close: @Sendable () -> Void
    }

    struct State {
        var entries: [ObjectIdentifier: Entry] = [:]
        /// Admitted connections, the health reserve aside: served and refused.
        var total = 0
        /// Of which served (``Verdict/serve``).
        var serving = 0
        /// Connections of the health reserve.
        var reserve = 0
        /// Admitted connections by address and by network, the health reserve aside.
        var byAddress: [String: Int] = [:]
        var byPrefix: [AddressPrefix: Int] = [:]
        /// Idle connections closed to make room, since the start.
        var evicted = 0
        var clock: UInt64 = 0

        mutating func add(_ id: ObjectIdentifier, _ entry: Entry) {
            clock += 1
            var entry = entry
            entry.idleSince = clock
            entries[id] = entry
            count(entry, by: 1)
        }

        mutating func remove(_ id: ObjectIdentifier) -> Entry? {
            guard let entry = entries.removeValue(forKey: id) else { return nil }
            count(entry, by: -1)
            return entry
        }

        private mutating func count(_ entry: Entry, by delta: Int) {
            if entry.verdict == .healthOnly {
                reserve += delta
                return
            }
            total += delta
            if entry.verdict == .serve { serving += delta }
            let address = (byAddress[entry.address] ?? 0) + delta
            byAddress[entry.address] = address > 0 ? address : nil
            let prefix = (byPrefix[entry.prefix] ?? 0) + delta
            byPrefix[entry.prefix] = prefix > 0 ? prefix : nil
        }

        /// Removes the idle connection to close for a newcomer among those `matching`: from the address
        /// holding the most connections, the one idle longest. Returns its closer.
        mutating func evictIdle(matching: (Entry) -> Bool) -> (@Sendable () -> Void)? {
            var chosen: (id: ObjectIdentifier, held: Int, since: UInt64)?
            for (id, entry) in entries {
                guard let since = entry.idleSince, matching(entry) else { continue }
                let held = byAddress[entry.address] ?? 0
                if let best = chosen, held < best.held || (held == best.held && since >= best.since) { continue }
                chosen = (id, held, since)
            }
            guard let chosen, let entry = remove(chosen.id) else { return nil }
            evicted += 1
            return entry.close
        }
    }

    let limits: ConnectionLimits
    /// Whether connections are limited by peer address (not behind a proxy).
    let limitsPerAddress: Bool
    private let state = Observed(State())

    init(limits: ConnectionLimits, limitsPerAddress: Bool) {
        self.limits = limits
        self.limitsPerAddress = limitsPerAddress
    }

    /// Admits connection `id` from `address` (counting it until ``closed(_:)``) and says what it may do,
    /// or says why it is closed now. Connections evicted to make room for it are closed (`close`d) before this returns.
    func admit(_ id: ObjectIdentifier, from address: String, close: @escaping @Sendable () -> Void) -> Admission {
        let (admission, evicted) = state.withLock { state -> (Admission, (@Sendable () -> Void)?) in
            var evicted: (@Sendable () -> Void)?
            let admission = decide(&state, address: address, prefix: AddressPrefix(address), evicted: &evicted)
            if case .admitted(let verdict) = admission {
                state.add(id, Entry(address: address, prefix: AddressPrefix(address), verdict: verdict, idleSince: nil, close: close))
            }
            return (admission, evicted)
        }
        evicted?()  // outside the lock: a channel of this event loop closes at once and calls closed(_:)
        return admission
    }

    private func decide(_ state: inout State, address: String, prefix: AddressPrefix, evicted: inout (@Sendable () -> Void)?) -> Admission {
        let fromAddress = state.byAddress[address] ?? 0
        let perClient = limitsPerAddress ? limits.maxConnectionsPerClient : 0
        let perPrefix = limitsPerAddress ? limits.maxConnectionsPerPrefix : 0
        if perClient > 0 && fromAddress >= perClient + limits.politeRefusals { return .refused(.clientConnectionLimit) }
        var verdict = Verdict.serve
        if perClient > 0 && fromAddress >= perClient { verdict = .overClientLimit }
        if verdict == .serve && perPrefix > 0 && (state.byPrefix[prefix] ?? 0) >= perPrefix {
            if let close = state.evictIdle(matching: { $0.verdict == .serve && $0.prefix == prefix }) {
                evicted = close
            } else if (state.byPrefix[prefix] ?? 0) >= perPrefix + limits.politeRefusals {
                return .refused(.prefixConnectionLimit)
            } else {
                verdict = .overPrefixLimit
            }
        }
        if verdict == .serve && state.serving >= limits.maxConnections {
            if let close = state.evictIdle(matching: { $0.verdict == .serve }) {
                evicted = close
            } else {
                verdict = .overConnectionLimit
            }
        }
        guard state.total >= limits.maxConnections + limits.politeRefusals else { return .admitted(verdict) }
        // Every place taken, none idle: the health reserve, for connections the other limits did not refuse.
        guard verdict == .overConnectionLimit, limits.healthReserve > 0 else { return .refused(.connectionLimit) }
        if state.reserve < limits.healthReserve { return .admitted(.healthOnly) }
        guard let close = state.evictIdle(matching: { $0.verdict == .healthOnly }) else { return .refused(.connectionLimit) }
        evicted = close
        return .admitted(.healthOnly)
    }

    /// An admitted connection closed (nothing when it was evicted: it was uncounted then).
    func closed(_ id: ObjectIdentifier) {
        _ = state.withLock { $0.remove(id) }
    }

    /// What connection `id` may do (nil: not admitted by this gate, or evicted).
    func verdict(of id: ObjectIdentifier) -> Verdict? {
        state.read { $0.entries[id]?.verdict }
    }

    /// A request began on connection `id`: it is no longer idle.
    func requestStarted(_ id: ObjectIdentifier) {
        state.withLock { $0.entries[id]?.idleSince = nil }
    }

    /// Connection `id`'s request was answered: it is idle from now (until its next request).
    func requestEnded(_ id: ObjectIdentifier) {
        state.withLock { state in
            guard state.entries[id] != nil else { return }
            state.clock += 1
            state.entries[id]?.idleSince = state.clock
        }
    }

    /// Admitted connections open now (in all, the health reserve aside, and from `address`).
    func open(from address: String) -> (total: Int, fromAddress: Int) {
        state.read { ($0.total, $0.byAddress[address] ?? 0) }
    }

    /// Admitted connections idle now (no request in progress), the health reserve included.
    var idleConnections: Int {
        state.read { $0.entries.values.count(where: { $0.idleSince != nil }) }
    }

    /// Returns true once `condition` holds, checked again after each change of this gate's counts (an observation hook,
    /// never a timer); false when the waiting task is cancelled first.
    func until(_ condition: () -> Bool) async -> Bool { await state.until(condition) }

    /// Connections served, refused (open with a 503/429 to come), in the health reserve, and evicted since the start.
    var counts: (serving: Int, refusing: Int, reserve: Int, evicted: Int) {
        state.read { ($0.serving, $0.total - $0.serving, $0.reserve, $0.evicted) }
    }
}
