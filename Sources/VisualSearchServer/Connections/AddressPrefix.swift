import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The network a peer address belongs to, as one client is likely to hold
/// it: the /24 of an IPv4 address, the /64 of an IPv6 one (a single
/// subscriber's LAN; one host may pick any of its 2⁶⁴ addresses, so a cap per
/// address alone costs it nothing). An IPv4-mapped IPv6 address
/// (`::ffff:192.0.2.7`) is its IPv4 address's /24. Anything else (a Unix
/// socket, an unparsable string) is its own network.
///
/// ```swift
/// AddressPrefix("192.0.2.7").description     // "192.0.2.0/24"
/// AddressPrefix("2001:db8:1:2:aa::5").description   // "2001:db8:1:2::/64"
/// ```
struct AddressPrefix: Hashable, Sendable, CustomStringConvertible {
    let description: String

    init(_ address: String) {
        var v4 = in_addr()
        if inet_pton(AF_INET, address, &v4) == 1 {
            description = Self.ipv4(withUnsafeBytes(of: v4) { Array($0) })
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, address, &v6) == 1 {
            let bytes = withUnsafeBytes(of: v6) { Array($0) }
            if bytes[0..<10].allSatisfy({ $0 == 0 }) && bytes[10] == 0xff && bytes[11] == 0xff {
                description = Self.ipv4(Array(bytes[12..<16]))
                return
            }
            let groups = stride(from: 0, to: 8, by: 2).map { String(UInt16(bytes[$0]) << 8 | UInt16(bytes[$0 + 1]), radix: 16) }
            description = groups.joined(separator: ":") + "::/64"
            return
        }
        description = address
    }

    private static func ipv4(_ bytes: [UInt8]) -> String {
        "\(bytes[0]).\(bytes[1]).\(bytes[2]).0/24"
    }
}
