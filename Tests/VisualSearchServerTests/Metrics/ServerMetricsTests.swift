import Foundation
import TestSupport
import Testing
@testable import VisualSearchServer

/// `/metrics` is what a Prometheus server can scrape without a warning: the
/// text format 0.0.4, every family with `# HELP` and `# TYPE`, names by
/// Prometheus' conventions (base units — seconds, bytes — as the last word,
/// counters ending in `_total`), label values escaped, and the standard
/// process families beside the server's own. Every family is defined once,
/// in `MetricFamily.all`; the server reports nothing else.
@Suite("/metrics: families, help, names", .timeLimit(.minutes(10)))
struct ServerMetricsTests {
    /// A name as the format allows it.
    static var validName: Regex<Substring> { #/^[a-zA-Z_:][a-zA-Z0-9_:]*$/# }
    /// Units that are not base units, and so never in a name (seconds and bytes instead).
    static let nonBaseUnits = ["milliseconds", "microseconds", "nanoseconds", "minutes", "hours", "ms", "us",
                               "kilobytes", "megabytes", "gigabytes", "kb", "mb", "kib", "mib", "gib", "percent"]

    /// A registry in which every family of the catalog has a sample.
    static func everyFamilyRecorded(procfs: String = "/proc") -> ServerMetrics {
        let metrics = ServerMetrics(procfs: procfs)
        metrics.recordRequest(endpoint: "/search", status: 200, duration: .milliseconds(3))
        metrics.recordShed(lane: .image)
        metrics.recordRateLimited(reason: "rate")
        metrics.recordConnectionClosed(reason: "header_timeout")
        metrics.recordCollectorEvents(accepted: 2, rejected: 1)
        for lane in RequestLane.allCases {
            metrics.set(.httpRequestsInFlight, 1, labels: [lane.rawValue])
            metrics.set(.httpRequestsQueued, 0, labels: [lane.rawValue])
        }
        metrics.set("vsearch_connections_open", 4)
        for family in [MetricFamily.imageDecodesRunning, .imageDecodesQueued, .imagePixelsInFlight, .catalogImages] {
            metrics.set(family, 7)
        }
        for family in [MetricFamily.imageDecodes, .imageDecodedPixels, .imageDecodesRefused] {
            metrics.advance(family, to: 5)
        }
        return metrics
    }

    static func exposition(_ metrics: ServerMetrics) -> Exposition {
        Exposition(String(decoding: metrics.render(), as: UTF8.self))
    }

    @Test("every family of the catalog is rendered with the catalog's HELP, TYPE and labels, and nothing else is")
    func catalogRendered() throws {
        let exposition = Self.exposition(Self.everyFamilyRecorded())
        #expect(exposition.problems == [])
        #expect(Set(exposition.families.map(\.name)) == Set(MetricFamily.all.map(\.name)))
        for family in exposition.families {
            let defined = try #require(MetricFamily.named(family.name), "\(family.name) is not in MetricFamily.all")
            #expect(family.help == defined.help, "\(family.name)")
            #expect(family.type == defined.kind.rawValue, "\(family.name)")
            #expect(!family.samples.isEmpty, "\(family.name) has no sample")
            for sample in family.samples {
                #expect(sample.labelNames.filter { $0 != "le" } == defined.labels, "\(sample.name)")
            }
        }
    }

    @Test("names: the format's characters, counters end in _total and nothing else does, base units last")
    func names() {
        for family in MetricFamily.all {
            let name = family.name
            #expect(name.wholeMatch(of: Self.validName) != nil, "\(name)")
            #expect(name.hasPrefix("vsearch_") || name.hasPrefix("process_"), "\(name): vsearch's own, or a standard process family")
            #expect((family.kind == .counter) == name.hasSuffix("_total"), "\(name) is a \(family.kind)")
            #expect(!["_count", "_sum", "_bucket"].contains { name.hasSuffix($0) }, "\(name) ends like a histogram's sample")
            let words = name.split(separator: "_").map(String.init)
            for unit in Self.nonBaseUnits { #expect(!words.contains(unit), "\(name): \(unit) is not a base unit") }
            let meaningful = words.last == "total" ? Array(words.dropLast()) : words
            for unit in ["seconds", "bytes"] where words.contains(unit) {
                #expect(meaningful.last == unit, "\(name): the unit \(unit) is the last word (before _total)")
            }
            #expect(!family.help.isEmpty && !family.help.contains("\n"), "\(name): one line of help")
            for label in family.labels { #expect(label.wholeMatch(of: #/^[a-zA-Z_][a-zA-Z0-9_]*$/#) != nil, "\(name): label \(label)") }
        }
        #expect(MetricFamily.all.count == Set(MetricFamily.all.map(\.name)).count, "no name twice")
    }

    @Test("label values with a quote, a backslash and a line feed are escaped, and read back as they were")
    func labelValuesEscaped() throws {
        let metrics = ServerMetrics(procfs: "/proc")
        let reason = "say \"no\" \\ twice\nthen stop"
        metrics.recordRateLimited(reason: reason)
        let text = String(decoding: metrics.render(), as: UTF8.self)
        #expect(text.contains(#"vsearch_http_requests_rate_limited_total{reason="say \"no\" \\ twice\nthen stop"} 1"#), "\(text)")
        let exposition = Exposition(text)
        #expect(exposition.problems == [])
        let family = try #require(exposition[MetricFamily.httpRequestsRateLimited.name])
        #expect(family.samples.map { $0.labels["reason"] } == [reason])
    }

    @Test("a family written by hand: HELP escaped, TYPE, the sample; integral values without a fraction")
    func handWrittenFamily() {
        let family = MetricFamily("vsearch_test_widgets_total", .counter, #"widgets made \ kept"# + "\nsecond line")
        #expect(family.exposition(3) == #"""
            # HELP vsearch_test_widgets_total widgets made \\ kept\nsecond line
            # TYPE vsearch_test_widgets_total counter
            vsearch_test_widgets_total 3

            """#)
        #expect(family.exposition(0.25).hasSuffix("vsearch_test_widgets_total 0.25\n"))
        #expect(family.exposition(1_764_000_000.5).hasSuffix("vsearch_test_widgets_total 1764000000.5\n"))
    }

    @Test("without procfs the process families are left out, and the server's are all there")
    func withoutProcfs() {
        let missing = Repository.temporaryDirectory("no-procfs") + "/proc"
        let exposition = Self.exposition(Self.everyFamilyRecorded(procfs: missing))
        #expect(exposition.problems == [])
        #expect(Set(exposition.families.map(\.name)) == Set(MetricFamily.server.map(\.name)))
    }

    @Test("a live server's /metrics: 0.0.4, every family with HELP and TYPE and in the catalog, the process families plausible")
    func liveServer() async throws {
        try await ServerFixture.with { running in
            _ = try await ServerFixture.reply(running.url.appending(path: "search").appending(queryItems: [URLQueryItem(name: "im_name", value: "chelsea_cat")]))
            let reply = try await ServerFixture.reply(running.url.appending(path: "metrics"))
            #expect(reply.status == 200)
            #expect(reply.headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8")
            let exposition = Exposition(reply.text)
            #expect(exposition.problems == [], "\(reply.text)")
            for family in exposition.families {
                #expect(!(family.help ?? "").isEmpty, "\(family.name) has no HELP")
                #expect(["counter", "gauge", "histogram"].contains(family.type ?? ""), "\(family.name): TYPE \(family.type ?? "none")")
                #expect(MetricFamily.named(family.name) != nil, "\(family.name) is not in MetricFamily.all")
            }
            for family in [MetricFamily.httpRequests, .httpRequestDuration, .httpRequestsInFlight, .connectionsOpen, .catalogImages] {
                #expect(exposition[family.name] != nil, "\(family.name) is missing")
            }
            #expect(exposition[MetricFamily.httpRequests.name]?.samples.contains { $0.labels == ["endpoint": "/search", "status": "200"] } == true)
            Self.expectPlausibleProcess(exposition)
        }
    }

    /// The process families are there, each once, with values this process could have.
    static func expectPlausibleProcess(_ exposition: Exposition, sourceLocation: SourceLocation = #_sourceLocation) {
        func value(_ family: MetricFamily) -> Double {
            guard let samples = exposition[family.name]?.samples, samples.count == 1 else {
                Issue.record("\(family.name): not one sample", sourceLocation: sourceLocation)
                return .nan
            }
            return samples[0].value
        }
        let now = Date().timeIntervalSince1970
        let resident = value(.processResidentMemory), virtual = value(.processVirtualMemory), start = value(.processStartTime)
        let open = value(.processOpenFDs), max = value(.processMaxFDs), cpu = value(.processCPU)
        #expect(resident > 1_000_000, "RSS \(resident) bytes", sourceLocation: sourceLocation)
        #expect(virtual >= resident, "virtual \(virtual) < resident \(resident)", sourceLocation: sourceLocation)
        #expect(start > now - 86_400 && start <= now + 1, "start time \(start), now \(now)", sourceLocation: sourceLocation)
        #expect(open >= 3 && open <= max, "open fds \(open), max \(max)", sourceLocation: sourceLocation)
        let cores = Double(ProcessInfo.processInfo.activeProcessorCount)
        #expect(cpu > 0 && cpu <= (now - start + 1) * cores, "CPU \(cpu) s in \(now - start) s on \(cores) cores", sourceLocation: sourceLocation)
    }
}
