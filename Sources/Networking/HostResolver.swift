import ConcurrencyToolkit
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Resolves host names with `getaddrinfo` on a thread of its own, so the
/// blocking call never holds a thread of Swift's cooperative pool. The
/// caller waits on a continuation that the first of three things resumes:
/// the answer, the timeout, or the caller's cancellation (a resolution
/// still running then finishes on its thread and is discarded).
enum HostResolver {
    enum Failure: Error, Sendable, Equatable {
        case unresolvable(String)
        case timedOut
        case cancelled
    }

    /// Every address `host` resolves to (IPv4 and IPv6, duplicates removed).
    static func resolve(_ host: String, timeout: Double?) async throws(Failure) -> [IPAddress] {
        let gate = Handoff<Result<[IPAddress], Failure>>()
        let timer: Task<Void, Never>? = timeout.map { seconds in
            Task.detached {
                try? await Task.sleep(for: .milliseconds(Int64(max(0, seconds) * 1000)))
                if !Task.isCancelled { gate.resume(.failure(.timedOut)) }
            }
        }
        defer { timer?.cancel() }
        let result = await withTaskCancellationHandler {
            await gate.value { OwnThread.start(named: "vsearch-dns") { gate.resume(lookUp(host)) } }
        } onCancel: {
            gate.resume(.failure(.cancelled))
        }
        return try result.get()
    }

    /// The blocking lookup itself.
    static func lookUp(_ host: String) -> Result<[IPAddress], Failure> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if os(Linux)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0 else {
            return .failure(.unresolvable(String(cString: gai_strerror(status))))
        }
        defer { freeaddrinfo(list) }
        var addresses: [IPAddress] = []
        var cursor = list
        while let entry = cursor {
            if let socketAddress = entry.pointee.ai_addr {
                switch Int32(socketAddress.pointee.sa_family) {
                case AF_INET:
                    let v4 = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee.sin_addr.s_addr }
                    addresses.append(.v4(UInt32(bigEndian: v4)))
                case AF_INET6:
                    var v6 = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                    addresses.append(.v6(withUnsafeBytes(of: &v6) { Array($0) }))
                default: break
                }
            }
            cursor = entry.pointee.ai_next
        }
        var seen = Set<IPAddress>()
        return .success(addresses.filter { seen.insert($0).inserted })
    }
}
