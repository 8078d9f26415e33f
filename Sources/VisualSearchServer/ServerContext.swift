import Hummingbird
import VisualSearch

/// The per-request context: Hummingbird's core storage plus the request id
/// that the response's `reqid`, its `X-Log-ID` header and the log line share.
public struct ServerContext: RequestContext {
    public var coreContext: CoreRequestContextStorage
    /// A 19-digit id, like the hosted service's `reqid`.
    public let requestID: String

    public init(source: Source) {
        coreContext = .init(source: source)
        requestID = VisualSearchEngine.newRequestID()
    }
}
