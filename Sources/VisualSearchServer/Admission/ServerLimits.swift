import Foundation
import ImageOps
import SearchEngine

/// The limits that keep `vsearch serve` answering under hostile load, apart
/// from the command line's: what one image may declare, how much decoding
/// runs at once, what one client may ask, how requests queue, and what a
/// connection may cost. Every one is a `vsearch serve` flag; the README's
/// "Running it in production" section explains them.
public struct ServerLimits: Sendable, Hashable {
    /// What an uploaded or `im_url` image may declare: 32 megapixels by
    /// default (ImageMagick's web-safe policy allows about as much; more than
    /// any phone's default output), a 32,767 px side and 32 MiB encoded.
    /// Beyond, 413 before anything is decoded. The command line keeps
    /// ``ImageLimits/default`` (179 MP, 128 MiB).
    public var image: ImageLimits
    /// Decoding's threads, pixel budget and queue (``ImageWorkPool/Limits``).
    public var imageWork: ImageWorkPool.Limits
    /// What one client may ask (429 beyond).
    public var clients: ClientLimits
    /// Image requests (``RequestLane/image``) in flight at once, their
    /// bodies' reading included: 16 by default. Light requests have
    /// ``ServerConfiguration/maxConcurrentRequests`` of their own.
    public var maxConcurrentImageRequests: Int
    /// Requests that may wait for a slot, in each lane: 128 by default; more are shed (503).
    public var maxQueuedRequests: Int
    /// Seconds a request may wait for a slot before it is shed (503): 5 by default.
    public var maxQueueWait: Double
    /// Request bodies held in memory at once, by their declared length (the
    /// body limit when undeclared): 256 MiB by default; more are shed (503).
    /// One client may hold a quarter of it (429 beyond), and on a server with
    /// keys the requests without a verified key a quarter in all (503 beyond): ``BodyBudget``.
    public var maxBodyBytesInFlight: Int
    /// Connections and slow clients.
    public var connections: ConnectionLimits
    /// What one search may ask for: results a page (`limit` ≤ 100), paging
    /// depth (`page × limit` ≤ 1,000) and discover objects (≤ 30); 400 beyond.
    public var queries = QueryLimits()
    /// On a server with keys, the bodies of requests whose head carries no
    /// credential: read by admission, apart from the lanes, only while they
    /// keep arriving (``UnverifiedBodyLimits``).
    public var unverifiedBodies = UnverifiedBodyLimits()
    /// Data API insert transactions running at once (2) and waiting (8); `/insert` is refused beyond (503 with `Retry-After`).
    public var inserts = InsertLimits()
    /// What the keyless collector takes in: events a second per address and
    /// in all, event bytes per address an hour, and event bytes stored (``CollectorLimits``).
    public var collector = CollectorLimits()

    /// Limits with the documented defaults.
    public init(image: ImageLimits = ServerLimits.defaultImageLimits, imageWork: ImageWorkPool.Limits = ImageWorkPool.Limits(),
                clients: ClientLimits = ClientLimits(), maxConcurrentImageRequests: Int = 16, maxQueuedRequests: Int = 128,
                maxQueueWait: Double = 5, maxBodyBytesInFlight: Int = 256 << 20, connections: ConnectionLimits = ConnectionLimits()) {
        self.image = image
        self.imageWork = imageWork
        self.clients = clients
        self.maxConcurrentImageRequests = maxConcurrentImageRequests
        self.maxQueuedRequests = maxQueuedRequests
        self.maxQueueWait = maxQueueWait
        self.maxBodyBytesInFlight = maxBodyBytesInFlight
        self.connections = connections
    }

    /// 32 MP, 32,767 px a side, 32 MiB encoded.
    public static let defaultImageLimits = ImageLimits(maxPixels: 32_000_000, maxSide: 32_767, maxInputBytes: 32 << 20)
}
