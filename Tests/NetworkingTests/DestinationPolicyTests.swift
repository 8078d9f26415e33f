import Foundation
import Networking
import Testing

@Suite("DestinationPolicy: where a request may go")
struct DestinationPolicyTests {
    func check(_ policy: DestinationPolicy, _ text: String) async throws -> Result<Void, HTTPClientError> {
        let url = try #require(URL(string: text))
        return await outcome { () async throws(HTTPClientError) in try await policy.check(url) }
    }

    @Test("non-public IP literals are refused, naming their kind", arguments: [
        ("127.0.0.1", "loopback"), ("127.255.255.254", "loopback"),
        ("10.1.2.3", "private"), ("172.16.0.1", "private"), ("172.31.255.255", "private"), ("192.168.1.1", "private"),
        ("169.254.169.254", "link-local"), ("169.254.0.1", "link-local"),
        ("100.64.0.1", "shared (CGNAT)"), ("100.127.255.255", "shared (CGNAT)"),
        ("0.0.0.0", "unspecified"), ("255.255.255.255", "broadcast"), ("224.0.0.1", "multicast"), ("240.0.0.1", "reserved"),
        ("[::1]", "loopback"), ("[::]", "unspecified"), ("[fe80::1]", "link-local"), ("[febf::1]", "link-local"),
        ("[fc00::1]", "private"), ("[fd12:3456::1]", "private"), ("[ff02::1]", "multicast"),
        ("[::ffff:127.0.0.1]", "IPv4-mapped loopback"), ("[::ffff:7f00:1]", "IPv4-mapped loopback"),
        ("[::ffff:169.254.169.254]", "IPv4-mapped link-local"), ("[::ffff:10.0.0.1]", "IPv4-mapped private"),
        ("[::127.0.0.1]", "IPv4-compatible loopback"),
        ("[64:ff9b::a9fe:a9fe]", "NAT64 link-local"), ("[2002:7f00:1::]", "6to4 loopback"),
    ])
    func refusedLiterals(host: String, kind: String) async throws {
        let result = try await check(.publicOnly, "http://\(host):8080/path")
        guard case .failure(.destinationRefused(_, let reason)) = result else {
            Issue.record("\(host) was not refused: \(result)")
            return
        }
        #expect(reason.hasSuffix(" \(kind) address"), "\(reason)")
    }

    @Test("public IP literals pass without any lookup", arguments: [
        "8.8.8.8", "1.1.1.1", "11.0.0.1", "172.32.0.1", "172.15.255.255", "100.128.0.1", "100.63.255.255", "169.255.0.1",
        "192.169.0.1", "223.255.255.255", "[2001:4860:4860::8888]", "[::ffff:8.8.8.8]", "[2606:4700::1111]",
    ])
    func publicLiterals(host: String) async throws {
        #expect(try await check(.publicOnly, "https://\(host)/x").failure == nil)
    }

    @Test("a name that resolves to loopback is refused: localhost, and numeric spellings the resolver reads", arguments: [
        "http://localhost/", "http://localhost:8080/x", "http://LocalHost/", "http://2130706433/", "http://127.1/",
    ])
    func namesResolvingToLoopback(url: String) async throws {
        let result = try await check(.publicOnly, url)
        guard case .failure(.destinationRefused(_, let reason)) = result else {
            Issue.record("\(url) was not refused: \(result)")
            return
        }
        #expect(reason.contains("loopback"), "\(reason)")
    }

    @Test("explicit exceptions: host:port allows that port only, a bare host any port")
    func allowedHosts() async throws {
        let onePort = DestinationPolicy(refusesNonPublicAddresses: true, allowedHosts: ["127.0.0.1:8080", "[::1]:9000"])
        #expect(try await check(onePort, "http://127.0.0.1:8080/").failure == nil)
        #expect(try await check(onePort, "http://127.0.0.1:8081/").failure?.reason?.contains("loopback") == true)
        #expect(try await check(onePort, "http://[::1]:9000/").failure == nil)
        let anyPort = DestinationPolicy(refusesNonPublicAddresses: true, allowedHosts: ["LocalHost"])
        #expect(anyPort.allowedHosts == ["localhost"])
        #expect(try await check(anyPort, "http://localhost:1234/").failure == nil)
        let defaultPort = DestinationPolicy(refusesNonPublicAddresses: true, allowedHosts: ["10.0.0.5:443"])
        #expect(try await check(defaultPort, "https://10.0.0.5/").failure == nil)
        #expect(try await check(defaultPort, "http://10.0.0.5/").failure != nil)
    }

    @Test("only http and https, with a host, under any policy", arguments: [
        "ftp://example.com/file", "file:///etc/passwd", "gopher://127.0.0.1:6379/_INFO", "mailto:someone@example.com",
    ])
    func schemes(url: String) async throws {
        for policy in [DestinationPolicy.unrestricted, .publicOnly] {
            guard case .failure(.destinationRefused) = try await check(policy, url) else {
                Issue.record("\(url) was not refused")
                continue
            }
        }
    }

    @Test("unrestricted lets the user's own machine through")
    func unrestricted() async throws {
        #expect(try await check(.unrestricted, "http://127.0.0.1:8080/").failure == nil)
        #expect(try await check(.unrestricted, "http://localhost/").failure == nil)
        #expect(try await check(.unrestricted, "HTTPS://169.254.169.254/").failure == nil)
    }

    @Test("reasons read as sentences", arguments: [
        ("http://0.0.0.0/", "0.0.0.0 is an unspecified address"),
        ("http://[::ffff:10.0.0.1]/", "::ffff:10.0.0.1 is an IPv4-mapped private address"),
        ("http://10.0.0.1/", "10.0.0.1 is a private address"),
    ])
    func reasons(url: String, reason: String) async throws {
        #expect(try await check(.publicOnly, url).failure?.reason == reason)
    }

    @Test("a refused URL is reported redacted")
    func redactedInError() async throws {
        let result = try await check(.publicOnly, "http://user:pw@127.0.0.1/?access_key=SECRET")
        #expect(result.failure == .destinationRefused(url: "http://127.0.0.1/?access_key=***", reason: "127.0.0.1 is a loopback address"))
    }
}
