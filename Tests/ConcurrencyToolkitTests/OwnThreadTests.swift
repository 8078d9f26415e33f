import ConcurrencyToolkit
import Foundation
import Testing

/// `OwnThread`: work that blocks runs on a thread started for it, named for
/// the kernel, and its value or typed error comes back to the awaiting task.
@Suite("OwnThread")
struct OwnThreadTests {
    struct Refused: Error, Equatable {
        let reason: String
    }

    /// The kernel's name of the calling thread (`/proc/thread-self/comm`).
    static func kernelName() -> String {
        ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test("run returns the body's value from a thread of its own, which the kernel knows by the given name")
    func runsOnANamedThread() async throws {
        let name = await OwnThread.run(named: "vsearch-test") { () -> String in Self.kernelName() }
        #expect(name == "vsearch-test")
        #expect(Self.kernelName() != "vsearch-test", "the awaiting thread keeps its own name")
    }

    @Test("run throws the body's own error, typed")
    func throwsTypedError() async {
        await #expect(throws: Refused(reason: "no")) {
            try await OwnThread.run(named: "vsearch-test") { () throws(Refused) -> Int in throw Refused(reason: "no") }
        }
    }

    @Test("many blocking bodies at once each get a thread: eight that wait for each other all finish")
    func blockingBodiesDoNotShareAThread() async {
        // Each body waits until all eight have started: on a pool of fewer threads than eight they could never finish.
        let started = Locked(0)
        let all = NSCondition()
        let finished = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    await OwnThread.run(named: "vsearch-test") { () -> Bool in
                        all.lock()
                        started.withLock { $0 += 1 }
                        all.broadcast()
                        let deadline = Date().addingTimeInterval(60)
                        while started.withLock({ $0 }) < 8 { if !all.wait(until: deadline) { break } }
                        all.unlock()
                        return started.withLock { $0 } == 8
                    }
                }
            }
            var count = 0
            for await done in group where done { count += 1 }
            return count
        }
        #expect(finished == 8)
    }

    @Test("start returns at once; the body runs on its named thread")
    func startsDetached() async {
        let name: String = await withCheckedContinuation { continuation in
            OwnThread.start(named: "vsearch-start") { continuation.resume(returning: Self.kernelName()) }
        }
        #expect(name == "vsearch-start")
    }
}
