import ConcurrencyToolkit

/// A continuation resumed exactly once by whichever of several racers comes
/// first; a result that arrives before the continuation is installed waits for it.
final class OneShot<Value: Sendable>: Sendable {
    private enum State {
        case waiting
        case installed(CheckedContinuation<Value, Never>)
        case early(Value)
        case done
    }

    private let state = Locked<State>(.waiting)

    init() {}

    func install(_ continuation: CheckedContinuation<Value, Never>) {
        let early: Value? = state.withLock { state in
            switch state {
            case .waiting:
                state = .installed(continuation)
                return nil
            case .early(let value):
                state = .done
                return value
            case .installed, .done:
                return nil
            }
        }
        if let early { continuation.resume(returning: early) }
    }

    /// Resumes with `value` unless something already did; returns whether this call won.
    @discardableResult
    func resume(_ value: Value) -> Bool {
        let continuation: CheckedContinuation<Value, Never>?? = state.withLock { state in
            switch state {
            case .waiting:
                state = .early(value)
                return .some(nil)
            case .installed(let continuation):
                state = .done
                return .some(continuation)
            case .early, .done:
                return nil
            }
        }
        guard let won = continuation else { return false }
        won?.resume(returning: value)
        return true
    }
}
