import Clocks
import Foundation
import Networking
import ConcurrencyToolkit
import TestSupport
import Testing
@testable import VisualSearch

/// The client's failure matrix against a real loopback socket: what is
/// retried, how often, with which waits, and which error comes out.
@Suite("Client failure matrix (scripted loopback stub)", .timeLimit(.minutes(10)))
struct ClientFailureTests {
    /// Records the backoff waits instead of sleeping.
    final class Waits: Sendable {
        let values = Locked<[Double]>([])
        var recorded: [Double] { values.withLock { $0 } }
        var sleep: @Sendable (Double) async throws -> Void { { seconds in self.values.withLock { $0.append(seconds) } } }
    }

    static let ok = #"{"status":"OK","method":"search","error":[],"page":1,"limit":10,"total":0,"result":[],"reqid":"1"}"#

    func client(port: Int, attempts: Int = 3, timeout: Double = 10, waits: Waits, maxResponseBytes: Int = 32 << 20) -> ViSearchClient {
        ViSearchClient(configuration: ClientConfiguration(baseURL: URL(string: "http://127.0.0.1:\(port)")!, credentials: .appKey("k"),
                                                          timeout: timeout,
                                                          retry: RetryPolicy(maxAttempts: attempts, baseDelay: 0.5, maxDelay: 8, maxRetryAfter: 30)),
                       transport: URLSessionTransport(maxResponseBytes: maxResponseBytes), sleep: waits.sleep)
    }

    func search(_ client: ViSearchClient) async -> Result<SearchResponse, ClientError> {
        do throws(ClientError) { return .success(try await client.search(SearchRequest(imageName: "a"))) } catch { return .failure(error) }
    }

    /// The URL of `search(_:)` as errors show it: every parameter the Swift SDK sends, the app key redacted.
    static func searchURL(_ port: Int) -> String {
        "http://127.0.0.1:\(port)/search?access_key=***&get_all_fl=false&im_name=a&limit=10&page=1&score=false&score_max=1.000000&score_min=0.000000"
    }

    @Test("connection refused: retried up to the attempt limit, then a transport error")
    func refused() async {
        let waits = Waits()
        let result = await search(client(port: LoopbackStub.closedPort(), waits: waits))
        guard case .failure(.transport(_, let reason)) = result else { Issue.record("expected transport error, got \(result)"); return }
        #expect(reason.contains("refused"))
        #expect(waits.recorded.count == 2)
        #expect(waits.recorded[0] <= 0.5 && waits.recorded[1] <= 1.0)
    }

    @Test("a stall past the timeout: a timeout error after each attempt timed out")
    func stall() async {
        let stub = LoopbackStub([.stall])
        defer { stub.stop() }
        let waits = Waits()
        let result = await search(client(port: stub.port, attempts: 2, timeout: 0.5, waits: waits))
        #expect(result == .failure(.timeout(url: Self.searchURL(stub.port), seconds: 0.5)))
        #expect(stub.requests.count == 2 && waits.recorded.count == 1)
    }

    @Test("429 with Retry-After: waits exactly that long, then succeeds")
    func retryAfter() async throws {
        let stub = LoopbackStub([.respond(429, headers: ["Retry-After": "2"], body: "{}"), .respond(200, body: Self.ok)])
        defer { stub.stop() }
        let waits = Waits()
        let response = try await search(client(port: stub.port, waits: waits)).get()
        #expect(response.status == .ok)
        #expect(waits.recorded == [2])
        #expect(stub.requests.count == 2)
    }

