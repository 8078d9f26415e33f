import Clocks
import ConcurrencyToolkit
import Testing

/// `WaitQueue`: at most its capacity of waiters, oldest first, each with a
/// deadline fixed when its ticket was taken; taken out by ticket, by
/// position or from the front.
@Suite("WaitQueue")
struct WaitQueueTests {
    @Test("it holds at most its capacity; a refused waiter leaves the queue as it was")
    func bounded() {
        var queue = WaitQueue<String>(capacity: 2, maxWait: .seconds(5))
        #expect(queue.isEmpty && !queue.isFull)
        for name in ["a", "b"] {
            let ticket = queue.ticket(now: .zero)
            let joined = queue.append(name, with: ticket)
            #expect(joined)
        }
        #expect(queue.isFull)
        let refused = queue.ticket(now: .zero)
        let joined = queue.append("c", with: refused)
        #expect(!joined)
        #expect(Array(queue) == ["a", "b"])
        #expect(!queue.contains(refused))
    }

    @Test("a queue of capacity 0 holds no one (a negative capacity is 0)")
    func none() {
        var queue = WaitQueue<Int>(capacity: -3, maxWait: .seconds(1))
        #expect(queue.capacity == 0 && queue.isFull)
        let ticket = queue.ticket(now: .zero)
        let joined = queue.append(1, with: ticket)
        #expect(!joined)
        #expect(queue.isEmpty)
    }

    @Test("a ticket's deadline is maxWait after the moment it was taken; every ticket is another")
    func tickets() {
        var queue = WaitQueue<Int>(capacity: 8, maxWait: .milliseconds(2500))
        let first = queue.ticket(now: .seconds(10))
        let second = queue.ticket(now: .seconds(10))
        #expect(first.deadline == .milliseconds(12_500))
        #expect(second.deadline == first.deadline)
        #expect(first != second)
    }

    @Test("waiters leave oldest first, by position, or by their ticket — once")
    func removal() {
        var queue = WaitQueue<String>(capacity: 8, maxWait: .seconds(1))
        let tickets = ["a", "b", "c", "d"].map { name in
            let ticket = queue.ticket(now: .zero)
            queue.append(name, with: ticket)
            return ticket
        }
        let third = queue.remove(tickets[2])
        let thirdAgain = queue.remove(tickets[2])
        #expect(third == "c")
        #expect(thirdAgain == nil, "a waiter taken out is not taken out again")
        #expect(!queue.contains(tickets[2]) && queue.contains(tickets[3]))
        let oldest = queue.removeFirst()
        #expect(oldest == "a")
        #expect(Array(queue) == ["b", "d"])
        let second = queue.remove(at: 1)
        let last = queue.removeFirst()
        let none = queue.removeFirst()
        #expect(second == "d" && last == "b" && none == nil)
        #expect(!queue.isFull, "room again once waiters left")
    }

    @Test("a deadline armed at a ticket takes its waiter out when the clock reaches it, and only then")
    func deadline() async {
        let clock = TestClock()
        let elapsed = ElapsedClock(clock)
        let state = Observed(WaitQueue<String>(capacity: 4, maxWait: .seconds(3)))
        let now = elapsed.now
        let ticket = state.withLock { $0.ticket(now: now) }
        state.withLock { _ = $0.append("late", with: ticket) }
        let shed = Locked<String?>(nil)
        let deadline = WaitDeadline(at: ticket.deadline, on: elapsed) {
            let waiter = state.withLock { $0.remove(ticket) }
            shed.withLock { $0 = waiter }
        }
        defer { deadline.cancel() }
        await clock.advance(by: .seconds(2))
        #expect(state.read { $0.contains(ticket) })
        await clock.advance(by: .seconds(1))
        #expect(await state.until { state.read { $0.isEmpty } })
        #expect(shed.withLock { $0 } == "late")
    }
}
