import Foundation
import Networking
import ConcurrencyToolkit
import TestSupport
import Testing
@testable import EventDelivery
import Tracking

@Suite("HTTPEventTransport over the Networking layer", .timeLimit(.minutes(10)))
struct HTTPEventTransportTests {
    /// Events as the tracker hands them over: validated and filled.
    static func events(_ count: Int) -> [TrackingEvent] {
        (0..<count).map { index in
            var event = click(index)
            event.eventID = "e\(index)"
            event.timestamp = 1_800_000_000_000
            return event
        }
    }

    /// An ``HTTPTransport`` that records each request and answers from a script.
    final class RecordingTransport: HTTPTransport {
        let requests = Locked<[HTTPClientRequest]>([])
        let answer: @Sendable (HTTPClientRequest) -> Result<HTTPClientResponse, HTTPClientError>
        init(_ answer: @escaping @Sendable (HTTPClientRequest) -> Result<HTTPClientResponse, HTTPClientError>) { self.answer = answer }
        func send(_ request: HTTPClientRequest) async throws(HTTPClientError) -> HTTPClientResponse {
            requests.withLock { $0.append(request) }
            return try answer(request).get()
        }
    }

    @Test("batch mode: one POST of the JSON batch to /v3/events?code=…, through the injected transport")
    func batchRequest() async throws {
        let recording = RecordingTransport { _ in .success(HTTPClientResponse(status: 200, body: Array(#"{"result":[{"code":0},{"code":3,"message":"bad"}]}"#.utf8))) }
        let transport = HTTPEventTransport(endpoint: .custom(URL(string: "http://collector.test:8080/")!), code: "app:1", transport: recording)
        let outcome = await transport.send(Self.events(2), uid: "u1")
        #expect(outcome == .results([.accepted, .rejected(reason: "code 3: bad")]))
        let request = try #require(recording.requests.withLock { $0.first })
        #expect(request.method == "POST" && request.url.absoluteString == "http://collector.test:8080/v3/events?code=app%3A1")
        #expect(request.header("content-type") == "application/json; charset=UTF-8")
        #expect(request.header("user-agent")?.hasPrefix("vsearch-tracking/") == true)
        #expect(request.body == EventWireFormat.batchBody(Self.events(2), uid: "u1"))
        #expect(request.timeout == 10)
    }

    @Test("pixel mode: one GET per event")
    func pixelRequests() async {
        let recording = RecordingTransport { _ in .success(HTTPClientResponse(status: 200)) }
        let transport = HTTPEventTransport(endpoint: .world, code: "k", mode: .pixel, transport: recording)
        #expect(await transport.send(Self.events(3), uid: nil) == .results([.accepted, .accepted, .accepted]))
        let requests = recording.requests.withLock { $0 }
        #expect(requests.count == 3 && requests.allSatisfy { $0.method == "GET" && $0.url.path == "/v3/__va.gif" && $0.body == nil })
    }

    @Test("one attempt per round: a 503 is reported for retry, not retried inside")
    func oneAttempt() async {
        let stub = LoopbackStub([.respond(503, body: "{}")])
        defer { stub.stop() }
        let transport = HTTPEventTransport(endpoint: .custom(stub.baseURL), code: "dev")
        #expect(await transport.send(Self.events(2), uid: nil) == .results(Array(repeating: .retry(reason: "HTTP 503", retryAfter: nil), count: 2)))
        #expect(stub.requests.count == 1)
    }

    @Test("Retry-After as an HTTP-date is honoured")
    func retryAfterDate() async throws {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        let stub = LoopbackStub([.respond(429, headers: ["Retry-After": formatter.string(from: Date().addingTimeInterval(600))], body: "{}")])
        defer { stub.stop() }
        let outcome = await HTTPEventTransport(endpoint: .custom(stub.baseURL), code: "dev").send(Self.events(1), uid: nil)
        guard case .results(let results) = outcome, case .retry(let reason, let after)? = results.first else {
            Issue.record("\(outcome)")
            return
        }
        #expect(reason == "HTTP 429")
        #expect(after.map { $0 > 0 && $0 <= 600 } == true, "\(String(describing: after))")  // whole seconds until the date, however long a loaded run took to get here
    }

    @Test("a batch refused as a whole is reported so the tracker can split it")
    func batchRejected() async {
        let stub = LoopbackStub([.respond(400, body: #"{"error":{"code":1,"message":"bad event"}}"#)])
        defer { stub.stop() }
        #expect(await HTTPEventTransport(endpoint: .custom(stub.baseURL), code: "dev").send(Self.events(4), uid: nil) == .batchRejected(reason: "HTTP 400: bad event"))
    }

    @Test("no server: every event retried, the reason naming the endpoint, not the event URL")
    func refused() async {
        let port = LoopbackStub.closedPort()
        let transport = HTTPEventTransport(endpoint: .custom(URL(string: "http://127.0.0.1:\(port)")!), code: "dev", mode: .pixel)
        let reason = "cannot reach 127.0.0.1:\(port): connection refused"
        #expect(await transport.send(Self.events(2), uid: nil) == .results([.retry(reason: reason, retryAfter: nil), .retry(reason: reason, retryAfter: nil)]))
    }

    @Test("a collector that stalls fails after the transport's idle timeout")
    func stall() async {
        let stub = LoopbackStub([.stall])
        defer { stub.stop() }
        let transport = HTTPEventTransport(endpoint: .custom(stub.baseURL), code: "dev", timeout: 0.5)
        let reason = "127.0.0.1:\(stub.port) did not answer within 0.5 s"
        #expect(await transport.send(Self.events(1), uid: nil) == .results([.retry(reason: reason, retryAfter: nil)]))
    }

    @Test("HTTP statuses: 2xx accepted, transient ones retried with Retry-After, other 4xx rejected",
          arguments: [(200, nil as String?), (204, nil), (408, "retry"), (429, "retry"), (500, "retry"), (503, "retry"), (401, "retry"),
                      (404, "retry"), (400, "reject"), (413, "reject"), (422, "reject")])
    func classification(status: Int, expected: String?) {
        let result = HTTPEventTransport.classify(status, headers: ["retry-after": "3"], body: Array(#"{"error":{"code":1,"message":"m"}}"#.utf8))
        switch (result, expected) {
        case (nil, nil): break
        case (.retry(_, let after)?, "retry"): #expect(after == 3)
        case (.rejected(let reason)?, "reject"): #expect(reason == "HTTP \(status): m")
        default: Issue.record("\(status): \(String(describing: result))")
        }
    }
}
