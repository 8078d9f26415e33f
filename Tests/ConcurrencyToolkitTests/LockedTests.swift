import Dispatch
import ConcurrencyToolkit
import Testing

/// `Locked`: the value is reached only under the lock, whatever the threads.
@Suite("Locked")
struct LockedTests {
    @Test("increments from many threads at once are none of them lost")
    func contendedIncrements() {
        let counter = Locked(0)
        let threads = 8, increments = 20_000
        DispatchQueue.concurrentPerform(iterations: threads) { _ in
            for _ in 0..<increments { counter.withLock { $0 += 1 } }
        }
        #expect(counter.withLock { $0 } == threads * increments)
    }

    @Test("a read-modify-write of a collection under contention keeps every element")
    func contendedCollection() {
        let seen = Locked([Int: Int]())
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for item in 0..<5_000 { seen.withLock { $0[thread * 10_000 + item, default: 0] += 1 } }
        }
        let values = seen.withLock { $0 }
        #expect(values.count == 20_000 && values.values.allSatisfy { $0 == 1 })
    }

    @Test("the body's result and its typed error come back out; the lock is released after a throw")
    func resultsAndErrors() {
        enum Refusal: Error { case refused }
        let value = Locked("a")
        #expect(value.withLock { $0 += "b"; return $0.count } == 2)
        #expect(throws: Refusal.refused) {
            try value.withLock { (_: inout String) throws(Refusal) in throw Refusal.refused }
        }
        #expect(value.withLock { $0 } == "ab")  // not deadlocked: the throw unlocked
    }
}
