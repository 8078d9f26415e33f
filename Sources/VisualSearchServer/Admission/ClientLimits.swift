import Foundation

/// How much one client may ask of the server when it is busy: a request
/// rate (a token bucket) and requests in flight. They bind only in a
/// contended lane (half its slots or more in flight, ``ClientLimiter``) —
/// and, for searches, once the processors are busy (``searchProcessors``): while
/// capacity is free, no client is refused. Beyond them, the server answers
/// 429 with `Retry-After`.
///
/// A client is its access key once verified (Basic authorisation with the
/// right secret), its app key *and* address for an app key (an `access_key`/
/// `app_key` of the query string or of a form body: app keys ship inside apps),
/// and otherwise its address — the connection's peer, or the last
/// address of ``addressHeader`` when the server runs behind a proxy that sets
/// it (``ClientIdentity``).
///
/// ```swift
/// var limits = ClientLimits()
/// limits.requestsPerSecond = 100    // a busy shop's backend behind one key
/// ```
public struct ClientLimits: Sendable, Hashable {
    /// Sustained requests a second per client while its lane is contended: 50 by default (0 turns rate limiting off).
    public var requestsPerSecond: Double
    /// Requests a client may send at once above the rate (the bucket's size): 100 by default.
    public var burst: Int
    /// Requests of one client in flight at once while its lane is contended:
    /// 16 by default (0: no limit). Its fair share of the lane can be less:
    /// the lane's slots divided among the clients in it plus one.
    public var maxConcurrent: Int
    /// Image requests (``RequestLane/image``: uploads and inserts) of
    /// one client in flight at once while the image lane is contended: 4 by
    /// default (0: no limit) — a quarter of the lane's slots, so one client cannot hold them all.
    public var maxConcurrentImageRequests: Int
    /// Requests a second one client may have refused for what it sent (400,
    /// 413: pixel bombs, bodies over the limit; 401 and 403: wrong keys, an
    /// app key on the data API — counted per address) before its requests are
    /// limited (429) in every lane, busy or not: 5 by default (0: no such limit).
    /// Each of those requests cost the server a read and a look; a client that
    /// sends what the server can answer is never limited by it.
    public var refusalsPerSecond: Double
    /// Refusals one client may collect at once above ``refusalsPerSecond``: 10 by default.
    public var refusalBurst: Int
    /// Seconds a refusal (429) waits before it is sent: 1 by default (0: at
    /// once). A client that honours `Retry-After` loses nothing; one that
    /// floods gets at most one answer a second per connection instead of
    /// thousands, and its bodies stay in its own send buffer meanwhile (the
    /// "tarpit" of nginx's `limit_req` delay and of SMTP servers).
    public var refusalDelay: Double
    /// A header carrying the client's address when a trusted proxy sets it
    /// (`X-Forwarded-For`: the last address is used, the one the proxy
    /// added). None by default: behind no proxy, a client could forge it.
    public var addressHeader: String?
    /// The processors searches share (by `im_name`, recommendations, colour
    /// search): the cores by default (`ProcessInfo.activeProcessorCount`).
    /// Beyond one search a processor, a search only waits for the others. With
    /// this many searches in flight, a client keeps to its share of them while
    /// other clients search too (a search in flight, or one answered within
    /// the last second): this number divided among the clients searching, at
    /// least one search each (``ClientLimiter``); 429 beyond.
    public var searchProcessors: Int

    /// Limits with the documented defaults.
    public init(requestsPerSecond: Double = 50, burst: Int = 100, maxConcurrent: Int = 16, maxConcurrentImageRequests: Int = 4,
                refusalDelay: Double = 1, addressHeader: String? = nil, refusalsPerSecond: Double = 5, refusalBurst: Int = 10,
                searchProcessors: Int = ProcessInfo.processInfo.activeProcessorCount) {
        self.searchProcessors = searchProcessors
        self.refusalDelay = refusalDelay
        self.refusalsPerSecond = refusalsPerSecond
        self.refusalBurst = refusalBurst
        self.requestsPerSecond = requestsPerSecond
        self.burst = burst
        self.maxConcurrent = maxConcurrent
        self.maxConcurrentImageRequests = maxConcurrentImageRequests
        self.addressHeader = addressHeader
    }
}
