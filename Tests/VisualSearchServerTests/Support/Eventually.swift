import Foundation

/// Polls `condition` every few milliseconds until it holds, for up to `limit`:
/// for a state the server reaches on its own threads (a request holding its
/// slot, waiting in a queue, a connection counted). The limit is a bound for
/// a slow or loaded machine, not a measurement: a test that waits here asserts
/// what happened, never how fast.
func eventually(within limit: Duration = .seconds(60), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + limit
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}
