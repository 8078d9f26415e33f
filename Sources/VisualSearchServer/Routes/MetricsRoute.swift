import Foundation
import Hummingbird
import NIOCore
import SearchEngine
import VisualSearch

/// `GET /metrics` — the server's ``ServerMetrics`` in the Prometheus text
/// format, for a Prometheus scraper. When the server has keys it asks for
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
            metrics.set("vsearch_http_requests_in_flight", counts.running, dimensions: [("lane", lane.rawValue)])
            metrics.set("vsearch_http_requests_queued", counts.queued, dimensions: [("lane", lane.rawValue)])
        }
        if let imageWork {
            let statistics = imageWork.statistics
            metrics.set("vsearch_image_decodes_running", statistics.running)
            metrics.set("vsearch_image_decodes_queued", statistics.queued)
            metrics.set("vsearch_image_pixels_in_flight", statistics.pixelsInFlight)
            metrics.advance("vsearch_image_decodes_total", to: statistics.completed)
            metrics.advance("vsearch_image_decoded_pixels_total", to: statistics.pixelsDecoded)
            metrics.advance("vsearch_image_decodes_refused_total", to: statistics.refused)
        }
        if let size = await catalogSize() { metrics.set("vsearch_catalog_images", size) }
    }
}
