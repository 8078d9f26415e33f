import Hummingbird
import VisualSearch

/// What vsearch's routes and middleware need of a request context: the
/// request id that the response's `reqid`, its `X-Log-ID` header and the log
/// line share. Make your own application's context conform to mount the
/// routes there.
public protocol VisualSearchRequestContext: RequestContext {
    /// A 19-digit id, like the hosted service's `reqid`.
    var requestID: String { get }
    /// The peer's IP address, when the context knows it (``ClientLimits`` key on it).
    var remoteAddress: String? { get }
}

extension VisualSearchRequestContext {
    /// Unknown unless the context says: every client without a key then shares one set of ``ClientLimits``.
    public var remoteAddress: String? { nil }
}

/// The request context of `vsearch serve`: Hummingbird's core storage plus the request id.
public struct ServerContext: VisualSearchRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let requestID: String
    public let remoteAddress: String?

    public init(source: Source) {
        coreContext = .init(source: source)
        requestID = RequestID.make()
        remoteAddress = source.channel.remoteAddress?.ipAddress
    }
}
