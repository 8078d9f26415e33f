import Foundation
import Networking
import TestSupport
import Testing
import Tracking
import VisualSearch
@testable import VisualSearchServer
import EventDelivery

/// The local collector in `vsearch serve`: the tracker's real HTTP
/// transport against a server on loopback (the socket is the point), and
/// the routes' answers to bodies no tracker sends, in process.
@Suite("Tracking collector", .timeLimit(.minutes(10)))
struct CollectorTests {
    @Test("the tracker's HTTP transport delivers batches; a bad event is rejected alone; resends are deduplicated")
    func batches() async throws {
        try await ServerFixture.with { running in
            let transport = HTTPEventTransport(endpoint: .custom(running.url), code: "dev")
            var good = TrackingEvent.productClick(queryId: "1", pid: "chelsea_cat", imgUrl: "https://shop.example/p.jpg", pos: 1)
            good.eventID = "g1"
            var bad = good
            bad.eventID = "b1"
            bad.currency = "usd"
            let outcome = await transport.send([good, bad], uid: "u1")
            guard case .results(let results) = outcome, results.count == 2 else {
                Issue.record("expected two per-event results, got \(outcome)")
                return
            }
            #expect(results[0] == .accepted)
            guard case .rejected(let reason) = results[1] else {
                Issue.record("expected the bad event rejected, got \(results[1])")
                return
            }
            #expect(reason.contains("currency"))
            #expect(await transport.send([good], uid: nil) == .results([.accepted]))
            let stored = try await running.server.collector.eventCount()
            #expect(stored == 1)
        }
    }

    @Test("pixel mode: one GET per event, each stored")
    func pixel() async throws {
        try await ServerFixture.with { running in
            let transport = HTTPEventTransport(endpoint: .custom(running.url), code: "dev", mode: .pixel)
            let events = (1...3).map { TrackingEvent.productView(queryId: "q", pid: "p\($0)", imgUrl: "https://shop.example/p.jpg", pos: $0) }
            #expect(await transport.send(events, uid: nil) == .results([.accepted, .accepted, .accepted]))
            let stats = try await running.server.collector.stats(since: nil, limit: 10)
            #expect(stats.actions["product_view"] == 3 && stats.total == 3)
        }
    }

    @Test("bodies no tracker sends: 400 in the tracking error shape, nothing stored",
          arguments: ["{\"nope\":1}", "not json", ""])
    func garbageBatch(body: String) async throws {
        let server = try await ServerFixture.server()
        let before = try await server.collector.eventCount()
        let reply = try await ServerFixture.router(server) { client in
            try await client.send("/v3/events?code=x", method: .post, headers: [("Content-Type", "application/json")], body: Array(body.utf8))
        }
        #expect(reply.status == 400 && reply.json["status"] as? String == "fail")
        #expect((reply.json["error"] as? [String: Any])?["code"] as? Int == 400)
        #expect((reply.json["reqid"] as? String)?.count == 19)
        #expect(try await server.collector.eventCount() == before)
    }

    @Test("a pixel missing its action: 400 naming the problem, nothing stored")
    func badPixel() async throws {
        let server = try await ServerFixture.server()
        let before = try await server.collector.eventCount()
        let reply = try await ServerFixture.router(server) { try await $0.send("/v3/__va.gif?code=x&pid=p") }
        #expect(reply.status == 400 && ((reply.json["error"] as? [String: Any])?["message"] as? String)?.isEmpty == false)
        #expect(try await server.collector.eventCount() == before)
    }

