import Clocks
import Foundation
import Networking
import TestSupport
import Testing
import ConcurrencyToolkit

@Suite("URLSessionTransport against a real loopback server", .timeLimit(.minutes(10)))
struct URLSessionTransportTests {

    func send(_ transport: URLSessionTransport, _ request: HTTPClientRequest) async -> Result<HTTPClientResponse, HTTPClientError> {
        await outcome { () async throws(HTTPClientError) in try await transport.send(request) }
    }

    @Test("an answer comes back whole: status, lower-cased headers, body, final URL")
    func answer() async throws {
        let stub = LoopbackStub([.respond(201, headers: ["X-Thing": "1"], body: "hello")])
        defer { stub.stop() }
        let response = try await URLSessionTransport().send(HTTPClientRequest(method: "POST", url: stub.url("/a?b=c"), body: Array("x=1".utf8)))
        #expect(response.status == 201 && response.body == Array("hello".utf8) && response.headers["x-thing"] == "1")
        #expect(response.url == stub.url("/a?b=c"))
        #expect(stub.requests == ["POST /a?b=c HTTP/1.1"])
    }

    @Test("nothing listening: connectionRefused (the server never saw the request)")
    func refused() async {
        let url = URL(string: "http://127.0.0.1:\(LoopbackStub.closedPort())/x?token=T")!
        let result = await send(URLSessionTransport(), HTTPClientRequest(url: url))
        #expect(result.failure == .connectionRefused(url: Redaction.url(url)))
    }

    @Test("a server that never answers fails after the idle timeout, not later")
    func stall() async {
        let stub = LoopbackStub([.stall])
        defer { stub.stop() }
        let (result, elapsed) = await seconds { await send(URLSessionTransport(), HTTPClientRequest(url: stub.url(), timeout: 1)) }
        #expect(result.failure == .timeout(url: stub.url().absoluteString, seconds: 1))
        #expect(elapsed >= 0.9, "failed before its idle timeout: \(elapsed) s")  // a hang past it is the suite's time limit
    }

    @Test("a body that stops arriving fails after the idle timeout")
    func stallMidBody() async {
        let stub = LoopbackStub([.stallMidBody(declared: 1000, body: "partial")])
        defer { stub.stop() }
        let (result, elapsed) = await seconds { await send(URLSessionTransport(), HTTPClientRequest(url: stub.url(), timeout: 1)) }
        #expect(result.failure == .timeout(url: stub.url().absoluteString, seconds: 1))
        #expect(elapsed >= 0.9, "failed before its idle timeout: \(elapsed) s")  // a hang past it is the suite's time limit
    }

    @Test("a body cut short is a transport failure")
    func truncated() async {
        let stub = LoopbackStub([.truncated(declared: 500, body: "{\"status\":")])
        defer { stub.stop() }
        let result = await send(URLSessionTransport(), HTTPClientRequest(url: stub.url(), timeout: 30))
        guard case .failure(.transport) = result else {
            Issue.record("expected a transport failure, got \(result)")
            return
        }
    }

    @Test("a Content-Length over the cap is refused on the header alone, before any body byte")
    func oversizedDeclared() async {
        // The head declares 64 MiB and no body byte ever follows: only the header check can answer before the idle timeout.
        let stub = LoopbackStub([.stallMidBody(declared: 64 << 20, body: "")])
        defer { stub.stop() }
        // Idle time on a clock that never moves: only the header check can end the request.
        let transport = URLSessionTransport(maxResponseBytes: 1 << 20, idleClock: ElapsedClock(TestClock()))
        let result = await send(transport, HTTPClientRequest(url: stub.url(), timeout: 60))
        #expect(result.failure == .responseTooLarge(url: stub.url().absoluteString, limit: 1 << 20))
    }

