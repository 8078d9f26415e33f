import Hummingbird
import VisualSearch

/// What vsearch's routes and middleware need of a request context: the
/// request id that the response's `reqid`, its `X-Log-ID` header and the log
/// line share. Make your own application's context conform to mount the
/// routes there.
public protocol VisualSearchRequestContext: RequestContext {
    /// A 19-digit id, like the hosted service's `reqid`.
    var requestID: String { get }
}

/// The request context of `vsearch serve`: Hummingbird's core storage plus the request id.
public struct ServerContext: VisualSearchRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let requestID: String

    public init(source: Source) {
        coreContext = .init(source: source)
        requestID = RequestID.make()
    }
}
