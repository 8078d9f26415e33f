import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// A loopback HTTP server that answers every request with the same image
/// bytes (`LoopbackStub` sends text bodies only): the remote host an
/// `im_url` names, in the remote-fetch tests.
final class ImageHost: @unchecked Sendable {
    let port: Int
    private let listener: Int32
    private let bytes: [UInt8]
    private let counts = Mutex(0)
    private let stopped = Atomic<Bool>(false)

    /// Connections accepted so far.
    var connections: Int { counts.withLock { $0 } }
    /// `127.0.0.1:PORT`, for an allowed-hosts list.
    var hostAndPort: String { "127.0.0.1:\(port)" }

    /// Listens on 127.0.0.1 at once; every request gets `bytes` as `image/jpeg`.
    init(serving bytes: [UInt8]) {
        self.bytes = bytes
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
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
        Thread.detachNewThread { [self] in serve() }
    }

    /// `http://127.0.0.1:PORT` + `path`.
    func url(_ path: String) -> String { "http://127.0.0.1:\(port)\(path)" }

    /// Stops listening (idempotent).
    func stop() {
        guard !stopped.exchange(true, ordering: .acquiringAndReleasing) else { return }
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
    }

    deinit { stop() }

    private func serve() {
        while !stopped.load(ordering: .relaxed) {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            counts.withLock { $0 += 1 }
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            // Read the request head (a GET: no body), then answer and close.
            var head: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !head.suffix(4).elementsEqual([13, 10, 13, 10]) {
                let n = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
                if n <= 0 { break }
                head += buffer[0..<n]
            }
            let answer = Array("HTTP/1.1 200 OK\r\nContent-Type: image/jpeg\r\nContent-Length: \(bytes.count)\r\nConnection: close\r\n\r\n".utf8) + bytes
            var sent = 0
            while sent < answer.count {
                let n = answer[sent...].withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if n <= 0 { break }
                sent += n
            }
            close(connection)
        }
    }
}