    @Test("a large body streamed with a Content-Length over the cap is abandoned")
    func oversizedStreamed() async {
        let stub = LoopbackStub([.oversized(bytes: 64 << 20)])
        defer { stub.stop() }
        // Idle time on a clock that never moves: only abandoning the body at the cap can end the request.
        let transport = URLSessionTransport(maxResponseBytes: 1 << 20, idleClock: ElapsedClock(TestClock()))
        let result = await send(transport, HTTPClientRequest(url: stub.url(), timeout: 60))
        #expect(result.failure == .responseTooLarge(url: stub.url().absoluteString, limit: 1 << 20))
    }

    @Test("a chunked body is counted as it arrives and abandoned at the cap")
    func oversizedChunked() async {
        let stub = LoopbackStub([.oversizedChunked(bytes: 64 << 20)])
        defer { stub.stop() }
        // Idle time on a clock that never moves: only abandoning the body at the cap can end the request.
        let transport = URLSessionTransport(maxResponseBytes: 1 << 20, idleClock: ElapsedClock(TestClock()))
        let result = await send(transport, HTTPClientRequest(url: stub.url(), timeout: 60))
        #expect(result.failure == .responseTooLarge(url: stub.url().absoluteString, limit: 1 << 20))
    }

    @Test("exactly the cap is accepted, one byte more is not")
    func capBoundary() async throws {
        let body = String(repeating: "a", count: 1000)
        let stub = LoopbackStub([.respond(200, body: body), .respond(200, body: body + "b"), .oversizedChunked(bytes: 1000), .oversizedChunked(bytes: 1001)])
        defer { stub.stop() }
        let transport = URLSessionTransport(maxResponseBytes: 1000)
        #expect(try await transport.send(HTTPClientRequest(url: stub.url(), timeout: 30)).body.count == 1000)
        #expect(await send(transport, HTTPClientRequest(url: stub.url(), timeout: 30)).failure == .responseTooLarge(url: stub.url().absoluteString, limit: 1000))
        #expect(try await transport.send(HTTPClientRequest(url: stub.url(), timeout: 30)).body.count == 1000)
        #expect(await send(transport, HTTPClientRequest(url: stub.url(), timeout: 30)).failure == .responseTooLarge(url: stub.url().absoluteString, limit: 1000))
    }

    @Test("cancelling the task stops a stalled request at once")
    func cancellation() async {
        let stub = LoopbackStub([.stall])
        defer { stub.stop() }
        // Idle time on a clock that never moves: only the cancellation can end the request.
        let transport = URLSessionTransport(idleClock: ElapsedClock(TestClock()))
        let task = Task { await send(transport, HTTPClientRequest(url: stub.url(), timeout: 30)) }
        await stub.requestsArrived(1)
        task.cancel()
        let result = await task.value
        #expect(result.failure == .cancelled)
        #expect(stub.requests.count == 1)
    }

