import Foundation
import Testing
import Tracking
@testable import VisualSearchServer

/// The local collector in `vsearch serve`, reached by the real HTTP transport.
@Suite("Tracking collector")
struct CollectorTests {
    @Test("the tracker's HTTP transport delivers batches; a bad event is rejected alone; resends are deduplicated")
    func batches() async throws {
        let (url, server) = await TestServer.start()
        let transport = HTTPEventTransport(endpoint: .custom(url), code: "dev")
        var good = TrackingEvent.productClick(queryId: "1", pid: "chelsea_cat", imgUrl: "u", pos: 1)
        good.eventID = "g1"
        var bad = good
        bad.eventID = "b1"
        bad.currency = "usd"
        let outcome = await transport.send([good, bad], uid: "u1")
        guard case .results(let results) = outcome else { Issue.record("\(outcome)"); return }
        #expect(results[0] == .accepted)
        guard case .rejected(let reason) = results[1] else { Issue.record("\(results)"); return }
        #expect(reason.contains("currency"))
        #expect(await transport.send([good], uid: nil) == .results([.accepted]))
        #expect(try server.events.count() == 1)
    }

    @Test("pixel mode: one GET per event, stored; garbage batch bodies get 400 JSON")
    func pixel() async throws {
        let (url, server) = await TestServer.start()
        let transport = HTTPEventTransport(endpoint: .custom(url), code: "dev", mode: .pixel)
        let events = (1...3).map { TrackingEvent.productView(queryId: "q", pid: "p\($0)", imgUrl: "u", pos: $0) }
        #expect(await transport.send(events, uid: nil) == .results([.accepted, .accepted, .accepted]))
        #expect(try server.events.stats().actions["product_view"] == 3)
        let garbage = try await TestServer.raw(URL(string: "\(url)/v3/events?code=x")!, method: "POST",
                                               headers: [("Content-Type", "application/json")], body: Array("{\"nope\":1}".utf8))
        #expect(garbage.status == 400 && (garbage.json["error"] as? [String: Any])?["code"] as? Int == 400)
    }

    @Test("server down, then up: a tracker with the real transport delivers everything once")
    func downThenUp() async throws {
        let queue = try EventQueue(path: TestServer.temporaryDirectory() + "/queue.sqlite")
        let down = Tracker(queue: queue, transport: HTTPEventTransport(endpoint: .custom(URL(string: "http://127.0.0.1:9")!), code: "dev", timeout: 2),
                           configuration: .init(backoff: Backoff(base: 0.01, cap: 0.02)))
        for index in 0..<120 { try await down.track(.productClick(queryId: "q\(index % 4)", pid: "p", imgUrl: "u", pos: 1)) }
        let failed = await down.flush(maxFailures: 2)
        #expect(failed.sent == 0 && failed.remaining == 120)
        let (url, server) = await TestServer.start()
        let up = Tracker(queue: queue, transport: HTTPEventTransport(endpoint: .custom(url), code: "dev"))
        let report = await up.flush()
        #expect(report.sent == 120 && report.remaining == 0)
        #expect(try server.events.count() == 120)
        #expect(try queue.counters().retried >= 100)
    }
}
