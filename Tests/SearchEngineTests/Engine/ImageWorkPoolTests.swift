import Foundation
import ImageOps
import ConcurrencyToolkit
import Testing
import VisualSearch
@testable import SearchEngine
import TestSupport

/// The image work pool: work runs off the cooperative pool, within the
/// decoded-pixel budget, first come first served (clients taking turns), and a full queue or a long
/// wait is refused as `overloaded` rather than waited out.
@Suite("Image work pool", .timeLimit(.minutes(10)))
struct ImageWorkPoolTests {
    /// The clock of every pool here but the deadline's own test: it never moves, so no job's wait (10 s by default)
    /// runs out however slowly the machine goes. On the real clock, under AddressSanitizer with the whole suite
    /// running, a queued job expired before the next one joined, and "clients take turns" waited for a count of
    /// waiting jobs it could no longer reach.
    static var stillClock: ElapsedClock { ElapsedClock(SteppedClock()) }

    /// A gate the test opens; work blocks on it (on the pool's thread, never on Swift's).
    final class Gate: Sendable {
        let condition = NSCondition()
        let opened = Locked(false)
        func wait() {
            condition.lock()
            while !opened.withLock({ $0 }) { condition.wait() }
            condition.unlock()
        }
        func open() {
            condition.lock()
            opened.withLock { $0 = true }
            condition.broadcast()
            condition.unlock()
        }
    }

    final class Recorder: Sendable {
        let items = Locked<[String]>([])
        func append(_ item: String) { items.withLock { $0.append(item) } }
    }

    /// The kernel's name of the calling thread (Linux).
    static func threadName() -> String {
        ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The calling thread's nice value, field 19 of /proc/thread-self/stat (Linux).
    static func threadNice() -> Int? {
        guard let stat = try? String(contentsOfFile: "/proc/thread-self/stat", encoding: .utf8),
              let end = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        return fields.count > 16 ? Int(fields[16]) : nil  // fields[0] is field 3 (state)
    }

    @Test("work runs on the pool's own threads and returns its value; its error comes back as .image")
    func runsOffThePool() async throws {
        let pool = ImageWorkPool(limits: .init(workers: 1), clock: Self.stillClock)
        let name = try await pool.run(pixels: 10) { () throws(ImageOpsError) in Self.threadName() }
        #expect(name == "vsearch-image-0")
        // Below request handling: the kernel's nice value of the worker thread is the pool's.
        let nice = try await pool.run(pixels: 10) { () throws(ImageOpsError) in Self.threadNice() }
        #expect(nice == 10)
        await #expect(throws: VisualSearchError.image(.emptyInput(source: "x"))) {
            try await pool.run(pixels: 10) { () throws(ImageOpsError) -> Int in throw .emptyInput(source: "x") }
        }
        #expect(pool.statistics.completed == 3 && pool.statistics.pixelsDecoded == 30)
    }

    @Test("two jobs of 60 % of the budget each run one after the other, though two workers are free")
    func pixelBudget() async throws {
        let pool = ImageWorkPool(limits: .init(workers: 2, pixelBudget: 100), clock: Self.stillClock)
        let gate = Gate()
        let first = Task { try await pool.run(pixels: 60) { () throws(ImageOpsError) in gate.wait() } }
        #expect(await pool.until { pool.statistics.running == 1 })
        let second = Task { try await pool.run(pixels: 60) { () throws(ImageOpsError) in } }
        #expect(await pool.until { pool.statistics.queued == 1 })
        #expect(pool.statistics.running == 1 && pool.statistics.pixelsInFlight == 60)
        gate.open()
        try await first.value
        try await second.value
        #expect(pool.statistics.completed == 2 && pool.statistics.pixelsInFlight == 0 && pool.statistics.running == 0)
    }

    @Test("a job larger than the whole budget runs alone rather than never")
    func oversizedJobRunsAlone() async throws {
        let pool = ImageWorkPool(limits: .init(workers: 2, pixelBudget: 100), clock: Self.stillClock)
        let value = try await pool.run(pixels: 1_000) { () throws(ImageOpsError) in 7 }
        #expect(value == 7 && pool.statistics.pixelsDecoded == 100)  // charged the whole budget
    }

