import Foundation
import TestSupport
import Testing
import VisualSearch
@testable import VisualSearchServer

/// Issue 37, item 9: connection floods from many addresses. 20 addresses × 30
/// idle connections took every connection of the server (a keyed client got 1
/// answer in 68, `/health` none). Now the connection idle longest makes room
/// for a newcomer, a network (/24, /64) holds at most its share, and a reserve
/// keeps `/health` reachable when every connection is busy.
@Suite("Connection floods", .timeLimit(.minutes(10)))
struct ConnectionFloodTests {
    static let attackers = (2...21).map { "127.0.0.\($0)" }
    static let connectionsEach = 30

    /// The limit the flood meets: the per-network one (the defaults: 600 connections from one /24 against its 256),
    /// or the total (no per-network limit, 128 connections in all).
    enum Pressure: String, CaseIterable, CustomTestStringConvertible {
        case network, total
        var testDescription: String { rawValue }
    }

    @Test("20 addresses × 30 idle connections: a keyed client's every search is answered, and /health", arguments: Pressure.allCases)
    func idleFlood(pressure: Pressure) async throws {
        let credentials = try ServerCredentials(lines: "ACCESS:SECRET")
        try await ServerFixture.with({
            $0.credentials = credentials
            // The flood is never closed by its own timeouts here (the header timeout, Hummingbird's idle timeout):
            // only the server's need for room closes it.
            $0.limits.connections.headerTimeout = 600
            $0.idleTimeout = 600
            if pressure == .total {
                $0.limits.connections.maxConnectionsPerPrefix = 0
                $0.limits.connections.maxConnections = 128
            }
        }) { running in
            let port = running.url.port ?? 0
            var flood: [RawConnection] = []
            for address in Self.attackers {
                for _ in 0..<Self.connectionsEach { flood.append(try RawConnection(port: port, from: address)) }
            }
            let gate = running.server.gate
            // Every flood connection admitted, then kept or closed to make room for a later one.
            #expect(await gate.until { gate.counts.serving + gate.counts.evicted == flood.count },
                    "the flood was not all admitted: \(gate.counts)")
            let kept = pressure == .network ? 256 : 128
            #expect(gate.counts.serving == kept && gate.counts.refusing == 0, "\(gate.counts)")

            var statuses: [Int?] = []
            for _ in 0..<20 {
                let victim = try RawConnection(port: port, from: "127.0.0.100")
                victim.write("GET /search?im_name=chelsea_cat&limit=3 HTTP/1.1\r\nHost: x\r\nAuthorization: Basic \(Data("ACCESS:SECRET".utf8).base64EncodedString())\r\nConnection: close\r\n\r\n")
                statuses.append(await victim.readResponse()?.status)
            }
            #expect(statuses == Array(repeating: 200, count: 20), "the victim's answers: \(statuses)")
            let health = try await RawConnection.get("/health", port: port, from: "127.0.0.101")
            #expect(health?.status == 200)
            #expect(gate.counts.serving <= kept)
            withExtendedLifetime(flood) {}
        }
    }

    @Test("every connection busy and the polite refusals taken: /health is answered from the reserve, anything else 503")
    func healthReserve() async throws {
        try await ServerFixture.with({
            $0.limits.connections.maxConnections = 2
            $0.limits.connections.politeRefusals = 1
            $0.limits.connections.healthReserve = 1
            ProductionLimitsTests.holdersOutlastTheRun(&$0)
        }) { running in
            let port = running.url.port ?? 0
            let gate = running.server.gate
            // Two requests whose bodies never come: busy, so never closed to make room.
            let busy = try (0..<2).map { index in
                let connection = try RawConnection(port: port, from: "127.0.0.\(2 + index)")
                connection.write("POST /search HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n")
                return connection
            }
            #expect(await gate.until { gate.counts.serving == 2 && gate.idleConnections == 0 })
            // A silent connection over the limit: the one polite refusal.
            let silent = try RawConnection(port: port, from: "127.0.0.4")
            #expect(await gate.until { gate.counts.refusing == 1 })
            let health = try #require(try await RawConnection.get("/health", port: port, from: "127.0.0.5"), "/health was not answered")
            #expect(health.status == 200 && health.headers["connection"] == "close")
            #expect(await gate.until { gate.counts.reserve == 0 }, "the reserve connection stayed open after its answer")
            let search = try await RawConnection.get("/search?im_name=chelsea_cat", port: port, from: "127.0.0.6")
            #expect(search?.status == 503)
            withExtendedLifetime((busy, silent)) {}
        }
    }

    @Test("over the connection limit with nothing idle, GET /health is still answered on a polite-refusal connection")
    func healthOverLimit() async throws {
        try await ServerFixture.with({
            $0.limits.connections.maxConnections = 1
            ProductionLimitsTests.holdersOutlastTheRun(&$0)
        }) { running in
            let port = running.url.port ?? 0
            let busy = try RawConnection(port: port, from: "127.0.0.2")
            busy.write("POST /search HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\n")
            #expect(await running.server.gate.until { running.server.gate.counts.serving == 1 && running.server.gate.idleConnections == 0 })
            let health = try await RawConnection.get("/health", port: port, from: "127.0.0.3")
            #expect(health?.status == 200)
            let search = try await RawConnection.get("/search?im_name=chelsea_cat", port: port, from: "127.0.0.3")
            #expect(search?.status == 503)
            withExtendedLifetime(busy) {}
        }
    }
}
