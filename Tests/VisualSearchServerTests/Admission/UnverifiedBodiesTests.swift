import Foundation
import Hummingbird
import NIOCore
import ConcurrencyToolkit
import TestSupport
import Testing
@testable import VisualSearchServer

/// Issue 37, item 1, in pieces: the allowance bodies without a credential in
/// the head are read under, and the reader that lets such a body go once it
/// stops arriving. Time is a ``SteppedClock``: nothing waits on the wall clock.
@Suite("Unverified bodies", .timeLimit(.minutes(10)))
struct UnverifiedBodiesTests {
    @Test("the allowance: a few per address (429), a few in all (503); a place given back is taken again")
    func allowance() {
        let places = UnverifiedBodies(limits: UnverifiedBodyLimits(maxInFlight: 3, maxPerClient: 2))
        #expect(places.take(for: "10.0.0.1") == nil)
        #expect(places.take(for: "10.0.0.1") == nil)
        #expect(places.take(for: "10.0.0.1") == .client(limit: 2))
        #expect(places.take(for: "10.0.0.2") == nil)
        #expect(places.take(for: "10.0.0.3") == .full(limit: 3))
        #expect(places.inFlight == 3)
        places.release(for: "10.0.0.1")
        #expect(places.take(for: "10.0.0.3") == nil)
        #expect(places.inFlight == 3)
    }

    @Test("the time a body is given: the grace plus a second per minimum rate of bytes, never past the request timeout")
    func allowanceOfTime() {
        let limits = UnverifiedBodyLimits(grace: 2, minRate: 1000)
        #expect(limits.allowance(received: 0, cap: 30) == .seconds(2))
        #expect(limits.allowance(received: 3000, cap: 30) == .seconds(5))
        #expect(limits.allowance(received: 1 << 30, cap: 30) == .seconds(30))
    }

    final class Finished: Sendable {
        let value = Locked(false)
    }

    /// A body whose chunks the test sends, then leaves open.
    static func body() -> (RequestBody, AsyncStream<ByteBuffer>.Continuation) {
        let (stream, continuation) = AsyncStream<ByteBuffer>.makeStream()
        return (RequestBody(asyncSequence: stream), continuation)
    }

    @Test("a body that stops arriving is let go once its time is up on the admission clock, not before")
    func stalledBody() async throws {
        let clock = SteppedClock()
        let received = Observed(0)
        var reader = UnverifiedBodyReader(limits: UnverifiedBodyLimits(grace: 2, minRate: 1000), clock: ElapsedClock(clock), timeout: 30)
        reader.observer = { bytes in received.withLock { $0 = bytes } }
        let (body, sender) = Self.body()
        sender.yield(ByteBuffer(bytes: [UInt8](repeating: 1, count: 1000)))  // earns a second: 3 s in all
        let finished = Finished()
        let reading = Task { () -> UnverifiedBodyReader.Failure? in
            defer { finished.value.withLock { $0 = true } }
            do throws(UnverifiedBodyReader.Failure) { _ = try await reader.read(body, upTo: 1 << 20); return nil } catch { return error }
        }
        #expect(await received.until { received.read { $0 } == 1000 }, "the first chunk was never read")
        clock.step(by: .milliseconds(2900))
        // The watchdog, awake at 2.9 s (or not asleep yet), sleeps until the 3 s its bytes allow.
        #expect(await clock.until { $0.sleeps(until: .seconds(3)) }, "the watchdog never slept until 3 s")
        #expect(finished.value.withLock { $0 } == false, "let go before its 3 s")
        clock.step(by: .milliseconds(200))
        #expect(await reading.value == .stalled(received: 1000))
        sender.finish()
    }

    @Test("a body that keeps arriving is read whole, however long it takes in all; one over the limit is refused")
    func steadyBody() async throws {
        let clock = SteppedClock()
        let reader = UnverifiedBodyReader(limits: UnverifiedBodyLimits(grace: 2, minRate: 1000), clock: ElapsedClock(clock), timeout: 30)
        let (body, sender) = Self.body()
        let reading = Task { try await reader.read(body, upTo: 1 << 20) }
        for _ in 0..<10 {  // 1000 bytes a second for 10 s
            sender.yield(ByteBuffer(bytes: [UInt8](repeating: 2, count: 1000)))
            try await Task.sleep(for: .milliseconds(10))
            clock.step(by: .seconds(1))
        }
        sender.finish()
        #expect(try await reading.value.readableBytes == 10_000)

        let (large, more) = Self.body()
        more.yield(ByteBuffer(bytes: [UInt8](repeating: 3, count: 600)))
        more.yield(ByteBuffer(bytes: [UInt8](repeating: 3, count: 600)))
        more.finish()
        do throws(UnverifiedBodyReader.Failure) {
            _ = try await reader.read(large, upTo: 1000)
            Issue.record("a body over the limit was read")
        } catch {
            #expect(error == .tooLarge(limit: 1000))
        }
    }
}
