import Foundation
import Hummingbird
import NIOCore
import VisualSearch
import SearchEngine

/// Decides whether a request runs now, waits, or is refused — and spends
/// nothing on a request before its credentials are checked:
///
/// 1. its credentials, from the head (Basic, or `access_key`/`app_key` in the
///    query string): wrong ones → 401 at once, the body unread; an app key on
///    the data API → 403 (``ServerCredentials/Role``). Both count in the
///    sender's refusal budget (``ClientLimiter/recordRefusal(_:)``);
/// 2. on a server with keys, a request with a body whose head carries no
///    credential (the collector, a key in a form body) gets no lane slot yet:
///    admission reads its body itself under a small allowance apart from the
///    lanes (``UnverifiedBodies``), only while it keeps arriving
///    (``UnverifiedBodyReader``: a stalled body → 408, connection closed),
///    then checks the form's key (wrong → 401) and goes on with the body in memory;
/// 3. who it is from (``ClientIdentity``): its verified key (an app key with
///    its address), else its address;
/// 4. its client's limits (``ClientLimiter``), which bind only in a contended
///    lane: over its share of the lane or its rate → 429 with `Retry-After`,
///    sent after ``ClientLimits/refusalDelay``; a search also over its share
///    of the processors while others search (``ClientLimits/searchProcessors``);
/// 5. the body budget (``BodyBudget``, from the declared length, with the
///    collector's own cap): over the client's share → 429; over the share of
///    requests without a verified key, or the whole budget → 503;
/// 6. its lane's queue (``RequestLane``, by the path as the router matches
///    it): a slot, a bounded wait, or → 503 with `Retry-After` (load shedding).
///
/// `/health` and `/metrics` pass straight through: operators and load
/// balancers must see the server most when it is busiest. An open server
/// (no keys) has nothing to check: steps 1 and 2 do nothing there.
public struct AdmissionMiddleware<Context: VisualSearchRequestContext>: RouterMiddleware {
    let admission: Admission
    let limits: ServerLimits
    let credentials: ServerCredentials
    let maxBodyBytes: Int
    let requestTimeout: Double
    let metrics: ServerMetrics?
    static var exempt: Set<String> { ["/health", "/metrics"] }

    init(admission: Admission, limits: ServerLimits, credentials: ServerCredentials, maxBodyBytes: Int, requestTimeout: Double,
         metrics: ServerMetrics?) {
        self.admission = admission
        self.limits = limits
        self.credentials = credentials
        self.maxBodyBytes = maxBodyBytes
        self.requestTimeout = requestTimeout
        self.metrics = metrics
    }

