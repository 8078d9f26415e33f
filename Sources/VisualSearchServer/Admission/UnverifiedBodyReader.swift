import Foundation
import Hummingbird
import NIOCore
import ConcurrencyToolkit

/// Reads the body of a request whose credentials are not known yet, for
/// admission (``UnverifiedBodyLimits``): the body is collected up to the
/// body limit while a watchdog on the ``ElapsedClock`` checks that it keeps
/// coming — ``UnverifiedBodyLimits/grace`` plus a second per
/// ``UnverifiedBodyLimits/minRate`` bytes, never more than the request timeout.
/// A body behind that is abandoned (the reading task is cancelled) and the
/// request fails with ``Failure/stalled(received:)``.
struct UnverifiedBodyReader: Sendable {
    /// Why the body could not be read.
    enum Failure: Error, Equatable {
        /// It fell behind the minimum rate with this many bytes received.
        case stalled(received: Int)
        /// It passed the body limit.
        case tooLarge(limit: Int)
        /// The connection failed or closed mid-body.
        case broken(String)
    }

    let limits: UnverifiedBodyLimits
    let clock: ElapsedClock
    /// The request timeout, in seconds: the longest a body may take, however fast it comes.
    let timeout: Double
    /// Told the bytes received so far after each chunk (an observation hook: tests wait on it, never on time).
    var observer: (@Sendable (_ received: Int) -> Void)? = nil

    /// Bytes received so far, shared by the reader and its watchdog.
    final class Progress: Sendable {
        let bytes = Locked(0)
    }

    /// The whole body, at most `limit` bytes.
    func read(_ body: RequestBody, upTo limit: Int) async throws(Failure) -> ByteBuffer {
        let progress = Progress()
        let start = clock.now
        let limits = self.limits, clock = self.clock, timeout = self.timeout, observer = self.observer
        do {
            return try await withThrowingTaskGroup(of: ByteBuffer.self) { group in
                group.addTask {
                    var collected = ByteBuffer()
                    for try await chunk in body {
                        guard collected.readableBytes + chunk.readableBytes <= limit else { throw Failure.tooLarge(limit: limit) }
                        var chunk = chunk
                        collected.writeBuffer(&chunk)
                        let count = collected.readableBytes
                        progress.bytes.withLock { $0 = count }
                        observer?(count)
                    }
                    return collected
                }
                group.addTask {
                    // Sleeps until the time the bytes so far allow; awake, asks again with the bytes received meanwhile.
                    while true {
                        let received = progress.bytes.withLock { $0 }
                        let deadline = start + limits.allowance(received: received, cap: timeout)
                        if clock.now >= deadline { throw Failure.stalled(received: received) }
                        try await clock.sleep(until: deadline)
                    }
                }
                defer { group.cancelAll() }
                guard let body = try await group.next() else { throw Failure.broken("no body") }
                return body
            }
        } catch let failure as Failure {
            throw failure
        } catch {
            throw .broken("\(error)")
        }
    }
}
