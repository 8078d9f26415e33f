import Foundation

/// What the keyless collector (`POST /v3/events`, `GET /v3/__va.gif`) may
/// take in: events a second per address and from all addresses together,
/// event bytes one address may have stored per hour, and the event bytes the
/// store may hold in all. Every one is a `vsearch serve` flag; 0 turns a limit off.
///
/// A batch is charged whole, before anything is stored: over a rate → 429
/// with `Retry-After` (the seconds until its buckets hold the batch), and the
/// tracker sends it again then, so nothing legitimate is lost; with the store
/// at ``maxStoredBytes`` → 507 with `Retry-After` (trackers keep their events
/// queued and retry) until an operator makes room. An address is the
/// connection's peer (the trusted proxy's header when
/// ``ClientLimits/addressHeader`` is set); IPv6 addresses count by their /64,
/// which one subscriber holds whole.
///
/// Bytes are the events' JSON as the collector stores it (about the size of
/// the batch body); the database holds about twice that with its indexes.
///
/// ```swift
/// var limits = CollectorLimits()
/// limits.eventsPerSecondPerAddress = 200   // a proxy of many shoppers behind one address
/// ```
public struct CollectorLimits: Sendable, Hashable {
    /// Sustained events a second from one address: 50 by default (0: no
    /// limit). The address's bucket holds 10 seconds of them, and at least
    /// one full batch (``CollectorRoutes/maxEventsPerBatch``).
    public var eventsPerSecondPerAddress: Double
    /// Sustained events a second from all addresses together: 1,000 by
    /// default (0: no limit); the bucket holds 10 seconds of them, and at least one full batch.
    public var eventsPerSecond: Double
    /// Event bytes one address may have stored in an hour: 16 MiB by default
    /// (0: no limit) — a bucket of that size, refilled evenly over the hour
    /// (a shopper's events are a few hundred bytes each).
    public var bytesPerAddressPerHour: Int
    /// Event bytes the store may hold in all: 2 GiB by default (0: no cap).
    /// Counted from the store when the first batch arrives, then kept up to
    /// date; at the cap batches get 507 until events are removed (the
    /// collector reads the store's figure again at most once a minute meanwhile).
    public var maxStoredBytes: Int

    /// Limits with the documented defaults.
    public init(eventsPerSecondPerAddress: Double = 50, eventsPerSecond: Double = 1000,
                bytesPerAddressPerHour: Int = 16 << 20, maxStoredBytes: Int = 2 << 30) {
        self.eventsPerSecondPerAddress = eventsPerSecondPerAddress
        self.eventsPerSecond = eventsPerSecond
        self.bytesPerAddressPerHour = bytesPerAddressPerHour
        self.maxStoredBytes = maxStoredBytes
    }

    /// No limits at all: what a collector mounted without a server's limits keeps.
    public static let unlimited = CollectorLimits(eventsPerSecondPerAddress: 0, eventsPerSecond: 0, bytesPerAddressPerHour: 0, maxStoredBytes: 0)
}
