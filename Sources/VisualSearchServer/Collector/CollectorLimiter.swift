import Foundation
import ConcurrencyToolkit
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Keeps ``CollectorLimits``: per address a bucket of events and one of
/// bytes, one bucket of events for all addresses, and the event bytes the
/// store holds. A batch is admitted only when every bucket holds it — then it
/// is charged to all of them at once — so a refused batch costs nothing and
/// is refused whole. Addresses whose buckets have refilled are forgotten once
/// more than ``sweepThreshold`` are kept, so the table stays small whatever
/// the number of addresses seen.
///
/// Buckets refill by the ``ElapsedClock`` given at init (tests step it).
final class CollectorLimiter: Sendable {
    /// Whether a batch may be stored.
    enum Decision: Equatable {
        case admitted
        /// Over a rate: retry after this many seconds (`reason` says which limit, in the flags' words).
        case rateLimited(reason: String, retryAfter: Int)
        /// The store holds `stored` event bytes of the `limit`: nothing more until events are removed.
        case storeFull(stored: Int, limit: Int)
        /// More than a bucket can ever hold (an operator's limit below one batch): send smaller batches.
        case tooLarge(reason: String)
    }

    struct Address {
        var events: TokenBucket?
        var bytes: TokenBucket?

        mutating func refill(now: Duration) {
            events?.refill(now: now)
            bytes?.refill(now: now)
        }

        var isFull: Bool { (events?.isFull ?? true) && (bytes?.isFull ?? true) }
    }

    struct State {
        var addresses: [String: Address] = [:]
        var total: TokenBucket?
        /// Event bytes the store holds; nil until read (``claimStoredBytesReading()``).
        var storedBytes: Int?
        /// When the store's figure was last read.
        var storedRead: Duration = .zero
        /// Whether a caller is reading it now.
        var reading = false
        /// Whether a batch has been refused for the cap since the last
        /// reading: then every batch is, however small, until the store is
        /// read again (a full store stays full for every tracker alike, not
        /// only for those whose batches are larger than what is left).
        var full = false
        var lastSweep: Duration = .zero
    }

    let limits: CollectorLimits
    let clock: ElapsedClock
    let state = Locked(State())
    /// Sweep addresses whose buckets are full once more than this many are kept (at most once a second).
    static let sweepThreshold = 4096
    /// How often the store's figure is read again while it says the store is full: a minute.
    static let storedRereadInterval: Duration = .seconds(60)
    /// A bucket of events holds this many seconds of its rate (and at least one full batch).
    static let burstSeconds = 10.0

    init(limits: CollectorLimits, clock: ElapsedClock = ElapsedClock()) {
        self.limits = limits
        self.clock = clock
    }

    /// Whether the caller should read the store's event bytes and pass them
    /// to ``setStoredBytes(_:)`` before ``admit(address:events:bytes:)``: never
    /// read yet, or the store was full at the last reading a minute ago or
    /// more. One caller at a time is told so (the reading is a scan of the
    /// table); the others go on with the figure there is (none at first: no cap yet).
    func claimStoredBytesReading() -> Bool {
        guard limits.maxStoredBytes > 0 else { return false }
        return state.withLock { state in
            guard !state.reading else { return false }
            if let stored = state.storedBytes,
               (stored < limits.maxStoredBytes && !state.full) || clock.now - state.storedRead < Self.storedRereadInterval { return false }
            state.reading = true
            return true
        }
    }

    /// Records the store's event bytes as read from it (nil: the reading failed; the next batch tries again).
    func setStoredBytes(_ bytes: Int?) {
        state.withLock { state in
            state.reading = false
            guard let bytes else { return }
            state.storedBytes = bytes
            state.storedRead = clock.now
            state.full = bytes >= limits.maxStoredBytes
        }
    }

    /// Gives back bytes an admitted batch was charged for and did not store
    /// (events rejected one by one, or the whole batch when storing failed).
    func returnUnstored(bytes: Int) {
        guard bytes > 0 else { return }
        state.withLock { state in
            if let stored = state.storedBytes { state.storedBytes = max(0, stored - bytes) }
        }
    }

    /// What ``admit(address:events:bytes:)`` would answer a batch of `events`
    /// events from `address` now, when that is known from the count alone,
    /// before its events are decoded and measured: the store full, or a
    /// bucket (the address's events or bytes, or the total) that cannot take
    /// them, with the same Retry-After. Nil: the batch must be decoded and
    /// measured. A flood then costs the server parsing its bodies, not
    /// decoding and measuring every event (13 → ~2 ms a refused 380-event batch).
    func refusalBeforeDecoding(address: String, events: Int) -> Decision? {
        state.withLock { state in
            let now = clock.now
            if limits.maxStoredBytes > 0, state.full, let stored = state.storedBytes {
                return .storeFull(stored: stored, limit: limits.maxStoredBytes)
            }
            let entry = state.addresses[address]
            let checks: [(bucket: TokenBucket?, amount: Double, reason: String)] = [
                (entry?.events, Double(events), "more than \(Self.format(limits.eventsPerSecondPerAddress)) events a second from this address"),
                (entry?.bytes, 1, "more than \(Self.mebibytes(limits.bytesPerAddressPerHour)) of events an hour from this address"),
                (state.total, Double(events), "more than \(Self.format(limits.eventsPerSecond)) events a second from all addresses"),
            ]
            for check in checks {
                guard var bucket = check.bucket else { continue }
                bucket.refill(now: now)
                if !bucket.holds(check.amount), let wait = bucket.secondsUntil(check.amount) {
                    return .rateLimited(reason: check.reason, retryAfter: wait)
                }
            }
            return nil
        }
    }

