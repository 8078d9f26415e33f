import Testing

/// The stores a conformance check can run on.
public enum StoreKind: String, Sendable, Hashable, CaseIterable {
    case sqlite = "SQLite"
    case postgreSQL = "PostgreSQL"
    case inMemory = "in memory"
}

/// One check of a store role's contract (`CatalogReaderConformance.checks`,
/// …): a name, the stores it applies to (the collector's checks only to the
/// databases), and its body, given the store to run on.
///
/// The contracts live here, once; each store's test target runs them on its
/// store (`SQLiteConformanceTests`, `PostgreSQLConformanceTests`, and the
/// in-memory store's in SearchEngineTests), so a store joins by adding one
/// suite of its own and nothing else changes.
public struct ConformanceCheck: Sendable, CustomTestStringConvertible {
    public let name: String
    public let stores: Set<StoreKind>
    let body: @Sendable (StoreKind) async throws -> Void

    public init(_ name: String, stores: Set<StoreKind>, _ body: @escaping @Sendable (StoreKind) async throws -> Void) {
        self.name = name
        self.stores = stores
        self.body = body
    }

    /// A check of one case of a list: its name says which.
    public init(_ name: String, case value: some Sendable, stores: Set<StoreKind>, _ body: @escaping @Sendable (StoreKind) async throws -> Void) {
        let described = (value as? any CustomTestStringConvertible)?.testDescription ?? String(describing: value)
        self.init("\(name) — \(described)", stores: stores, body)
    }

    public var testDescription: String { name }

    /// Runs the check on a fresh store of `kind`.
    public func run(on kind: StoreKind) async throws {
        try await body(kind)
    }
}

extension Array where Element == ConformanceCheck {
    /// The checks that apply to `kind`.
    public func applying(to kind: StoreKind) -> [ConformanceCheck] {
        filter { $0.stores.contains(kind) }
    }
}