    @Test("a task cancelled before sending connects to nothing")
    func cancelledBeforeSending() async {
        let stub = LoopbackStub([])
        defer { stub.stop() }
        let transport = URLSessionTransport()
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await send(transport, HTTPClientRequest(url: stub.url(), timeout: 30))
        }
        #expect(await task.value.failure == .cancelled)
        #expect(stub.connections == 0)
    }

    @Test("redirects are followed; the response names the URL that answered")
    func redirectFollowed() async throws {
        let stub = LoopbackStub([.redirect(to: "/moved"), .redirect(to: "/final", status: 307), .respond(200, body: "done")])
        defer { stub.stop() }
        let response = try await URLSessionTransport().send(HTTPClientRequest(url: stub.url("/start")))
        #expect(response.status == 200 && response.body == Array("done".utf8))
        #expect(response.url == stub.url("/final"))
        #expect(stub.requests == ["GET /start HTTP/1.1", "GET /moved HTTP/1.1", "GET /final HTTP/1.1"])
    }

    @Test("more redirects than the limit: tooManyRedirects, after following exactly the limit", arguments: [0, 1, 3])
    func redirectLimit(limit: Int) async {
        let stub = LoopbackStub([.redirect(to: "/again")])
        defer { stub.stop() }
        let result = await send(URLSessionTransport(maxRedirects: limit), HTTPClientRequest(url: stub.url("/start")))
        #expect(result.failure == .tooManyRedirects(url: stub.url("/start").absoluteString, limit: limit))
        #expect(stub.requests.count == limit + 1)
    }

    @Test("publicOnly: the first URL is checked before connecting")
    func firstURLChecked() async {
        let stub = LoopbackStub([])
        defer { stub.stop() }
        let result = await send(URLSessionTransport(destinationPolicy: .publicOnly), HTTPClientRequest(url: stub.url(), timeout: 30))
        #expect(result.failure == .destinationRefused(url: stub.url().absoluteString, reason: "127.0.0.1 is a loopback address"))
        #expect(stub.connections == 0)
    }

    @Test("a redirect to a name that resolves to loopback is refused and never connected to")
    func redirectToLocalhost() async {
        let target = LoopbackStub([.respond(200, body: "internal secrets")])
        defer { target.stop() }
        let stub = LoopbackStub([.redirect(to: "http://localhost:\(target.port)/admin")])
        defer { stub.stop() }
        let policy = DestinationPolicy(refusesNonPublicAddresses: true, allowedHosts: [stub.hostAndPort])
        let result = await send(URLSessionTransport(destinationPolicy: policy), HTTPClientRequest(url: stub.url(), timeout: 30))
        guard case .failure(.destinationRefused(let url, let reason)) = result else {
            Issue.record("not refused: \(result)")
            return
        }
        #expect(url == "http://localhost:\(target.port)/admin" && reason.contains("loopback"))
        #expect(stub.requests.count == 1)
        #expect(target.connections == 0)
    }

    @Test("a redirect to the cloud metadata address is refused", arguments: [
        "http://169.254.169.254/latest/meta-data/", "http://[::ffff:169.254.169.254]/", "http://10.0.0.1/",
    ])
    func redirectToMetadata(location: String) async {
        let stub = LoopbackStub([.redirect(to: location)])
        defer { stub.stop() }
        let policy = DestinationPolicy(refusesNonPublicAddresses: true, allowedHosts: [stub.hostAndPort])
        let result = await send(URLSessionTransport(destinationPolicy: policy), HTTPClientRequest(url: stub.url(), timeout: 30))
        guard case .failure(.destinationRefused) = result else {
            Issue.record("not refused: \(result)")
            return
        }
        #expect(stub.requests.count == 1)
    }

    @Test("a redirect to another scheme is refused even when unrestricted")
    func redirectToOtherScheme() async {
        let stub = LoopbackStub([.redirect(to: "ftp://127.0.0.1/file")])
        defer { stub.stop() }
        let result = await send(URLSessionTransport(), HTTPClientRequest(url: stub.url(), timeout: 30))
        guard case .failure(.destinationRefused) = result else {
            Issue.record("not refused: \(result)")
            return
        }
    }

    @Test("credentials go along a same-origin redirect, not to another origin")
    func credentialsAcrossOrigins() async throws {
        let other = LoopbackStub([.respond(200, body: "other")])
        defer { other.stop() }
        let stub = LoopbackStub([.redirect(to: "/same"), .redirect(to: other.url("/elsewhere").absoluteString)])
        defer { stub.stop() }
        let request = HTTPClientRequest(url: stub.url(), headers: [("Authorization", "Basic c2VjcmV0"), ("X-Trace", "t1")])
        let response = try await URLSessionTransport().send(request)
        #expect(response.status == 200)
        #expect(stub.heads.allSatisfy { $0.lowercased().contains("authorization: basic c2vjcmv0") })
        #expect(other.heads.count == 1)
        #expect(other.heads.allSatisfy { !$0.lowercased().contains("authorization") && $0.lowercased().contains("x-trace: t1") })
    }
}