    /// Charges a batch of `events` events, `bytes` bytes, from `address`
    /// (``addressKey(_:)``) — to every bucket and to the stored bytes (so
    /// batches stored at once cannot pass the cap together), or to none.
    func admit(address: String, events: Int, bytes: Int) -> Decision {
        state.withLock { state in
            let now = clock.now
            if limits.maxStoredBytes > 0, let stored = state.storedBytes, state.full || stored + bytes > limits.maxStoredBytes {
                state.full = true
                return .storeFull(stored: stored, limit: limits.maxStoredBytes)
            }
            sweep(&state, now: now)
            var entry = state.addresses[address] ?? Address(events: bucket(eventsPerSecond: limits.eventsPerSecondPerAddress, now: now),
                                                            bytes: limits.bytesPerAddressPerHour > 0
                                                                ? TokenBucket(capacity: Double(limits.bytesPerAddressPerHour),
                                                                              rate: Double(limits.bytesPerAddressPerHour) / 3600, now: now) : nil)
            entry.refill(now: now)
            var total = state.total ?? bucket(eventsPerSecond: limits.eventsPerSecond, now: now)
            total?.refill(now: now)
            let perAddress = "more than \(Self.format(limits.eventsPerSecondPerAddress)) events a second from this address"
            let bytesPerAddress = "more than \(Self.mebibytes(limits.bytesPerAddressPerHour)) of events an hour from this address"
            let all = "more than \(Self.format(limits.eventsPerSecond)) events a second from all addresses"
            let checks: [(bucket: TokenBucket?, amount: Double, reason: String)] = [
                (entry.events, Double(events), perAddress), (entry.bytes, Double(bytes), bytesPerAddress), (total, Double(events), all),
            ]
            var decision = Decision.admitted
            for check in checks {
                guard let bucket = check.bucket, !bucket.holds(check.amount) else { continue }
                if let wait = bucket.secondsUntil(check.amount) {
                    decision = .rateLimited(reason: check.reason, retryAfter: wait)
                } else {
                    decision = .tooLarge(reason: "a batch of \(events) events, \(bytes) bytes, is more than this collector ever takes at once "
                                         + "(\(check.reason.dropFirst("more than ".count))); send smaller batches")
                }
                break
            }
            if decision == .admitted {
                entry.events?.take(Double(events))
                entry.bytes?.take(Double(bytes))
                total?.take(Double(events))
                if let stored = state.storedBytes { state.storedBytes = stored + bytes }
            }
            state.addresses[address] = entry
            state.total = total
            return decision
        }
    }

    /// A bucket of events at `eventsPerSecond` (nil: no limit), holding
    /// ``burstSeconds`` of them and at least one full batch.
    func bucket(eventsPerSecond: Double, now: Duration) -> TokenBucket? {
        guard eventsPerSecond > 0 else { return nil }
        return TokenBucket(capacity: max(Double(CollectorRoutes.maxEventsPerBatch), eventsPerSecond * Self.burstSeconds),
                           rate: eventsPerSecond, now: now)
    }

    /// Forgets addresses whose buckets have refilled, when there are many (at most once a second).
    func sweep(_ state: inout State, now: Duration) {
        guard state.addresses.count > Self.sweepThreshold, now - state.lastSweep >= .seconds(1) else { return }
        state.lastSweep = now
        state.addresses = state.addresses.compactMapValues { entry in
            var entry = entry
            entry.refill(now: now)
            return entry.isFull ? nil : entry
        }
    }

    /// The key an address is limited by: an IPv4 address as it is, an IPv6
    /// address by its /64 (one subscriber's network; its addresses are free to them).
    static func addressKey(_ address: String) -> String {
        guard address.contains(":") else { return address }
        var bytes = in6_addr()
        guard inet_pton(AF_INET6, address, &bytes) == 1 else { return address }
        let prefix = withUnsafeBytes(of: bytes) { Array($0.prefix(8)) }
        if prefix == [0, 0, 0, 0, 0, 0, 0, 0] { return address }  // ::1, IPv4-mapped and other special forms: the address itself
        return stride(from: 0, to: 8, by: 2).map { String(UInt16(prefix[$0]) << 8 | UInt16(prefix[$0 + 1]), radix: 16) }.joined(separator: ":") + "::/64"
    }

    static func format(_ rate: Double) -> String {
        rate == rate.rounded() ? String(Int(rate)) : String(rate)
    }

    static func mebibytes(_ bytes: Int) -> String {
        bytes >= 1 << 20 && bytes % (1 << 20) == 0 ? "\(bytes >> 20) MiB" : "\(bytes) bytes"
    }
}
