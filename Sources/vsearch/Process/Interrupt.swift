import Foundation
import Synchronization

/// SIGINT/SIGTERM handling for long jobs: the first signal asks the job to
/// stop after the work in progress (so no file is left half-written); a
/// second one exits at once.
enum Interrupt {
    private static let requested = Atomic<Bool>(false)

    /// Whether a stop was requested.
    static var isRequested: Bool { requested.load(ordering: .relaxed) }

    /// Installs the handlers. Safe to call more than once. Call it before
    /// starting worker threads: it also unblocks the two signals, since a
    /// parent may have started vsearch with them blocked (threads inherit the mask).
    static func install() {
        unblockSignals()
        for signalNumber in [SIGINT, SIGTERM] {
            signal(signalNumber) { number in
                if Interrupt.requested.exchange(true, ordering: .relaxed) {
                    _exit(128 + number)  // second signal: leave now
                }
            }
        }
    }

    /// Unblocks SIGINT and SIGTERM in this thread (and the threads it starts
    /// afterwards) — for commands whose signals another component handles.
    static func unblockSignals() {
        var set = sigset_t()
        sigemptyset(&set)
        sigaddset(&set, SIGINT)
        sigaddset(&set, SIGTERM)
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
    }
}