    @Test("server down, then up: a tracker with the real transport delivers everything once")
    func downThenUp() async throws {
        let queue = try EventQueue(path: Repository.temporaryDirectory("queue") + "/queue.sqlite")
        let closed = LoopbackStub.closedPort()
        let down = Tracker(queue: queue,
                           transport: HTTPEventTransport(endpoint: .custom(URL(string: "http://127.0.0.1:\(closed)")!), code: "dev", timeout: 2),
                           configuration: .init(retry: RetryPolicy(maxAttempts: .max, baseDelay: 0.01, maxDelay: 0.02, maxRetryAfter: 1)))
        for index in 0..<120 { try await down.track(.productClick(queryId: "q\(index % 4)", pid: "p", imgUrl: "https://shop.example/p.jpg", pos: 1)) }
        let failed = await down.flush(maxFailures: 2)
        #expect(failed.sent == 0 && failed.remaining == 120)
        try await ServerFixture.with { running in
            let up = Tracker(queue: queue, transport: HTTPEventTransport(endpoint: .custom(running.url), code: "dev"))
            let report = await up.flush()
            #expect(report.sent == 120 && report.remaining == 0)
            let stored = try await running.server.collector.eventCount()
            #expect(stored == 120)
            let counters = try await queue.counters()
            #expect(counters.retried >= 100)
        }
    }

    /// Issue 24: one keyless pixel with an image URL no browser parses and a
    /// timestamp years ahead broke /analytics for every period, for good.
    @Test("a pixel whose imUrl cannot be parsed, or whose ts is years ahead, is refused naming the field; nothing stored")
    func unshowableEvents() async throws {
        try await ServerFixture.with { running in
            let before = try await running.server.collector.eventCount()
            let future = Int64(Date().timeIntervalSince1970 * 1000) + 5 * 365 * 86_400_000
            let cases: [(query: String, field: String)] = [
                ("action=result_load&queryId=pinned&imUrl=http%3A%2F%2F%5B&eid=pin1", "imgUrl"),
                ("action=result_load&queryId=pinned&imUrl=https%3A%2F%2Fshop.example%2Fq.jpg&eid=pin2&ts=\(future)", "ts"),
                ("action=result_load&queryId=pinned&eid=pin3&ts=1700000000", "ts"),
            ]
            for (query, field) in cases {
                let reply = try await ServerFixture.reply(URL(string: "\(running.url)/v3/__va.gif?" + query)!)
                let message = (reply.json["error"] as? [String: Any])?["message"] as? String ?? ""
                #expect(reply.status == 400 && message.contains(field), "\(query): \(reply.status) \(reply.text)")
            }
            let good = "action=result_load&queryId=pinned&imUrl=%2Fimages%2Fchelsea_cat&eid=pin4&ts=\(Int64(Date().timeIntervalSince1970 * 1000))"
            #expect(try await ServerFixture.reply(URL(string: "\(running.url)/v3/__va.gif?" + good)!).status == 200)
            #expect(try await running.server.collector.eventCount() == before + 1)
        }
    }

    @Test("a batch over 500 events is refused whole with 413; 500 are stored")
    func batchCap() async throws {
        try await ServerFixture.with { running in
            func batch(_ count: Int, prefix: String) -> [UInt8] {
                let events = (0..<count).map { index in
                    var event = TrackingEvent.productView(queryId: "q", pid: "p\(index % 7)", imgUrl: "https://shop.example/p.jpg", pos: 1)
                    event.eventID = "\(prefix)\(index)"
                    return event
                }
                return EventWireFormat.batchBody(events, uid: "u")
            }
            let url = URL(string: "\(running.url)/v3/events?" + "code=dev")!
            let before = try await running.server.collector.eventCount()
            let over = try await ServerFixture.reply(url, method: "POST", headers: [("Content-Type", "application/json")],
                                                  body: batch(CollectorRoutes.maxEventsPerBatch + 1, prefix: "over"))
            #expect(over.status == 413 && over.text.contains("501 events"), "\(over.status) \(over.text)")
            #expect(try await running.server.collector.eventCount() == before)
            let full = try await ServerFixture.reply(url, method: "POST", headers: [("Content-Type", "application/json")],
                                                  body: batch(CollectorRoutes.maxEventsPerBatch, prefix: "ok"))
            #expect(full.status == 200)
            #expect(try await running.server.collector.eventCount() == before + CollectorRoutes.maxEventsPerBatch)
        }
    }
}
