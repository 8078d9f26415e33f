import Foundation
import TestSupport
import Testing
@testable import VisualSearchServer

/// The accept gate: how many connections get a pipeline, from one address
/// and in all, and that the rest are closed the moment they are accepted —
/// with no answer, while other addresses are served.
@Suite("Accept gate", .timeLimit(.minutes(5)))
struct AcceptGateTests {
    @Test("an address gets its connections plus the polite refusals; beyond, it is refused at accept while another address is admitted")
    func perAddress() {
        let gate = AcceptGate(limits: ConnectionLimits(maxConnections: 100, maxConnectionsPerClient: 3, politeRefusals: 2), limitsPerAddress: true)
        for _ in 0..<5 { #expect(gate.admit(from: "10.0.0.1") == nil) }
        #expect(gate.admit(from: "10.0.0.1") == .clientConnectionLimit)
        #expect(gate.admit(from: "10.0.0.2") == nil)
        gate.closed(from: "10.0.0.1")
        #expect(gate.admit(from: "10.0.0.1") == nil, "a closed connection frees its place")
        #expect(gate.open(from: "10.0.0.1") == (total: 6, fromAddress: 5))
    }

    @Test("behind a proxy (no per-address limit) only the total counts; beyond the total plus the polite refusals, every address is refused")
    func total() {
        let gate = AcceptGate(limits: ConnectionLimits(maxConnections: 4, maxConnectionsPerClient: 1, politeRefusals: 1), limitsPerAddress: false)
        for _ in 0..<5 { #expect(gate.admit(from: "10.0.0.9") == nil) }
        #expect(gate.admit(from: "10.0.0.9") == .connectionLimit)
        #expect(gate.admit(from: "10.0.0.10") == .connectionLimit)
    }

    @Test("on a live server: over the limit, a polite 429 while refusals are few; beyond, closed unanswered at accept; another address is served; /metrics counts it")
    func liveBurst() async throws {
        try await ServerFixture.with({
            $0.limits.connections.maxConnectionsPerClient = 2
            $0.limits.connections.politeRefusals = 1
        }) { running in
            let port = running.url.port ?? 0
            let held = try (0..<2).map { _ in try RawConnection(port: port) }
            // Counted before the third opens: the server's two event loops may otherwise count them in any order.
            #expect(await eventually { running.server.connections.total == 2 }, "the server never counted the first two connections")
            let polite = try RawConnection(port: port)
            #expect(await eventually { running.server.gate.open(from: "127.0.0.1").fromAddress == 3 },
                    "the server never admitted the first three connections")
            // A burst beyond: each closed before anything is read from it.
            let burst = try (0..<20).map { _ in try RawConnection(port: port) }
            for connection in burst {
                #expect(await connection.closedByServer(), "a connection beyond the polite refusals was answered or left open")
            }
            #expect(running.server.gate.open(from: "127.0.0.1").fromAddress == 3, "refused connections were counted")
            polite.write("GET /search?im_name=chelsea_cat HTTP/1.1\r\nHost: x\r\n\r\n")
            let answer = await polite.readResponse()
            #expect(answer?.status == 429, "\(String(describing: answer))")
            let other = try #require(try await RawConnection.get("/health", port: port, from: "127.0.0.2"), "another address was not answered")
            #expect(other.status == 200)
            let metrics = try await RawConnection.get("/metrics", port: port, from: "127.0.0.3")
            let text = String(decoding: metrics?.body ?? [], as: UTF8.self)
            #expect(ProductionLimitsTests.samples(text)[#"vsearch_connections_closed_total{reason="accept_client_connection_limit"}"#] == 20)
            withExtendedLifetime(held) {}
        }
    }

    @Test("once an address's connections close, it is admitted again")
    func admittedAgain() async throws {
        try await ServerFixture.with({
            $0.limits.connections.maxConnectionsPerClient = 1
            $0.limits.connections.politeRefusals = 0
        }) { running in
            let port = running.url.port ?? 0
            var first: RawConnection? = try RawConnection(port: port)
            #expect(await eventually { running.server.gate.open(from: "127.0.0.1").fromAddress == 1 })
            #expect(await (try RawConnection(port: port)).closedByServer())
            first?.hangUp()
            first = nil
            #expect(await eventually { running.server.gate.open(from: "127.0.0.1").fromAddress == 0 }, "a closed connection stayed counted")
            let again = try #require(try await RawConnection.get("/health", port: port, from: "127.0.0.1"))
            #expect(again.status == 200)
        }
    }
}
