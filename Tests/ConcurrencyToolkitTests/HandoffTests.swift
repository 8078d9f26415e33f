import ConcurrencyToolkit
import Testing

/// `Handoff`: a value from another thread reaches the waiting task once —
/// the first racer wins, one that comes before the wait is kept for it.
@Suite("Handoff")
struct HandoffTests {
    @Test("the first of several racers wins; the others are told they lost")
    func firstWins() async {
        let handoff = Handoff<Int>()
        let outcomes = Locked<[Bool]>([])
        let value = await handoff.value {
            for racer in 1...4 {
                OwnThread.start(named: "handoff-\(racer)") {
                    let won = handoff.resume(racer)
                    outcomes.withLock { $0.append(won) }
                }
            }
        }
        #expect((1...4).contains(value))
        // A racer that comes after the value was taken loses too.
        #expect(!handoff.resume(99))
        #expect(await handoff.value {} == value, "the value stays the winner's")
        let finished = outcomes.withLock { $0 }
        #expect(finished.filter { $0 }.count <= 1, "\(finished)")
    }

    @Test("a value resumed before anyone waits is kept for the wait")
    func earlyValue() async {
        let handoff = Handoff<String>()
        #expect(handoff.resume("early"))
        #expect(await handoff.value {} == "early")
    }
}