    @Test("beyond the queue bound: refused at once as overloaded with a Retry-After")
    func queueBound() async throws {
        let pool = ImageWorkPool(limits: .init(workers: 1, maxQueued: 1, maxWait: .seconds(30)), clock: Self.stillClock)
        let gate = Gate()
        let running = Task { try await pool.run(pixels: 1) { () throws(ImageOpsError) in gate.wait() } }
        #expect(await pool.until { pool.statistics.running == 1 })
        let queued = Task { try await pool.run(pixels: 1) { () throws(ImageOpsError) in } }
        #expect(await pool.until { pool.statistics.queued == 1 })
        do {
            try await pool.run(pixels: 1) { () throws(ImageOpsError) in }
            Issue.record("a third job was accepted")
        } catch {
            guard case .overloaded(let reason, let retryAfter) = error else { Issue.record("\(error)"); return }
            #expect(reason == "1 images are already waiting to be decoded" && retryAfter == 15)
        }
        gate.open()
        try await running.value
        try await queued.value
        #expect(pool.statistics.refused == 1 && pool.statistics.completed == 2)
    }

    @Test("a job that waits longer than maxWait on the pool's clock is refused, not before; the running one is not disturbed")
    func waitTimeout() async throws {
        let clock = SteppedClock()
        let pool = ImageWorkPool(limits: .init(workers: 1, maxWait: .seconds(30)), clock: ElapsedClock(clock))
        let gate = Gate()
        let running = Task { try await pool.run(pixels: 1) { () throws(ImageOpsError) in gate.wait() } }
        #expect(await pool.until { pool.statistics.running == 1 })
        let waiting = Task { try await pool.run(pixels: 1) { () throws(ImageOpsError) in } }
        #expect(await clock.until { $0.sleeps(until: .seconds(30)) }, "the waiting job's deadline is on the pool's clock")
        clock.step(by: .seconds(29))
        #expect(pool.statistics.queued == 1 && pool.statistics.refused == 0, "not refused before its deadline")
        clock.step(by: .seconds(1))
        await #expect(throws: VisualSearchError.self) { try await waiting.value }
        gate.open()
        try await running.value
        #expect(pool.statistics.refused == 1 && pool.statistics.queued == 0)
    }

    @Test("first come, first served: a small job does not overtake a large one waiting for budget")
    func fifo() async throws {
        let pool = ImageWorkPool(limits: .init(workers: 2, pixelBudget: 100), clock: Self.stillClock)
        let gate = Gate()
        let order = Recorder()
        let blocker = Task { try await pool.run(pixels: 50) { () throws(ImageOpsError) in gate.wait() } }
        #expect(await pool.until { pool.statistics.running == 1 })
        let large = Task { try await pool.run(pixels: 80) { () throws(ImageOpsError) in order.append("large") } }
        #expect(await pool.until { pool.statistics.queued == 1 })
        let small = Task { try await pool.run(pixels: 10) { () throws(ImageOpsError) in order.append("small") } }
        #expect(await pool.until { pool.statistics.queued == 2 })
        gate.open()
        try await blocker.value
        try await large.value
        try await small.value
        #expect(order.items.withLock { $0 } == ["large", "small"])
    }

    /// The order in which `jobs` start on a one-worker pool when all of them queue, in this order, behind a running
    /// job (a nil client: no ``ImageWorkPool/client`` set).
    static func startOrder(of jobs: [(client: String?, name: String)]) async throws -> [String] {
        let pool = ImageWorkPool(limits: .init(workers: 1, pixelBudget: 100), clock: Self.stillClock)
        let gate = Gate()
        let order = Recorder()
        let blocker = Task { try await pool.run(pixels: 1) { () throws(ImageOpsError) in gate.wait() } }
        #expect(await pool.until { pool.statistics.running == 1 })
        var tasks: [Task<Void, any Error>] = []
        for (client, name) in jobs {
            tasks.append(Task {
                let job = { try await pool.run(pixels: 1) { () throws(ImageOpsError) in order.append(name) } }
                if let client { try await ImageWorkPool.$client.withValue(client) { try await job() } } else { try await job() }
            })
            let queued = tasks.count
            #expect(await pool.until { pool.statistics.queued == queued })
        }
        gate.open()
        try await blocker.value
        for task in tasks { try await task.value }
        return order.items.withLock { $0 }
    }

    @Test("clients take turns: one job of a client arriving behind three of another starts second, not fourth")
    func clientsTakeTurns() async throws {
        let order = try await Self.startOrder(of: [("b", "b1"), ("b", "b2"), ("b", "b3"), ("a", "a1")])
        #expect(order == ["b1", "a1", "b2", "b3"])
    }

    @Test("one client (no key set): first come, first served")
    func oneClientIsFIFO() async throws {
        let order = try await Self.startOrder(of: [(nil, "1"), (nil, "2"), (nil, "3")])
        #expect(order == ["1", "2", "3"])
    }