    public func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let path = RoutePath.normalized(request.uri.path)
        if Self.exempt.contains(path) { return try await next(request, context) }
        let address = ClientIdentity.address(of: request, remoteAddress: context.remoteAddress, limits: limits.clients)
        let verdict = credentials.verdict(authorization: request.headers[.authorization], parameters: WireQuery(parsing: request.uri.query ?? ""))
        switch verdict {
        case .refused(let reason):
            return await refuseCredentials(.unauthorized(reason), address: address, path: path, context: context)
        case .verified(_, .app) where RoutePath.isDataAPI(path):
            return await refuseCredentials(.forbidden(ServerCredentials.dataAPIMessage), address: address, path: path, context: context)
        case .missing where Self.hasBody(request):
            return try await admitUnverified(request, address: address, path: path, context: context, next: next)
        case .open, .verified, .missing:
            let reserved = Self.bodyReservation(method: request.method, declaredLength: request.headers[.contentLength].flatMap { Int($0) },
                                                maxBodyBytes: Self.bodyLimit(path: path, maxBodyBytes: maxBodyBytes))
            return try await admit(request, client: ClientIdentity(verdict: verdict, address: address), reserving: reserved,
                                   path: path, context: context, next: next)
        }
    }

    /// A request whose credentials are known (verified, missing with no body
    /// to carry them, or an open server): its client's limits, its body's
    /// memory (`reserving` bytes), its lane; then the route, with
    /// `parameters` when admission has read them already.
    func admit(_ request: Request, client: ClientIdentity, reserving reserved: Int, parameters: RequestParameters? = nil, path: String,
               context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let lane = RequestLane(path: path), search = RoutePath.isSearch(path)
        switch admission.clients.admit(client.key, lane: lane, slots: admission.slots(of: lane), search: search) {
        case .admitted: break
        case .rateLimited(let retryAfter):
            metrics?.recordRateLimited(reason: "rate")
            await tarpit()
            return refuse(.rateLimited(reason: "more than \(Self.format(limits.clients.requestsPerSecond)) requests a second (burst \(limits.clients.burst)) from this client",
                                       retryAfter: retryAfter), path: path, context: context)
        case .refusedTooOften(let retryAfter):
            return await refuseTooOften(retryAfter: retryAfter, path: path, context: context)
        case .tooManyInFlight(let limit, let limitedLane):
            metrics?.recordRateLimited(reason: "concurrency")
            await tarpit()
            let kind = limitedLane == .image ? "image requests" : "requests"
            return refuse(.rateLimited(reason: "more than \(limit) \(kind) at once from this client while the server is busy", retryAfter: 1),
                          path: path, context: context)
        }
        defer { admission.clients.release(client.key, lane: lane, search: search) }

        if let refusal = await reserve(reserved, for: client, lane: lane, path: path, context: context) { return refusal }
        defer { admission.bodies.release(reserved, for: client) }

        guard let queue = admission.lanes[lane] else { return try await next(request, context) }
        guard await queue.acquire() else {
            metrics?.recordShed(lane: lane)
            let now = queue.counts
            return refuse(.busy(reason: "\(now.running) \(lane.rawValue) requests in flight and \(now.queued) waiting (limits \(queue.limit) and \(queue.maxQueued))",
                                retryAfter: max(1, Int(limits.maxQueueWait.rounded()) / 2)), path: path, context: context)
        }
        defer { queue.release() }
        do {
            // Image work (an upload's decode and embedding) is queued by client: one client's uploads take turns with others'.
            let response = try await ImageWorkPool.$client.withValue(client.key) {
                try await RequestParameters.$admitted.withValue(parameters) { try await next(request, context) }
            }
            if Self.isRefusalOfWhatWasSent(response.status.code) { admission.clients.recordRefusal(client.key) }
            return response
        } catch {
            if let status = (error as? any HTTPResponseError)?.status.code, Self.isRefusalOfWhatWasSent(status) {
                admission.clients.recordRefusal(client.key)
            }
            throw error
        }
    }

    /// A request with a body and no credential in its head, on a server with
    /// keys: its body is read here, holding only a place among the unverified
    /// bodies (``UnverifiedBodies``) and the body memory of its address, while
    /// it keeps arriving; then its form's credentials are checked before it
    /// asks for a lane slot, with the body in memory.
    func admitUnverified(_ request: Request, address: String, path: String, context: Context,
                         next: (Request, Context) async throws -> Response) async throws -> Response {
        let sender = ClientIdentity(verdict: .missing, address: address)
        let limit = Self.bodyLimit(path: path, maxBodyBytes: maxBodyBytes)
        let declared = request.headers[.contentLength].flatMap { Int($0) }
        if let retryAfter = admission.clients.refusalsExhausted(sender.key) {
            return await refuseTooOften(retryAfter: retryAfter, path: path, context: context)
        }
        if let declared, declared > limit {
            admission.clients.recordRefusal(sender.key)
            return refuse(.bodyTooLarge(limit: limit), path: path, context: context)
        }
        let buffer: ByteBuffer
        do {
            switch admission.unverified.take(for: address) {
            case nil: break
            case .client(let most)?:
                metrics?.recordRateLimited(reason: "unverified_bodies")
                await tarpit()
                return refuse(.rateLimited(reason: "more than \(most) request bodies without a credential in the head at once from this address; "
                                           + "send the key in the query string or as Basic authorization", retryAfter: 1), path: path, context: context)
            case .full?:
                metrics?.recordShed(lane: RequestLane(path: path))
                return refuse(.busy(reason: "\(admission.unverified.inFlight) request bodies without a credential in the head are being read "
                                    + "(limit \(limits.unverifiedBodies.maxInFlight)); send the key in the query string or as Basic authorization",
                                    retryAfter: 1), path: path, context: context)
            }
            defer { admission.unverified.release(for: address) }
            let reserved = Self.bodyReservation(method: request.method, declaredLength: declared, maxBodyBytes: limit)
            if let refusal = await reserve(reserved, for: sender, lane: RequestLane(path: path), path: path, context: context) { return refusal }
            defer { admission.bodies.release(reserved, for: sender) }
            let reader = UnverifiedBodyReader(limits: limits.unverifiedBodies, clock: admission.clock, timeout: requestTimeout)
            do throws(UnverifiedBodyReader.Failure) {
                buffer = try await reader.read(request.body, upTo: limit)
            } catch {
                switch error {
                case .stalled(let received):
                    admission.clients.recordRefusal(sender.key)
                    var response = refuse(.bodyStalled("the body stopped arriving (\(received) bytes received; at least \(limits.unverifiedBodies.minRate) bytes a second "
                                                      + "after \(Self.format(limits.unverifiedBodies.grace)) s are needed before its credentials are checked)"),
                                          path: path, context: context)
                    response.headers[.connection] = "close"
                    return response
                case .tooLarge(let limit):
                    admission.clients.recordRefusal(sender.key)
                    return refuse(.bodyTooLarge(limit: limit), path: path, context: context)
                case .broken(let reason):
                    return refuse(.badBody("the body could not be read (\(reason))"), path: path, context: context)
                }
            }
        }
        var request = request
        request.body = RequestBody(buffer: buffer)
        let parameters: RequestParameters
        do throws(ServerError) {
            parameters = try RequestParameters.parse(Array(buffer.readableBytesView), of: request)
        } catch {
            admission.clients.recordRefusal(sender.key)
            return refuse(error, path: path, context: context)
        }
        let verdict = credentials.verdict(authorization: nil, parameters: parameters.query)
        switch verdict {
        case .refused(let reason):
            return await refuseCredentials(.unauthorized(reason), address: address, path: path, context: context)
        case .verified(_, .app) where RoutePath.isDataAPI(path):
            return await refuseCredentials(.forbidden(ServerCredentials.dataAPIMessage), address: address, path: path, context: context)
        case .open, .verified, .missing:
            return try await admit(request, client: ClientIdentity(verdict: verdict, address: address), reserving: buffer.readableBytes,
                                   parameters: parameters, path: path, context: context, next: next)
        }
    }

    /// Reserves a body's memory for `client`, or the refusal to answer.
    func reserve(_ bytes: Int, for client: ClientIdentity, lane: RequestLane, path: String, context: Context) async -> Response? {
        guard let refusal = admission.bodies.reserve(bytes, for: client) else { return nil }
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

    /// Wrong credentials, or a key whose role does not allow the path: answered
    /// at once, the body unread, and counted against the sender's address
    /// (429 instead once its refusal budget is spent).
    func refuseCredentials(_ error: ServerError, address: String, path: String, context: Context) async -> Response {
        let sender = "address:" + address
        if let retryAfter = admission.clients.refusalsExhausted(sender) {
            return await refuseTooOften(retryAfter: retryAfter, path: path, context: context)
        }
        admission.clients.recordRefusal(sender)
        return refuse(error, path: path, context: context)
    }

    func refuseTooOften(retryAfter: Int, path: String, context: Context) async -> Response {
        metrics?.recordRateLimited(reason: "refusals")
        await tarpit()
        return refuse(.rateLimited(reason: "more than \(Self.format(limits.clients.refusalsPerSecond)) refused requests a second (burst \(limits.clients.refusalBurst)) from this client; fix what it sends",
                                   retryAfter: retryAfter), path: path, context: context)
    }

    /// Whether a request has a body to read: a POST or PUT that declares a
    /// length above zero, or sends it chunked.
    static func hasBody(_ request: Request) -> Bool {
        guard request.method == .post || request.method == .put else { return false }
        if let declared = request.headers[.contentLength].flatMap({ Int($0) }) { return declared > 0 }
        return request.headers[.transferEncoding] != nil
    }

    /// 400 and 413: refused for what the client sent, after the server read
    /// and looked at it; 401 and 403: refused for its credentials
    /// (``ClientLimiter/recordRefusal(_:)``).
    static func isRefusalOfWhatWasSent(_ status: Int) -> Bool {
        status == 400 || status == 401 || status == 403 || status == 413
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
