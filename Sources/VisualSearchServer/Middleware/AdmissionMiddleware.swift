import Foundation
import Hummingbird

/// Decides whether a request runs now, waits, or is refused — before its
/// body is read:
///
/// 1. its client's limits (``ClientLimits``): over the rate or the requests
///    in flight → 429 with `Retry-After`, sent after ``ClientLimits/refusalDelay``;
/// 2. the body budget (``ServerLimits/maxBodyBytesInFlight``) → 503;
/// 3. its lane's queue (``RequestLane``): a slot, a bounded wait, or → 503
///    with `Retry-After` (load shedding).
///
/// `/health` and `/metrics` pass straight through: operators and load
/// balancers must see the server most when it is busiest.
public struct AdmissionMiddleware<Context: VisualSearchRequestContext>: RouterMiddleware {
    let admission: Admission
    let limits: ServerLimits
    let keyed: Bool
    let maxBodyBytes: Int
    let metrics: ServerMetrics?
    static var exempt: Set<String> { ["/health", "/metrics"] }

    init(admission: Admission, configuration: ServerConfiguration, metrics: ServerMetrics?) {
        self.admission = admission
        limits = configuration.limits
        keyed = !configuration.credentials.isOpen
        maxBodyBytes = configuration.maxBodyBytes
        self.metrics = metrics
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = request.uri.path
        if Self.exempt.contains(path) { return try await next(request, context) }
        let client = ClientIdentity.key(of: request, remoteAddress: context.remoteAddress, limits: limits.clients, keyed: keyed)
        let lane = RequestLane(path: path)
        switch admission.clients.admit(client, lane: lane) {
        case .admitted: break
        case .rateLimited(let retryAfter):
            metrics?.recordRateLimited(reason: "rate")
            await tarpit()
            return refuse(.rateLimited(reason: "more than \(Self.format(limits.clients.requestsPerSecond)) requests a second (burst \(limits.clients.burst)) from this client",
                                       retryAfter: retryAfter), path: path, context: context)
        case .tooManyInFlight(let limit, let limitedLane):
            metrics?.recordRateLimited(reason: "concurrency")
            await tarpit()
            let kind = limitedLane == .image ? "image requests" : "requests"
            return refuse(.rateLimited(reason: "more than \(limit) \(kind) at once from this client", retryAfter: 1), path: path, context: context)
        }
        defer { admission.clients.release(client, lane: lane) }

        let reserved = Self.bodyReservation(method: request.method, declaredLength: request.headers[.contentLength].flatMap { Int($0) },
                                            maxBodyBytes: maxBodyBytes)
        guard admission.reserveBody(reserved) else {
            metrics?.recordShed(lane: .image)
            return refuse(.busy(reason: "request bodies in memory are at the \(limits.maxBodyBytesInFlight >> 20) MiB limit", retryAfter: 1),
                          path: path, context: context)
        }
        defer { admission.releaseBody(reserved) }

        guard let queue = admission.lanes[lane] else { return try await next(request, context) }
        guard await queue.acquire() else {
            metrics?.recordShed(lane: lane)
            return refuse(.busy(reason: "\(queue.limit) \(lane.rawValue) requests in flight and \(queue.maxQueued) waiting",
                                retryAfter: max(1, Int(limits.maxQueueWait.rounded()) / 2)), path: path, context: context)
        }
        defer { queue.release() }
        return try await next(request, context)
    }

    /// Body bytes a request may hold in memory: its declared length; the body
    /// limit when undeclared (chunked); nothing for a body over the limit (the
    /// route refuses it with 413 without reading it) or a method without a body.
    static func bodyReservation(method: HTTPRequest.Method, declaredLength: Int?, maxBodyBytes: Int) -> Int {
        guard method == .post || method == .put else { return 0 }
        guard let declaredLength else { return maxBodyBytes }
        return declaredLength > maxBodyBytes ? 0 : declaredLength
    }

    /// Holds a refusal for ``ClientLimits/refusalDelay`` before it is answered.
    func tarpit() async {
        guard limits.clients.refusalDelay > 0 else { return }
        try? await Task.sleep(for: .milliseconds(Int64(limits.clients.refusalDelay * 1000)))
    }

    func refuse(_ error: ServerError, path: String, context: Context) -> Response {
        Responses.failure(error, family: RoutePath.family(of: path), method: RoutePath.method(of: path), requestID: context.requestID)
    }

    static func format(_ rate: Double) -> String {
        rate == rate.rounded() ? String(Int(rate)) : String(rate)
    }
}
