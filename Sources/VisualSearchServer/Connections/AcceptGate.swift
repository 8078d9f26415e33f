import Foundation
import NIOCore
import Synchronization

/// The first check a connection meets: when it is accepted, before it is
/// given a pipeline (no HTTP decoder, no handler, no buffer, no task), the
/// gate decides whether it may have one.
///
/// A connection over a limit still gets a pipeline — and the polite answer
/// the ``ConnectionGuard`` writes (503 or 429, `Retry-After: 1`) — while
/// fewer than ``ConnectionLimits/politeRefusals`` such connections are open
/// (in all, for ``ConnectionLimits/maxConnections``; from its address, for
/// ``ConnectionLimits/maxConnectionsPerClient``). Beyond that it is closed
/// the moment it is accepted. A burst of 500 connections from one address
/// then costs the server 500 accepts and closes and at most
/// `maxConnectionsPerClient + politeRefusals` pipelines, so the other
/// clients' requests, waiting in the same accept queue, are not held behind
/// it (bench/load.py measures exactly that).
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
    }

    let limits: ConnectionLimits
    /// Whether connections are limited by peer address (not behind a proxy).
    let limitsPerAddress: Bool
    /// Connections given a pipeline and not yet closed: in all and by peer address.
    private let admitted = Mutex<(total: Int, byAddress: [String: Int])>((0, [:]))

    init(limits: ConnectionLimits, limitsPerAddress: Bool) {
        self.limits = limits
        self.limitsPerAddress = limitsPerAddress
    }

    /// Admits a connection from `address` (counting it until ``closed(from:)``),
    /// or says why it is closed now.
    func admit(from address: String) -> Refusal? {
        admitted.withLock { admitted -> Refusal? in
            if admitted.total >= limits.maxConnections + limits.politeRefusals { return .connectionLimit }
            let fromAddress = admitted.byAddress[address] ?? 0
            if limitsPerAddress && limits.maxConnectionsPerClient > 0
                && fromAddress >= limits.maxConnectionsPerClient + limits.politeRefusals {
                return .clientConnectionLimit
            }
            admitted.total += 1
            admitted.byAddress[address] = fromAddress + 1
            return nil
        }
    }

    /// An admitted connection from `address` closed.
    func closed(from address: String) {
        admitted.withLock { admitted in
            admitted.total -= 1
            let left = (admitted.byAddress[address] ?? 1) - 1
            admitted.byAddress[address] = left > 0 ? left : nil
        }
    }

    /// Admitted connections open now (in all, and from `address`).
    func open(from address: String) -> (total: Int, fromAddress: Int) {
        admitted.withLock { ($0.total, $0.byAddress[address] ?? 0) }
    }
}