    @Test("5xx is retried to the limit, then reported with its status", arguments: [500, 502, 503, 504])
    func serverErrors(status: Int) async {
        let stub = LoopbackStub([.respond(status, body: #"{"status":"fail","error":["boom"]}"#)])
        defer { stub.stop() }
        let waits = Waits()
        let result = await search(client(port: stub.port, waits: waits))
        #expect(result == .failure(.http(status: status, url: Self.searchURL(stub.port), message: "boom")))
        #expect(stub.requests.count == 3)
        #expect(waits.recorded.count == 2)
    }

    @Test("400 and 401 are final: one attempt, the service's message kept", arguments: [400, 401])
    func clientErrors(status: Int) async {
        let stub = LoopbackStub([.respond(status, body: #"{"status":"fail","method":"search","error":["Invalid access key"]}"#)])
        defer { stub.stop() }
        let waits = Waits()
        let result = await search(client(port: stub.port, waits: waits))
        guard case .failure(.http(let got, _, let message)) = result else { Issue.record("expected HTTP error, got \(result)"); return }
        #expect(got == status && message == "Invalid access key")
        #expect(stub.requests.count == 1 && waits.recorded.isEmpty)
    }

    @Test("malformed JSON in a 200: a decoding error, not a crash, not retried")
    func malformed() async {
        let stub = LoopbackStub([.respond(200, body: #"{"status":"OK","result":[{"score":1}]"#)])
        defer { stub.stop() }
        let result = await search(client(port: stub.port, waits: Waits()))
        guard case .failure(.decoding) = result else { Issue.record("expected decoding error, got \(result)"); return }
        #expect(stub.requests.count == 1)
    }

    @Test("a 200 whose body lacks a required field: a decoding error naming it")
    func missingField() async {
        let stub = LoopbackStub([.respond(200, body: #"{"status":"OK","result":[{"score":1}]}"#)])
        defer { stub.stop() }
        let result = await search(client(port: stub.port, waits: Waits()))
        guard case .failure(.decoding(_, let reason)) = result else { Issue.record("expected decoding error, got \(result)"); return }
        #expect(reason.contains("im_name"))
    }

    @Test("status fail in a 200 body: an API error with the service's list")
    func apiFailure() async {
        let stub = LoopbackStub([.respond(200, body: #"{"status":"fail","method":"search","error":["Image not found with im_name."],"page":0,"limit":0,"total":0,"result":[]}"#)])
        defer { stub.stop() }
        let result = await search(client(port: stub.port, waits: Waits()))
        #expect(result == .failure(.api(method: "search", errors: ["Image not found with im_name."])))
    }

    @Test("a body cut short: a transport error after retries, never a partial response")
    func truncated() async {
        let stub = LoopbackStub([.truncated(declared: 500, body: String(Self.ok.prefix(40)))])
        defer { stub.stop() }
        let waits = Waits()
        let result = await search(client(port: stub.port, waits: waits))
        guard case .failure(.transport(let url, _)) = result else { Issue.record("expected a transport error, got \(result)"); return }
        #expect(url == Self.searchURL(stub.port))
        #expect(stub.requests.count == 3 && waits.recorded.count == 2)
    }

    @Test("an oversized body is abandoned with responseTooLarge, not buffered")
    func oversized() async {
        let stub = LoopbackStub([.oversized(bytes: 4 << 20)])
        defer { stub.stop() }
        let result = await search(client(port: stub.port, waits: Waits(), maxResponseBytes: 1 << 20))
        #expect(result == .failure(.responseTooLarge(url: Self.searchURL(stub.port), limit: 1 << 20)))
        #expect(stub.requests.count == 1)
    }

    @Test("cancellation stops a stalled request at once")
    func cancellation() async {
        let stub = LoopbackStub([.stall])
        defer { stub.stop() }
        // Idle time on a clock that never moves: only the cancellation can end the request.
        let client = ViSearchClient(configuration: ClientConfiguration(baseURL: URL(string: "http://127.0.0.1:\(stub.port)")!, credentials: .appKey("k"),
                                                                       timeout: 30, retry: .none),
                                    transport: URLSessionTransport(idleClock: ElapsedClock(TestClock())), sleep: Waits().sleep)
        let task = Task { await search(client) }
        await stub.requestsArrived(1)
        task.cancel()
        let result = await task.value
        #expect(result == .failure(.cancelled))
    }

    @Test("insert is not idempotent: a 503 is not retried")
    func insertNotRetried() async {
        let stub = LoopbackStub([.respond(503, body: "{}")])
        defer { stub.stop() }
        let client = client(port: stub.port, waits: Waits())
        do throws(ClientError) {
            _ = try await client.insert(InsertRequest(items: [InsertItem(imageName: "a", imageURL: "http://127.0.0.1/a.jpg")]))
            Issue.record("expected a failure")
        } catch {
            #expect(error == .http(status: 503, url: "http://127.0.0.1:\(stub.port)/insert?access_key=***", message: nil))
        }
        #expect(stub.requests.count == 1)
    }

    @Test("insert after a refused connection is retried: the server certainly never saw it")
    func insertRetriedWhenRefused() async {
        let waits = Waits()
        let client = client(port: LoopbackStub.closedPort(), waits: waits)
        do throws(ClientError) {
            _ = try await client.insert(InsertRequest(items: [InsertItem(imageName: "a", imageURL: "http://127.0.0.1/a.jpg")]))
            Issue.record("expected a failure")
        } catch {
            guard case .transport(_, let reason) = error else { Issue.record("expected a transport error, got \(error)"); return }
            #expect(reason.contains("refused"))
        }
        #expect(waits.recorded.count == 2)
    }

    @Test("408 and 429 without Retry-After are retried with backoff like 5xx", arguments: [408, 429])
    func retryableClientStatuses(status: Int) async throws {
        let stub = LoopbackStub([.respond(status, body: "{}"), .respond(200, body: Self.ok)])
        defer { stub.stop() }
        let waits = Waits()
        let response = try await search(client(port: stub.port, waits: waits)).get()
        #expect(response.status == .ok && stub.requests.count == 2)
        #expect(waits.recorded.count == 1 && waits.recorded[0] <= 0.5)
    }

    @Test("a Retry-After longer than the policy allows ends the retries at once, with the status")
    func retryAfterTooLong() async {
        let stub = LoopbackStub([.respond(503, headers: ["Retry-After": "120"], body: #"{"status":"fail","error":["maintenance"]}"#)])
        defer { stub.stop() }
        let waits = Waits()
        let result = await search(client(port: stub.port, waits: waits))
        #expect(result == .failure(.http(status: 503, url: Self.searchURL(stub.port), message: "maintenance")))
        #expect(stub.requests.count == 1 && waits.recorded.isEmpty)
    }

    @Test("an upload whose file cannot be read is an invalid request, and nothing is sent")
    func unreadableUpload() async {
        let stub = LoopbackStub([])
        defer { stub.stop() }
        let client = client(port: stub.port, waits: Waits())
        do throws(ClientError) {
            _ = try await client.uploadSearch(UploadSearchRequest(ImageQuery(.file("/nonexistent/photo.jpg"))))
            Issue.record("expected a failure")
        } catch {
            guard case .invalidRequest(let reason) = error else { Issue.record("expected an invalid request, got \(error)"); return }
            #expect(reason.contains("/nonexistent/photo.jpg"))
        }
        #expect(stub.connections == 0)
    }

    @Test("a redirect is followed for a GET search, and the answer is the target's")
    func redirectFollowed() async throws {
        let target = LoopbackStub([.respond(200, body: Self.ok)])
        let stub = LoopbackStub([.redirect(to: target.url("/search").absoluteString)])
        defer {
            stub.stop()
            target.stop()
        }
        let response = try await search(client(port: stub.port, waits: Waits())).get()
        #expect(response.requestID == "1" && stub.requests.count == 1 && target.requests.count == 1)
    }

    @Test("backoff: full jitter under a doubling, capped ceiling; Retry-After beyond the cap stops")
    func backoff() {
        let policy = RetryPolicy(maxAttempts: 10, baseDelay: 0.5, maxDelay: 8, maxRetryAfter: 30)
        let ceilings = (1...7).map { policy.delay(afterAttempt: $0, retryAfter: nil, random: { $0.upperBound }) }
        #expect(ceilings == [0.5, 1, 2, 4, 8, 8, 8])
        #expect(policy.delay(afterAttempt: 3, retryAfter: nil, random: { $0.lowerBound }) == 0)
        #expect(policy.delay(afterAttempt: 1, retryAfter: 12) == 12)
        #expect(policy.delay(afterAttempt: 1, retryAfter: 31) == nil)
        #expect(RetryPolicy.retryAfter("7") == 7)
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        #expect(RetryPolicy.retryAfter("Tue, 14 Nov 2023 22:13:30 GMT", now: now) == 10)
    }
}
