import Foundation
import Hummingbird
import SearchEngine

/// Decides whether a request runs now, waits, or is refused — before its
/// body is read:
///
/// 1. who it is from (``ClientIdentity``): its key once verified, else its
///    address — so a made-up key is not a client of its own;
/// 2. its client's limits (``ClientLimiter``), which bind only in a contended
///    lane: over its share of the lane or its rate → 429 with `Retry-After`,
///    sent after ``ClientLimits/refusalDelay``;
/// 3. the body budget (``BodyBudget``, from the declared length, with the
///    collector's own cap): over the client's share → 429; over the share of
///    requests without a verified key, or the whole budget → 503;
/// 4. its lane's queue (``RequestLane``, by the path as the router matches
///    it): a slot, a bounded wait, or → 503 with `Retry-After` (load shedding).
///
/// `/health` and `/metrics` pass straight through: operators and load
/// balancers must see the server most when it is busiest.
public struct AdmissionMiddleware<Context: VisualSearchRequestContext>: RouterMiddleware {
    let admission: Admission
    let limits: ServerLimits
    let credentials: ServerCredentials
    let maxBodyBytes: Int
    let metrics: ServerMetrics?
    static var exempt: Set<String> { ["/health", "/metrics"] }

    init(admission: Admission, configuration: ServerConfiguration, metrics: ServerMetrics?) {
        self.admission = admission
        limits = configuration.limits
        credentials = configuration.credentials
        maxBodyBytes = configuration.maxBodyBytes
        self.metrics = metrics
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = RoutePath.normalized(request.uri.path)
        if Self.exempt.contains(path) { return try await next(request, context) }
        let client = ClientIdentity(of: request, remoteAddress: context.remoteAddress, limits: limits.clients, credentials: credentials)
        let lane = RequestLane(path: path)
        switch admission.clients.admit(client.key, lane: lane, slots: admission.slots(of: lane)) {
        case .admitted: break
        case .rateLimited(let retryAfter):
            metrics?.recordRateLimited(reason: "rate")
            await tarpit()
            return refuse(.rateLimited(reason: "more than \(Self.format(limits.clients.requestsPerSecond)) requests a second (burst \(limits.clients.burst)) from this client",
                                       retryAfter: retryAfter), path: path, context: context)
        case .refusedTooOften(let retryAfter):
            metrics?.recordRateLimited(reason: "refusals")
            await tarpit()
            return refuse(.rateLimited(reason: "more than \(Self.format(limits.clients.refusalsPerSecond)) refused requests a second (burst \(limits.clients.refusalBurst)) from this client; fix what it sends",
                                       retryAfter: retryAfter), path: path, context: context)
        case .tooManyInFlight(let limit, let limitedLane):
            metrics?.recordRateLimited(reason: "concurrency")
            await tarpit()
            let kind = limitedLane == .image ? "image requests" : "requests"
            return refuse(.rateLimited(reason: "more than \(limit) \(kind) at once from this client while the server is busy", retryAfter: 1),
                          path: path, context: context)
        }
        defer { admission.clients.release(client.key, lane: lane) }

        let reserved = Self.bodyReservation(method: request.method, declaredLength: request.headers[.contentLength].flatMap { Int($0) },
                                            maxBodyBytes: Self.bodyLimit(path: path, maxBodyBytes: maxBodyBytes))
        if let refusal = admission.bodies.reserve(reserved, for: client) {
            switch refusal {
            case .clientShare(let limit):
                metrics?.recordRateLimited(reason: "body_memory")
                await tarpit()
                return refuse(.rateLimited(reason: "more than \(Self.mebibytes(limit)) of request bodies at once from this client", retryAfter: 1),
                              path: path, context: context)
            case .unauthenticatedShare(let limit):
                metrics?.recordShed(lane: lane)
                return refuse(.busy(reason: "request bodies in memory without a verified key are at the \(Self.mebibytes(limit)) limit",
                                    retryAfter: 1), path: path, context: context)
            case .full(let limit):
                metrics?.recordShed(lane: lane)
                return refuse(.busy(reason: "request bodies in memory are at the \(Self.mebibytes(limit)) limit", retryAfter: 1),
                              path: path, context: context)
            }
        }
        defer { admission.bodies.release(reserved, for: client) }

        guard let queue = admission.lanes[lane] else { return try await next(request, context) }
        guard await queue.acquire() else {
            metrics?.recordShed(lane: lane)
            return refuse(.busy(reason: "\(queue.limit) \(lane.rawValue) requests in flight and \(queue.maxQueued) waiting",
                                retryAfter: max(1, Int(limits.maxQueueWait.rounded()) / 2)), path: path, context: context)
        }
        defer { queue.release() }
        do {
            // Image work (an upload's decode and embedding) is queued by client: one client's uploads take turns with others'.
            let response = try await ImageWorkPool.$client.withValue(client.key) { try await next(request, context) }
            if Self.isRefusalOfWhatWasSent(response.status.code) { admission.clients.recordRefusal(client.key) }
            return response
        } catch {
            if let status = (error as? any HTTPResponseError)?.status.code, Self.isRefusalOfWhatWasSent(status) {
                admission.clients.recordRefusal(client.key)
            }
            throw error
        }
    }

    /// 400 and 413: refused for what the client sent, after the server read
    /// and looked at it (``ClientLimiter/recordRefusal(_:)``).
    static func isRefusalOfWhatWasSent(_ status: Int) -> Bool {
        status == 400 || status == 413
    }

    /// The largest body a request to `path` may send: the collector's own
    /// cap (``CollectorRoutes/maxBatchBytes``) for `/v3/events`, else the server's.
    static func bodyLimit(path: String, maxBodyBytes: Int) -> Int {
        path == CollectorRoutes.batchPath ? min(maxBodyBytes, CollectorRoutes.maxBatchBytes) : maxBodyBytes
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

    static func mebibytes(_ bytes: Int) -> String {
        bytes >= 1 << 20 ? "\(bytes >> 20) MiB" : "\(bytes) bytes"
    }

    static func format(_ rate: Double) -> String {
        rate == rate.rounded() ? String(Int(rate)) : String(rate)
    }
}
