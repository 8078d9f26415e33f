import ConcurrencyToolkit
import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization
import ConcurrencyToolkit

/// A scripted HTTP/1.1 server on 127.0.0.1 for failure matrices: real
/// sockets, so a client's real URLSession stack meets each failure. Each
/// accepted connection reads one request and takes the next step of the
/// script (the last step repeats; an empty script answers 200 `{}`).
/// Foundation only, so every test target can use it.
///
/// ```swift
/// let stub = LoopbackStub([.respond(503, body: "{}"), .respond(200, body: "{}")])
/// defer { stub.stop() }
/// let response = try await client.send(HTTPClientRequest(url: stub.url("/search")))
/// #expect(stub.requests == ["GET /search HTTP/1.1", "GET /search HTTP/1.1"])
/// ```
public final class LoopbackStub: @unchecked Sendable {
    /// What the stub does with one request.
    public enum Step: Sendable {
        /// Answer with a status, headers and a body (`Content-Length`, `Connection: close`).
        case respond(Int, headers: [String: String] = [:], body: String)
        /// Answer 200 with binary content (an image, say).
        case serve(contentType: String, bytes: [UInt8])
        /// Read the request, then never answer (until the stub stops).
        case stall
        /// Declare `declared` bytes of body, send `body`, close: a body cut short.
        case truncated(declared: Int, body: String)
        /// Declare `declared` bytes of body, send `body`, then hold the connection silently open.
        case stallMidBody(declared: Int, body: String)
        /// A 200 with a `Content-Length` body of `bytes` bytes, sent as long as the client reads.
        case oversized(bytes: Int)
        /// A 200 with a chunked body of `bytes` bytes (no `Content-Length`), sent as long as the client reads.
        case oversizedChunked(bytes: Int)
        /// A redirect (302 by default) to `location`.
        case redirect(to: String, status: Int = 302)
    }

    /// The port it listens on (127.0.0.1).
    public let port: Int
    private let listener: Int32
    private let script: [Step]
    private let received = Locked<(heads: [String], connections: Int)>(([], 0))
    /// Who awaits a number of request heads (``requestsArrived(_:)``).
    private let waiters = Locked<[(count: Int, continuation: CheckedContinuation<Void, Never>)]>([])
    private let stopped = Atomic<Bool>(false)

