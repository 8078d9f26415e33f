import Foundation
import Networking
import ConcurrencyToolkit

/// Records the backoff waits a client asks for instead of sleeping, so retry
/// tests run instantly and can assert each wait.
final class RecordedWaits: Sendable {
    private let waits = Locked<[Double]>([])

    /// The waits asked for, in order.
    var recorded: [Double] { waits.withLock { $0 } }

    /// A sleep closure for ``HTTPClient/init(transport:retry:sleep:)`` that records and returns at once.
    var sleep: @Sendable (Double) async throws -> Void {
        { [self] seconds in
            self.waits.withLock { $0.append(seconds) }
            try Task.checkCancellation()
        }
    }
}

/// The outcome of a call that throws ``HTTPClientError``, as a value to compare.
func outcome<T>(_ body: () async throws(HTTPClientError) -> T) async -> Result<T, HTTPClientError> {
    do { return .success(try await body()) } catch { return .failure(error) }
}

extension Result {
    /// The failure, or nil on success.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

/// Seconds `body` took.
func seconds<T>(_ body: () async -> T) async -> (T, Double) {
    let start = ContinuousClock.now
    let value = await body()
    let elapsed = start.duration(to: .now)
    return (value, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
}

/// The same as `HTTPClientError.reason`-style access for the cases that carry one.
extension HTTPClientError {
    var reason: String? {
        switch self {
        case .transport(_, let reason), .destinationRefused(_, let reason): reason
        default: nil
        }
    }
}
