import Foundation
import Hummingbird
import NIOCore
import SearchEngine
import VisualSearch

/// `GET /metrics` — the server's ``ServerMetrics`` in the Prometheus text
/// format 0.0.4 (every family with `# HELP` and `# TYPE`, the process
/// families last), for a Prometheus scraper. When the server has keys it asks for
/// them like the API (Basic authorisation, or `access_key`/`app_key`).
struct MetricsRoute: Sendable {
    let metrics: ServerMetrics
    let settings: EndpointSettings
    let admission: Admission
    let imageWork: ImageWorkPool?
    let catalogSize: @Sendable () async -> Int?

    func register<Context: VisualSearchRequestContext>(on router: Router<Context>) {
        router.get("metrics") { request, context in
            if let problem = settings.credentials.problem(authorization: request.headers[.authorization],
                                                               parameters: WireQuery(parsing: request.uri.query ?? "")) {
                return Responses.failure(.unauthorized(problem), family: .viSearch, method: "metrics", requestID: context.requestID)
            }
            await refresh()
            return Response(status: .ok, headers: [.contentType: "text/plain; version=0.0.4; charset=utf-8"],
                            body: ResponseBody(byteBuffer: ByteBuffer(bytes: metrics.render())))
        }
    }

    /// Reads the gauges and totals that live elsewhere.
    func refresh() async {
        for (lane, queue) in admission.lanes {
            let counts = queue.counts
            metrics.set(.httpRequestsInFlight, counts.running, labels: [lane.rawValue])
            metrics.set(.httpRequestsQueued, counts.queued, labels: [lane.rawValue])
        }
        if let imageWork {
            let statistics = imageWork.statistics
            metrics.set(.imageDecodesRunning, statistics.running)
            metrics.set(.imageDecodesQueued, statistics.queued)
            metrics.set(.imagePixelsInFlight, statistics.pixelsInFlight)
            metrics.advance(.imageDecodes, to: statistics.completed)
            metrics.advance(.imageDecodedPixels, to: statistics.pixelsDecoded)
            metrics.advance(.imageDecodesRefused, to: statistics.refused)
        }
        if let size = await catalogSize() { metrics.set(.catalogImages, size) }
    }
}
