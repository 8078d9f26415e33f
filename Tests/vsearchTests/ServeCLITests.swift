import Foundation
import TestSupport
import Testing
import Tracking
import VisualSearch

/// `vsearch serve` and remote mode, run as a user would: the same query
/// against the catalog directly and through the server agree.
@Suite("vsearch serve and --endpoint", .serialized)
struct ServeCLITests {
    typealias CLI = CLITests

    /// `vsearch serve --port 0` on `catalog` while `body` runs: ``ServerFixture``'s process mode with this build's binary.
    static func serving<Value: Sendable>(_ catalog: String, _ extra: [String] = [], environment: [String: String] = [:],
                                         _ body: (_ url: String, _ server: ChildProcess.Running) async throws -> Value)
        async throws -> (Value, ChildProcess.Outcome) {
        try await ServerFixture.process(binary: CLI.binary, catalog: catalog, extra, environment: environment, body)
    }

    static func withoutRequestID(_ json: String) throws -> NSDictionary {
        var object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any] ?? [:]
        object["reqid"] = nil
        return object as NSDictionary
    }

    @Test("the start-up line says where and that it is open; remote queries match local ones; SIGTERM stops it cleanly")
    func serveAndQuery() async throws {
        let catalog = EngineCLITests.catalogPath()
        try await EngineCLITests.indexCorpus(catalog)
        let (_, outcome) = try await Self.serving(catalog) { url, server in
            let startup = server.text(.stderr)
            #expect(startup.contains("(102 images)") && startup.contains("auth: OPEN"))
            for command in [["similar", "chelsea_cat"], ["recommend", "coffee_cup"], ["color", "c45b3b"],
                            ["search", "--image", CLI.repository + "/corpus/images/astronaut.jpg"]] {
                let options = ["--fq", "category=photo", "--fl", "brand", "--facets", "brand", "--limit", "4", "--json"]
                let local = try await CLI.run(command + options + ["--catalog", catalog])
                let remote = try await CLI.run(command + options + ["--endpoint", url])
                #expect(local.status == 0 && remote.status == 0, "\(remote.stderr)")
                // Uploads are prepared the same way locally and by the client (512 px, JPEG 0.97), so even they agree exactly.
                #expect(try Self.withoutRequestID(local.stdout) == Self.withoutRequestID(remote.stdout), "\(command)")
            }
            let table = try await CLI.run(["similar", "chelsea_cat", "--endpoint", url, "--limit", "2"])
            #expect(table.status == 0 && table.stdout.contains("chelsea_cat"))
            server.signal(SIGTERM)
        }
        #expect(outcome.status == 0)
        #expect(outcome.stderr.contains("vsearch serve: stopped") && outcome.stderr.contains("status=200") && outcome.stderr.contains("request_id="))
    }

    @Test("SIGTERM while three uploads and an event batch are half-sent: each is answered 200 once its body arrives, new connections are refused, the events are stored, exit 0")
    func sigtermWithRequestsInFlight() async throws {
        let catalog = EngineCLITests.catalogPath()
        try await EngineCLITests.indexCorpus(catalog)
        var form = MultipartForm()
        form.append(file: "image", filename: "coffee_cup.jpg", contentType: "image/jpeg",
                    data: Array(try Data(contentsOf: URL(fileURLWithPath: CLI.repository + "/corpus/images/coffee_cup.jpg"))))
        let events = (1...3).map { index in
            var event = TrackingEvent.productView(queryId: "q", pid: "p\(index)", imgUrl: "https://shop.example/p.jpg", pos: index)
            event.eventID = "in-flight-\(index)"
            return event
        }
        let requests: [(target: String, contentType: String, body: [UInt8])] =
            Array(repeating: ("/uploadsearch?limit=3", form.contentType, form.encoded), count: 3)
            + [("/v3/events?code=dev", "application/json", EventWireFormat.batchBody(events, uid: "u"))]
        let (statuses, outcome) = try await Self.serving(catalog) { url, server in
            let port = URL(string: url)?.port ?? 0
            var connections: [RawConnection] = []
            for request in requests {
                let connection = try RawConnection(port: port)
                connection.write("POST \(request.target) HTTP/1.1\r\nHost: x\r\nContent-Type: \(request.contentType)\r\n"
                                 + "Content-Length: \(request.body.count)\r\n\r\n")
                _ = await connection.write(bytes: Array(request.body.prefix(request.body.count / 2)))
                connections.append(connection)
            }
            // Every connection is the server's (accepted, its head read) before the signal: /metrics counts them, and itself.
            var open = 0.0
            for _ in 0..<600 where open < Double(requests.count + 1) {
                let metrics = try await RawConnection.get("/metrics", port: port, from: "127.0.0.1")
                let line = String(decoding: metrics?.body ?? [], as: UTF8.self).split(separator: "\n")
                    .first { $0.hasPrefix("vsearch_connections_open ") }
                open = line.flatMap { Double($0.split(separator: " ").last ?? "") } ?? 0
                if open < Double(requests.count + 1) { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(open >= Double(requests.count + 1), "the server never held the half-sent requests")
            server.signal(SIGTERM)
            // Shutting down: the listener closes, so a new connection is refused (or closed unanswered).
            var refused = false
            for _ in 0..<600 where !refused {
                if let connection = try? RawConnection(port: port) {
                    connection.write("GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                    refused = await connection.readResponse() == nil
                } else {
                    refused = true
                }
                if !refused { try await Task.sleep(for: .milliseconds(50)) }
            }
            #expect(refused, "the server kept accepting connections after SIGTERM")
            var statuses: [Int?] = []
            for (connection, request) in zip(connections, requests) {
                _ = await connection.write(bytes: Array(request.body.dropFirst(request.body.count / 2)))
                statuses.append(await connection.readResponse()?.status)
            }
            return statuses
        }
        #expect(statuses == [200, 200, 200, 200], "a request accepted before SIGTERM was not answered")
        #expect(outcome.status == 0 && outcome.stderr.contains("vsearch serve: stopped"), "\(outcome.stderr.suffix(2000))")
        let stats = try await CLI.run(["events", "stats", "--catalog", catalog, "--json"])
        let total = (try? JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any])?["total"] as? Int
        #expect(stats.status == 0 && total == 3, "the events accepted during shutdown were not stored: \(stats.stdout)")
    }

    @Test("with keys: a missing key exits 77 naming the problem; the right key works; secrets never reach the log")
    func keys() async throws {
        let catalog = EngineCLITests.catalogPath()
        try await EngineCLITests.indexCorpus(catalog)
        let keys = CLI.temporaryDirectory() + "/keys"
        try "# keys\nsecret-app-key\nACCESS:TOPSECRET\n".write(toFile: keys, atomically: true, encoding: .utf8)
        let (_, outcome) = try await Self.serving(catalog, ["--keys-file", keys, "--json-logs"]) { url, _ in
            let missing = try await CLI.run(["similar", "chelsea_cat", "--endpoint", url])
            #expect(missing.status == 77 && missing.stderr.contains("401"))
            let good = try await CLI.run(["similar", "chelsea_cat", "--endpoint", url, "--app-key", "secret-app-key"])
            #expect(good.status == 0)
            let basic = try await CLI.run(["similar", "chelsea_cat", "--endpoint", url, "--access-key", "ACCESS"], environment: ["VSEARCH_SECRET_KEY": "TOPSECRET"])
            #expect(basic.status == 0, "\(basic.stderr)")
            // The same KEY:SECRET form as `vsearch serve --access-key`.
            let sameForm = try await CLI.run(["similar", "chelsea_cat", "--endpoint", url, "--access-key", "ACCESS:TOPSECRET"])
            #expect(sameForm.status == 0, "\(sameForm.stderr)")
            // A wrong app key is refused (77) and never echoed: the URL in the message is redacted.
            let wrong = try await CLI.run(["similar", "chelsea_cat", "--endpoint", url, "--app-key", "wrong-secret-key-123"])
            #expect(wrong.status == 77 && !wrong.stderr.contains("wrong-secret-key-123") && wrong.stderr.contains("access_key=***"), "\(wrong.stderr)")
        }
        let logged = outcome.stderr
        #expect(logged.contains("keys required") && logged.contains("\"status\":401"))
        #expect(!logged.contains("secret-app-key") && !logged.contains("TOPSECRET"))
    }

    @Test("an endpoint that is down: exit 69 with the reason")
    func unreachable() async throws {
        let run = try await CLI.run(["similar", "chelsea_cat", "--endpoint", "http://127.0.0.1:9", "--timeout", "2"])
        #expect(run.status == 69 && run.stderr.contains("cannot reach"))
    }

    @Test("every limit is a flag with its default in `serve --help`; contradictory or out-of-range limits are refused before starting")
    func limitFlags() async throws {
        let help = try await CLI.run(["serve", "--help"])
        #expect(help.status == 0)
        // The options' part of the help (the discussion above it names the flags too), whitespace folded.
        let options = help.stdout.components(separatedBy: "USAGE:").last ?? ""
        let text = options.replacingOccurrences(of: "\n", with: " ").split(separator: " ").joined(separator: " ")
        for (flag, shown) in [("--max-image-megapixels", "Default 32"), ("--decode-budget-megapixels", "Default 64"),
                              ("--image-workers", "Default the cores"), ("--max-queued-images", "Default 64"),
                              ("--max-concurrent-image-requests", "Default 16"), ("--max-queued", "Default 128"),
                              ("--queue-timeout", "Default 5"), ("--max-body-memory-mb", "Default 256"),
                              ("--client-rate", "Default 50"), ("--client-burst", "Default 100"), ("--client-concurrency", "Default 16"),
                              ("--client-image-concurrency", "Default 4"), ("--client-refusal-delay", "Default 1"),
                              ("--client-address-header", "Default none"), ("--max-connections", "Default 512"),
                              ("--max-client-connections", "Default 64"), ("--max-network-connections", "Default 256"),
                              ("--health-reserve-connections", "Default 4"), ("--header-timeout", "Default 10"),
                              ("--body-timeout", "Default 20"), ("--min-body-rate-kb", "Default 16"), ("--no-metrics", "/metrics"),
                              ("--compact-graphs-every", "Default 60")] {
            // The option's own entry: `--flag <value>`, or the bare flag for a switch.
            guard let range = text.range(of: " " + flag + " <") ?? text.range(of: " " + flag + " ") else {
                Issue.record("\(flag) is not in serve --help")
                continue
            }
            #expect(text[range.upperBound...].prefix(300).contains(shown), "\(flag): \(shown)")
        }
        for (arguments, message) in [(["--decode-budget-megapixels", "8", "--max-image-megapixels", "16"], "is below --max-image-megapixels"),
                                     (["--client-rate=-1"], "--client-rate must be 0 (off) or positive"),
                                     (["--header-timeout", "0"], "--header-timeout must be positive"),
                                     (["--compact-graphs-every=-5"], "--compact-graphs-every must be 0 (never) or 1 to 86400 seconds"),
                                     (["--compact-graphs-every", "0.0001"], "--compact-graphs-every must be 0 (never) or 1 to 86400 seconds"),
                                     (["--client-address-header", "X Forwarded"], "is not a header name")] {
            let run = try await CLI.run(["serve", "--catalog", "/nonexistent.sqlite", "--port", "0"] + arguments)
            #expect(run.status == 64 && run.stderr.contains(message), "\(arguments): \(run.stderr)")
        }
    }
}
