import ConcurrencyToolkit
import Dispatch
import Testing

/// `Observed`: a wait for a state another thread reaches ends when that
/// thread changes the value — not on a timer — and a cancelled wait ends too.
@Suite("Observed", .timeLimit(.minutes(1)))
struct ObservedTests {
    @Test("a condition that holds already returns at once; reads do not count as changes")
    func holdsNow() async {
        let value = Observed(3)
        #expect(await value.until { value.read { $0 } == 3 })
        #expect(value.read { $0 } == 3)
    }

    @Test("a waiter wakes when another thread makes its condition hold, after changes that did not")
    func wakesOnTheChange() async {
        let value = Observed(0)
        let started = Observed(false)
        let waiting = Task { await value.until { value.read { $0 } == 3 } }
        // Changes from plain threads, each a wake-up; only the third makes the condition hold.
        DispatchQueue.global().async {
            for _ in 0..<3 { value.withLock { $0 += 1 } }
            started.withLock { $0 = true }
        }
        #expect(await waiting.value)
        #expect(await started.until { started.read { $0 } })
        #expect(value.read { $0 } == 3)
    }

    @Test("many waiters on many conditions each wake once theirs holds; none is lost while values race in")
    func manyWaiters() async {
        let value = Observed(0)
        await withTaskGroup(of: Bool.self) { group in
            for target in stride(from: 100, through: 1_000, by: 100) {
                group.addTask { await value.until { value.read { $0 } >= target } }
            }
            DispatchQueue.concurrentPerform(iterations: 4) { _ in
                for _ in 0..<250 { value.withLock { $0 += 1 } }
            }
            var woken = 0
            for await reached in group where reached { woken += 1 }
            #expect(woken == 10)
        }
    }

    @Test("a wait whose task is cancelled returns false (the condition checked a last time)")
    func cancelled() async {
        let value = Observed(0)
        let waiting = Task { await value.until { value.read { $0 } == 1 } }
        waiting.cancel()
        #expect(await waiting.value == false)
        value.withLock { $0 = 1 }
    }
}
