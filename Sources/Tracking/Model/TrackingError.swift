/// Everything that can go wrong in Tracking, each naming what to fix.
///
/// ```swift
/// do { try await tracker.track(event) }
/// catch .invalidEvent(let field, let rule) { print("\(field): \(rule)") }
/// ```
public enum TrackingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The event breaks a documented rule; it was not queued.
    case invalidEvent(field: String, rule: String)
    /// The queue (or collector) database cannot be used: unwritable, full, corrupt.
    case storage(path: String, reason: String)
    /// A configuration value is out of range.
    case invalidConfiguration(String)

    public var description: String {
        switch self {
        case .invalidEvent(let field, let rule): "invalid event: \(field): \(rule)"
        case .storage(let path, let reason): "event store \(path): \(reason)"
        case .invalidConfiguration(let reason): "invalid tracker configuration: \(reason)"
        }
    }
}
