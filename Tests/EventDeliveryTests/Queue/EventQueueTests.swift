import Foundation
import TestSupport
import Testing
@testable import EventDelivery
import Tracking

@Suite("Durable event queue")
struct EventQueueTests {
    @Test("append fills id, time, uid and session; peek is oldest first; sent events leave")
    func appendPeekRemove() async throws {
        let queue = try EventQueue(path: Temp.path())
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let stored = try await queue.append((0..<5).map(click), now: now)
        #expect(Set(stored.compactMap(\.eventID)).count == 5 && stored.allSatisfy { $0.timestamp == 1_800_000_000_000 })
        #expect(Set(stored.compactMap(\.uid)).count == 1 && Set(stored.compactMap(\.sid)).count == 1)
        let batch = try await queue.peek(limit: 3)
        #expect(batch.map(\.event) == Array(stored.prefix(3)))
        try await queue.markSent(batch.map(\.sequence))
        #expect(try await queue.peek(limit: 10).map(\.event) == Array(stored.suffix(2)))
        let counters = try await queue.counters()
        #expect(counters.accepted == 5 && counters.sent == 3 && counters.queued == 2)
    }

    @Test("the cap drops exactly the excess, oldest first, and counts it")
    func cap() async throws {
        let queue = try EventQueue(path: Temp.path(), capacity: 10)
        var all: [TrackingEvent] = []
        for index in 0..<25 { all.append(try await queue.append(click(index), now: Date())) }
        #expect(try await queue.peek(limit: 100).map(\.event) == Array(all.suffix(10)))
        let counters = try await queue.counters()
        #expect(counters.droppedQueueFull == 15 && counters.queued == 10 && counters.accepted == 25)
    }

    @Test("events, counters and identity survive reopening (a crash between calls loses nothing)")
    func reopen() async throws {
        let path = Temp.path()
        let first = try EventQueue(path: path)
        let stored = try await first.append([click(1), click(2)], now: Date())
        try await first.markRetried([try await first.peek(limit: 1)[0].sequence])
        let uid = try await first.identity(now: Date()).uid
        let second = try EventQueue(path: path)
        #expect(try await second.peek(limit: 10).map(\.event) == stored)
        #expect(try await second.peek(limit: 1)[0].attempts == 1)
        #expect(try await second.counters().retried == 1)
        #expect(try await second.identity(now: Date()).uid == uid)
    }

    @Test("sessions: kept within 30 idle minutes (sliding), renewed after, and at UTC midnight; uid never changes")
    func sessions() async throws {
        let queue = try EventQueue(path: Temp.path())
        let start = Date(timeIntervalSince1970: 1_800_000_000)  // 2027-01-15 08:00 UTC
        let first = try await queue.identity(now: start)
        #expect(try await queue.identity(now: start.addingTimeInterval(29 * 60)).sid == first.sid)
        #expect(try await queue.identity(now: start.addingTimeInterval(58 * 60)).sid == first.sid)  // sliding: 29 min after the last
        let renewed = try await queue.identity(now: start.addingTimeInterval(58 * 60 + 31 * 60))
        #expect(renewed.sid != first.sid && renewed.uid == first.uid)
        let beforeMidnight = Date(timeIntervalSince1970: 1_800_057_540)  // 23:59 UTC
        let a = try await queue.identity(now: beforeMidnight)
        let b = try await queue.identity(now: beforeMidnight.addingTimeInterval(120))
        #expect(a.sid != b.sid)
    }

    @Test("an unusable location is a typed storage error, never a crash")
    func unwritable() async throws {
        let file = Temp.path("plain-file")
        FileManager.default.createFile(atPath: file, contents: Data("x".utf8))
        #expect(throws: TrackingError.self) { try EventQueue(path: file + "/queue.sqlite") }
        // Not a database at all.
        let garbage = Temp.path("garbage.sqlite")
        FileManager.default.createFile(atPath: garbage, contents: Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31) }))
        #expect(throws: TrackingError.self) { try EventQueue(path: garbage) }
    }

    @Test("a full queue location: appends fail with a typed error naming the path; what was queued stays")
    func full() async throws {
        let path = Temp.path()
        let queue = try EventQueue(path: path, maxBytes: 64 * 1024)
        var failure: TrackingError?
        var appended = 0
        for index in 0..<10_000 {
            var event = click(index)
            event.json = "\"" + String(repeating: "x", count: 400) + "\""
            do { _ = try await queue.append(event, now: Date()); appended += 1 } catch { failure = error; break }
        }
        guard case .storage(let failedPath, let reason)? = failure else { Issue.record("no storage error after \(appended)"); return }
        #expect(failedPath == path && reason.contains("full"))
        #expect(try await queue.count() == appended)
    }
}
