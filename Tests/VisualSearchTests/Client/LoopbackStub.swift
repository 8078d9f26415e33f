import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A scripted HTTP/1.1 server on 127.0.0.1 for the client's failure matrix:
/// real sockets, so the client's real URLSession stack meets each failure.
/// Each accepted request takes the next step of the script (the last step repeats).
final class LoopbackStub: @unchecked Sendable {
    enum Step: Sendable {
        /// Answer with a status, headers and a body.
        case respond(Int, headers: [String: String] = [:], body: String)
        /// Read the request, then never answer (until the stub stops).
        case stall
        /// Declare `declared` bytes of body, send `body`, close.
        case truncated(declared: Int, body: String)
        /// Send a 200 with a body of `bytes` bytes.
        case oversized(bytes: Int)
    }

    let port: Int
    private let listener: Int32
    private let script: [Step]
    private let received = Mutex<[String]>([])
    private let stopped = Atomic<Bool>(false)

    /// Request lines received (`GET /search?… HTTP/1.1`), in order.
    var requests: [String] { received.withLock { $0 } }

    init(_ script: [Step]) {
        self.script = script
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        listen(fd, 16)
        var bound = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        withUnsafeMutablePointer(to: &bound) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { _ = getsockname(fd, $0, &length) }
        }
        listener = fd
        port = Int(UInt16(bigEndian: bound.sin_port))
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    /// A port with nothing listening: connection refused.
    static func closedPort() -> Int {
        let stub = LoopbackStub([])
        let port = stub.port
        stub.stop()
        return port
    }

    func stop() {
        stopped.store(true, ordering: .relaxed)
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    deinit { if !stopped.load(ordering: .relaxed) { stop() } }

    private func serve() {
        var index = 0
        var open: [Int32] = []
        while !stopped.load(ordering: .relaxed) {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { break }
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let head = readHead(connection)
            received.withLock { $0.append(head.split(separator: "\r\n").first.map(String.init) ?? "") }
            let step = script.isEmpty ? .respond(200, body: "{}") : script[min(index, script.count - 1)]
            index += 1
            switch step {
            case .respond(let status, let headers, let body):
                var text = "HTTP/1.1 \(status) Status\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\nContent-Type: application/json\r\n"
                for (name, value) in headers { text += "\(name): \(value)\r\n" }
                write(connection, text + "\r\n" + body)
                close(connection)
            case .stall:
                open.append(connection)
            case .truncated(let declared, let body):
                write(connection, "HTTP/1.1 200 OK\r\nContent-Length: \(declared)\r\nContent-Type: application/json\r\n\r\n" + body)
                close(connection)
            case .oversized(let bytes):
                write(connection, "HTTP/1.1 200 OK\r\nContent-Length: \(bytes)\r\nContent-Type: application/json\r\n\r\n")
                let chunk = [UInt8](repeating: 0x20, count: 65536)
                var sent = 0
                while sent < bytes {
                    let n = chunk.withUnsafeBytes { send(connection, $0.baseAddress, min(chunk.count, bytes - sent), Int32(MSG_NOSIGNAL)) }
                    if n <= 0 { break }
                    sent += n
                }
                close(connection)
            }
        }
        for connection in open { close(connection) }
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

    private func write(_ connection: Int32, _ text: String) {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            sent += n
        }
    }
}
