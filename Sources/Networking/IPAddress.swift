#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// An IPv4 or IPv6 address and what kind of network it belongs to: the rule
/// behind ``DestinationPolicy/publicOnly``, a pure function tested by table.
enum IPAddress: Sendable, Hashable, CustomStringConvertible {
    case v4(UInt32)
    case v6([UInt8])

    /// A strict literal: dotted-quad IPv4 or RFC 4291 IPv6 (brackets and a
    /// `%zone` suffix tolerated). Other spellings (`2130706433`, `0x7f.1`)
    /// are not literals here; they go through the resolver, which reads them
    /// as the connecting library would.
    init?(literal text: String) {
        var text = Substring(text)
        if text.hasPrefix("["), text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        if let percent = text.firstIndex(of: "%") { text = text[..<percent] }
        var v4 = in_addr()
        if inet_pton(AF_INET, String(text), &v4) == 1 {
            self = .v4(UInt32(bigEndian: v4.s_addr))
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, String(text), &v6) == 1 {
            self = .v6(withUnsafeBytes(of: &v6) { Array($0) })
            return
        }
        return nil
    }

    /// The network kind that makes this address non-public — `loopback`,
    /// `private`, `link-local`, `shared (CGNAT)`, `multicast`, `unspecified`,
    /// `broadcast`, `reserved`, or `IPv4-mapped …` of those — or nil for a public address.
    var nonPublicKind: String? {
        switch self {
        case .v4(let address): return Self.kind(ofV4: address)
        case .v6(let bytes): return Self.kind(ofV6: bytes)
        }
    }

    static func kind(ofV4 address: UInt32) -> String? {
        func within(_ network: UInt32, _ prefix: UInt32) -> Bool {
            address >> (32 - prefix) == network >> (32 - prefix)
        }
        if address == 0xFFFF_FFFF { return "broadcast" }
        if within(0x0000_0000, 8) { return "unspecified" }         // 0.0.0.0/8, "this network"
        if within(0x7F00_0000, 8) { return "loopback" }            // 127/8
        if within(0x0A00_0000, 8) { return "private" }             // 10/8
        if within(0xAC10_0000, 12) { return "private" }            // 172.16/12
        if within(0xC0A8_0000, 16) { return "private" }            // 192.168/16
        if within(0xA9FE_0000, 16) { return "link-local" }         // 169.254/16, cloud metadata
        if within(0x6440_0000, 10) { return "shared (CGNAT)" }     // 100.64/10
        if within(0xE000_0000, 4) { return "multicast" }           // 224/4
        if within(0xF000_0000, 4) { return "reserved" }            // 240/4
        return nil
    }

    static func kind(ofV6 bytes: [UInt8]) -> String? {
        guard bytes.count == 16 else { return "reserved" }
        let embedded = UInt32(bytes[12]) << 24 | UInt32(bytes[13]) << 16 | UInt32(bytes[14]) << 8 | UInt32(bytes[15])
        let head = bytes[0..<10].allSatisfy { $0 == 0 }
        if head && bytes[10] == 0xFF && bytes[11] == 0xFF {                    // ::ffff:a.b.c.d
            return kind(ofV4: embedded).map { "IPv4-mapped \($0)" }
        }
        if head && bytes[10] == 0 && bytes[11] == 0 {
            if embedded == 0 { return "unspecified" }                           // ::
            if embedded == 1 { return "loopback" }                              // ::1
            return kind(ofV4: embedded).map { "IPv4-compatible \($0)" }         // ::a.b.c.d (deprecated)
        }
        if bytes[0..<12] == [0x00, 0x64, 0xFF, 0x9B, 0, 0, 0, 0, 0, 0, 0, 0][...] {  // 64:ff9b::/96, NAT64
            return kind(ofV4: embedded).map { "NAT64 \($0)" }
        }
        if bytes[0] == 0x20 && bytes[1] == 0x02 {                               // 2002::/16, 6to4
            let v4 = UInt32(bytes[2]) << 24 | UInt32(bytes[3]) << 16 | UInt32(bytes[4]) << 8 | UInt32(bytes[5])
            return kind(ofV4: v4).map { "6to4 \($0)" }
        }
        if bytes[0] == 0xFE && bytes[1] & 0xC0 == 0x80 { return "link-local" }  // fe80::/10
        if bytes[0] == 0xFE && bytes[1] & 0xC0 == 0xC0 { return "private" }     // fec0::/10, site-local (deprecated)
        if bytes[0] & 0xFE == 0xFC { return "private" }                          // fc00::/7, unique local
        if bytes[0] == 0xFF { return "multicast" }                               // ff00::/8
        return nil
    }

    /// "a" or "an" before a kind's name.
    static func article(_ kind: String) -> String {
        kind.hasPrefix("IPv4") || kind.hasPrefix("unspecified") ? "an" : "a"
    }

    var description: String {
        switch self {
        case .v4(let address):
            return "\(address >> 24).\(address >> 16 & 0xFF).\(address >> 8 & 0xFF).\(address & 0xFF)"
        case .v6(var bytes):
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            guard bytes.count == 16, inet_ntop(AF_INET6, &bytes, &text, socklen_t(text.count)) != nil else { return "?" }
            return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        }
    }
}