    /// Request lines received (`GET /search?… HTTP/1.1`), in order.
    public var requests: [String] { heads.map { $0.split(separator: "\r\n").first.map(String.init) ?? "" } }
    /// Whole request heads received (request line and header fields), in order.
    public var heads: [String] { received.withLock { $0.heads } }
    /// Connections accepted so far (a request counts only once its head arrived).
    public var connections: Int { received.withLock { $0.connections } }
    /// `http://127.0.0.1:PORT`.
    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }
    /// `127.0.0.1:PORT`, e.g. for a destination policy's allowed hosts.
    public var hostAndPort: String { "127.0.0.1:\(port)" }

    /// The base URL with `path` (and query) appended.
    public func url(_ path: String = "/") -> URL { URL(string: "http://127.0.0.1:\(port)\(path)")! }

    /// Starts listening at once, on a thread of its own.
    public init(_ script: [Step]) {
        self.script = script
        let (fd, boundPort) = Self.loopbackSocket(reuseAddress: true)
        listen(fd, 16)
        listener = fd
        port = boundPort
        OwnThread.start(named: "test-stub") { [self] in serve() }
    }

    /// Returns once `count` request heads have arrived (at once when they have):
    /// a test that must act while a request is in flight awaits it, never polls.
    public func requestsArrived(_ count: Int = 1) async {
        await withCheckedContinuation { continuation in
            let ready = waiters.withLock { waiters in
                guard received.withLock({ $0.heads.count }) < count else { return true }
                waiters.append((count, continuation))
                return false
            }
            if ready { continuation.resume() }
        }
    }

    /// Sockets holding the ports ``closedPort()`` handed out.
    private static let reservedPorts = Locked<[Int32]>([])

    /// A port with nothing listening: connecting is refused. The port stays bound for
    /// the rest of the process — by a socket that never listens and has no
    /// `SO_REUSEADDR` — so a server another test starts meanwhile cannot be handed the
    /// same port (a freed port was, once: a "refused" insert reached a 502 stub).
    public static func closedPort() -> Int {
        let (fd, port) = loopbackSocket(reuseAddress: false)
        reservedPorts.withLock { $0.append(fd) }
        return port
    }

    /// A TCP socket bound to 127.0.0.1 on a port the kernel picks, and that port.
    private static func loopbackSocket(reuseAddress: Bool) -> (fd: Int32, port: Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if reuseAddress {
            var yes: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        var bound = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &bound) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(fd, $0, &length) }
        }
        return (fd, Int(UInt16(bigEndian: bound.sin_port)))
    }

    /// Stops listening and closes every connection it holds open (idempotent).
    public func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    deinit { stop() }

    private func serve() {
        var index = 0
        var open: [Int32] = []
        while !stopped.load(ordering: .relaxed) {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { break }
            received.withLock { $0.connections += 1 }
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let head = readHead(connection)
            let arrived = received.withLock { $0.heads.append(head); return $0.heads.count }
            let ready = waiters.withLock { waiters in
                let ready = waiters.filter { $0.count <= arrived }.map(\.continuation)
                waiters.removeAll { $0.count <= arrived }
                return ready
            }
            for continuation in ready { continuation.resume() }
            let step = script.isEmpty ? .respond(200, body: "{}") : script[min(index, script.count - 1)]
            index += 1
            switch step {
            case .respond(let status, let headers, let body):
                var text = "HTTP/1.1 \(status) Status\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n"
                if headers.keys.contains(where: { $0.lowercased() == "content-type" }) == false { text += "Content-Type: application/json\r\n" }
                for (name, value) in headers.sorted(by: { $0.key < $1.key }) { text += "\(name): \(value)\r\n" }
                write(connection, text + "\r\n" + body)
                close(connection)
            case .serve(let contentType, let bytes):
                if write(connection, "HTTP/1.1 200 OK\r\nContent-Type: \(contentType)\r\nContent-Length: \(bytes.count)\r\nConnection: close\r\n\r\n") {
                    sendAll(connection, bytes)
                }
                close(connection)
            case .stall:
                open.append(connection)
            case .truncated(let declared, let body):
                write(connection, "HTTP/1.1 200 OK\r\nContent-Length: \(declared)\r\nConnection: close\r\nContent-Type: application/json\r\n\r\n" + body)
                close(connection)
            case .stallMidBody(let declared, let body):
                write(connection, "HTTP/1.1 200 OK\r\nContent-Length: \(declared)\r\nConnection: close\r\nContent-Type: application/json\r\n\r\n" + body)
                open.append(connection)
            case .oversized(let bytes):
                write(connection, "HTTP/1.1 200 OK\r\nContent-Length: \(bytes)\r\nConnection: close\r\nContent-Type: application/octet-stream\r\n\r\n")
                stream(connection, bytes: bytes, chunked: false)
                close(connection)
            case .oversizedChunked(let bytes):
                write(connection, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\nContent-Type: application/octet-stream\r\n\r\n")
                stream(connection, bytes: bytes, chunked: true)
                close(connection)
            case .redirect(let location, let status):
                write(connection, "HTTP/1.1 \(status) Found\r\nLocation: \(location)\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                close(connection)
            }
        }
        for connection in open { close(connection) }
    }

    /// Sends `bytes` bytes of spaces, stopping as soon as the client goes away.
    private func stream(_ connection: Int32, bytes: Int, chunked: Bool) {
        let chunk = [UInt8](repeating: 0x20, count: 65536)
        var sent = 0
        while sent < bytes, !stopped.load(ordering: .relaxed) {
            let size = min(chunk.count, bytes - sent)
            if chunked, !write(connection, String(size, radix: 16) + "\r\n") { return }
            var offset = 0
            while offset < size {
                let n = chunk.withUnsafeBytes { send(connection, $0.baseAddress! + offset, size - offset, Int32(MSG_NOSIGNAL)) }
                if n <= 0 { return }
                offset += n
            }
            if chunked, !write(connection, "\r\n") { return }
            sent += size
        }
        if chunked { write(connection, "0\r\n\r\n") }
    }

    private func readHead(_ connection: Int32) -> String {
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while data.count < 4 << 20 {
            let n = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            data += buffer[0..<n]
            if let end = LoopbackStub.headEnd(data) {
                let head = String(decoding: data[0..<end], as: UTF8.self)
                let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                    .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
                while data.count < end + 4 + length {
                    let m = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
                    if m <= 0 { break }
                    data += buffer[0..<m]
                }
                return head
            }
        }
        return String(decoding: data, as: UTF8.self)
    }

    private static func headEnd(_ data: [UInt8]) -> Int? {
        guard data.count >= 4 else { return nil }
        for i in 0...(data.count - 4) where data[i] == 13 && data[i + 1] == 10 && data[i + 2] == 13 && data[i + 3] == 10 { return i }
        return nil
    }

    @discardableResult
    private func write(_ connection: Int32, _ text: String) -> Bool {
        sendAll(connection, Array(text.utf8))
    }

    @discardableResult
    private func sendAll(_ connection: Int32, _ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            sent += n
        }
        return true
    }
}