    @Test("a waiting job whose task is cancelled leaves the queue")
    func cancellation() async throws {
        let pool = ImageWorkPool(limits: .init(workers: 1), clock: Self.stillClock)
        let gate = Gate()
        let running = Task { try await pool.run(pixels: 1) { () throws(ImageOpsError) in gate.wait() } }
        #expect(await pool.until { pool.statistics.running == 1 })
        let waiting = Task { try await pool.run(pixels: 1) { () throws(ImageOpsError) in } }
        #expect(await pool.until { pool.statistics.queued == 1 })
        waiting.cancel()
        let outcome = await waiting.result
        #expect(throws: VisualSearchError.self) { try outcome.get() }
        #expect(pool.statistics.queued == 0)
        gate.open()
        try await running.value
    }

    // MARK: - Reservations (issue 37: an insert's downloads held their bytes outside the budget)

    @Test("a reservation holds budget: a job that no longer fits waits until it is released; shrinking gives the rest back")
    func reservationHoldsBudget() async throws {
        let pool = ImageWorkPool(limits: .init(workers: 2, pixelBudget: 100), clock: Self.stillClock)
        let gate = Gate()
        let running = Task { try await pool.run(pixels: 10) { () throws(ImageOpsError) in gate.wait() } }
        #expect(await pool.until { pool.statistics.running == 1 })
        let reservation = try await pool.reserve(pixels: 70)
        #expect(pool.statistics.pixelsInFlight == 80 && pool.statistics.pixelsReserved == 70)
        let job = Task { try await pool.run(pixels: 30) { () throws(ImageOpsError) in } }
        #expect(await pool.until { pool.statistics.queued == 1 })  // 80 + 30 > 100: it waits
        reservation.shrink(to: 60)
        try await job.value  // 70 + 30 fits
        #expect(reservation.pixels == 60 && pool.statistics.pixelsReserved == 60)
        reservation.release()
        gate.open()
        try await running.value
        #expect(pool.statistics.pixelsInFlight == 0 && pool.statistics.pixelsReserved == 0)
    }

    @Test("reservations never hold back the jobs that end them: with the budget all reserved, a job still runs when no other does")
    func reservationsCannotDeadlock() async throws {
        let pool = ImageWorkPool(limits: .init(workers: 1, pixelBudget: 100), clock: Self.stillClock)
        let held = try await pool.reserve(pixels: 100)
        let value = try await pool.run(pixels: 50) { () throws(ImageOpsError) in 5 }
        #expect(value == 5 && pool.statistics.pixelsReserved == 100)
        // A reservation that does not fit waits, and waits behind a waiting job: jobs come first.
        let gate = Gate()
        let running = Task { try await pool.run(pixels: 1) { () throws(ImageOpsError) in gate.wait() } }
        #expect(await pool.until { pool.statistics.running == 1 })
        let second = Task { try await pool.reserve(pixels: 10).release() }
        #expect(await pool.until { pool.statistics.reservationsWaiting == 1 })
        let job = Task { try await pool.run(pixels: 10) { () throws(ImageOpsError) in } }
        #expect(await pool.until { pool.statistics.queued == 1 })
        held.release()
        // 1 + 10 pixels would fit the budget now, but a job waits (for the worker): the reservation waits behind it.
        #expect(pool.statistics.reservationsWaiting == 1 && pool.statistics.pixelsInFlight == 1)
        gate.open()
        try await running.value
        try await job.value
        try await second.value
        #expect(pool.statistics.pixelsInFlight == 0 && pool.statistics.pixelsReserved == 0)
    }

    @Test("a reservation waiting for budget whose task is cancelled leaves the queue; one dropped gives its budget back")
    func reservationCancelled() async throws {
        let pool = ImageWorkPool(limits: .init(workers: 1, pixelBudget: 100), clock: Self.stillClock)
        var held: ImageWorkPool.Reservation? = try await pool.reserve(pixels: 90)
        let waiting = Task { _ = try await pool.reserve(pixels: 20) }
        #expect(await pool.until { pool.statistics.reservationsWaiting == 1 })
        waiting.cancel()
        await #expect(throws: VisualSearchError.self) { try await waiting.value }
        #expect(pool.statistics.reservationsWaiting == 0 && held?.pixels == 90)
        held = nil
        #expect(pool.statistics.pixelsInFlight == 0 && pool.statistics.pixelsReserved == 0)
    }
}
