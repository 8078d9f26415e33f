import ConcurrencyToolkit
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One HTTP/1.1 connection to 127.0.0.1 over a plain socket, for requests no
/// HTTP client sends: a head that promises a body which then stops arriving —
/// and for a second client: the socket's source address may be another
/// loopback address (`127.0.0.2`), which the server sees as another peer.
/// Blocking reads run on a thread of their own (``OwnThread``), never on Swift's cooperative pool; what they read
/// reaches the test through its ``Handoff``, which ThreadSanitizer sees (a continuation resumed from a Foundation
/// thread it does not: the bytes read there and the test's read of them were reported as races).
///
/// ```swift
/// let connection = try RawConnection(port: port)
/// connection.write("POST /uploadsearch HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n--B\r\n")
/// let answer = await connection.readResponse()
/// ```
public final class RawConnection: @unchecked Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
        public init(description: String) { self.description = description }
    }

    private let socketDescriptor: Int32

    /// Connects to `127.0.0.1:port` from `source`; reads and writes give up after `readTimeout` seconds without progress
    /// (generous: a bound, not a measurement).
    public init(port: Int, from source: String = "127.0.0.1", readTimeout: Int = 30) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket() failed") }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        let bound = withUnsafePointer(to: &local) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            close(fd)
            throw Failure(description: "cannot bind the source address \(source)")
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw Failure(description: "cannot connect to 127.0.0.1:\(port)")
        }
        var timeout = timeval(tv_sec: readTimeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        socketDescriptor = fd
    }

    deinit { close(socketDescriptor) }

    /// Closes both directions now, as a client that gives up does (the descriptor itself is closed at deinit).
    public func hangUp() {
        shutdown(socketDescriptor, Int32(SHUT_RDWR))
    }

    /// Writes all of `text` (a request head: small enough never to block).
    public func write(_ text: String) {
        _ = blockingWrite(Array(text.utf8))
    }

    /// Writes `bytes` on a thread of its own; returns how many were sent before the peer stopped reading or closed.
    public func write(bytes: [UInt8]) async -> Int {
        await OwnThread.run(named: "test-socket") { self.blockingWrite(bytes) }
    }

    private func blockingWrite(_ bytes: [UInt8]) -> Int {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(socketDescriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { break }
            sent += n
        }
        return sent
    }

    /// Sends `GET target` on a new connection from `source` and reads the answer (nil when the connection closed first).
    public static func get(_ target: String, port: Int, from source: String) async throws -> (status: Int, headers: [String: String], body: [UInt8])? {
        let connection = try RawConnection(port: port, from: source)
        connection.write("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        return await connection.readResponse()
    }

    /// Whether an answer has begun to arrive (a non-blocking peek; nothing is consumed).
    public var hasAnswer: Bool {
        var byte: UInt8 = 0
        return recv(socketDescriptor, &byte, 1, Int32(MSG_PEEK) | Int32(MSG_DONTWAIT)) > 0
    }

    /// How many of `connections` have an answer, once at least `count` of them do: the wait is on the sockets
    /// themselves (poll(2) wakes when one becomes readable), not on a timer; `limit` only bounds it (a test that
    /// gets fewer fails on the count). A connection the server closed without an answer is not waited on again.
    public static func answered(_ connections: [RawConnection], atLeast count: Int, within limit: Duration = .seconds(60)) async -> Int {
        await OwnThread.run(named: "test-socket") {
            let deadline = ContinuousClock.now + limit
            var closed = Set<Int32>()
            while true {
                let answered = connections.filter(\.hasAnswer).count
                let waiting = connections.filter { !$0.hasAnswer && !closed.contains($0.socketDescriptor) }
                let left = ContinuousClock.now.duration(to: deadline)
                if answered >= count || waiting.isEmpty || left <= .zero { return answered }
                var descriptors = waiting.map { pollfd(fd: $0.socketDescriptor, events: Int16(POLLIN), revents: 0) }
                let milliseconds = Int32(clamping: left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1)
                guard poll(&descriptors, nfds_t(descriptors.count), milliseconds) > 0 else { continue }
                // Readable without a byte to peek: the server closed it (or it failed); it will never answer.
                for (connection, descriptor) in zip(waiting, descriptors) where descriptor.revents != 0 && !connection.hasAnswer {
                    closed.insert(connection.socketDescriptor)
                }
            }
        }
    }

    /// Waits (up to the read timeout) for the server to close the connection:
    /// true when it did, false when it sent more or stayed silent and open.
    public func closedByServer() async -> Bool {
        await OwnThread.run(named: "test-socket") {
            var byte: UInt8 = 0
            return recv(self.socketDescriptor, &byte, 1, 0) == 0
        }
    }

    /// Reads one response: the head, then `Content-Length` bytes of body. Nil when the
    /// connection closed or stayed silent for the read timeout before a whole response arrived.
    public func readResponse() async -> (status: Int, headers: [String: String], body: [UInt8])? {
        await OwnThread.run(named: "test-socket") { self.blockingRead() }
    }

    private func blockingRead() -> (status: Int, headers: [String: String], body: [UInt8])? {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        func receive() -> Bool {
            let n = buffer.withUnsafeMutableBytes { recv(socketDescriptor, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { return false }
            data += buffer[0..<n]
            return true
        }
        while true {
            if let end = Self.headEnd(data) {
                let head = String(decoding: data[0..<end], as: UTF8.self)
                let lines = head.components(separatedBy: "\r\n")
                guard let statusText = lines.first?.split(separator: " ").dropFirst().first, let status = Int(statusText) else { return nil }
                var headers: [String: String] = [:]
                for line in lines.dropFirst() {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                }
                let length = headers["content-length"].flatMap { Int($0) } ?? 0
                while data.count < end + 4 + length {
                    guard receive() else { return nil }
                }
                return (status, headers, Array(data[(end + 4)..<(end + 4 + length)]))
            }
            guard receive() else { return nil }
        }
    }

    private static func headEnd(_ data: [UInt8]) -> Int? {
        guard data.count >= 4 else { return nil }
        for i in 0...(data.count - 4) where data[i] == 13 && data[i + 1] == 10 && data[i + 2] == 13 && data[i + 3] == 10 { return i }
        return nil
    }
}
