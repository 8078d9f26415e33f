import Foundation
import SearchEngine
import Testing
import Tracking
import VisualSearch
import SQLiteCatalog
import PostgreSQLCatalog

/// A store under test: a fresh, empty store at a new location, its
/// collector when it keeps events, and a way to open a second instance on
/// the same location — what "another process" sees. It is valid inside the
/// scope that opened it (``StoreFactory/withStore(_:)``): a database's
/// connection pool runs for that scope's length.
public struct StoreUnderTest: Sendable {
    public let store: any CatalogStore
    /// The same store's collector role; nil for a store that keeps no events (the in-memory one).
    public let collector: (any CollectorStore)?
    /// Where an engine on this store finds candidates (as `CatalogLocation` composes it).
    public let candidates: CandidateSource
    let another: @Sendable (_ body: (StoreUnderTest) async throws -> Void) async throws -> Void

    /// Runs `body` with a second instance on the same location, open for `body`'s length.
    public func withAnother<Result>(_ body: (StoreUnderTest) async throws -> Result) async throws -> Result {
        var result: Result?
        try await another { result = try await body($0) }
        return result!
    }

    /// An engine on the store: its catalog, journal and (when it has one) collector.
    public func engine(_ configuration: VisualSearchEngine.Configuration = VisualSearchEngine.Configuration()) async throws -> VisualSearchEngine {
        try await VisualSearchEngine(catalog: store, journal: store, candidates: candidates, engagement: collector, configuration: configuration)
    }
}

/// How tests get a fresh store of each kind: a ``ConformanceCheck`` opens the
/// store of the kind it is run on (``init(_:)``) for the length of a closure
/// (``withStore(_:)``); the engine tests that run on every store take ``all``
/// or ``databases`` (those that keep events).
public struct StoreFactory: Sendable, CustomTestStringConvertible {
    public let name: String
    let open: @Sendable (_ body: (StoreUnderTest) async throws -> Void) async throws -> Void

    public var testDescription: String { name }

    /// Runs `body` with a fresh store, open (a database's pool running) for `body`'s length.
    public func withStore<Result>(_ body: (StoreUnderTest) async throws -> Result) async throws -> Result {
        var result: Result?
        try await open { result = try await body($0) }
        return result!
    }

    /// SQLite in a fresh temporary folder.
    public static let sqlite = StoreFactory(name: "SQLite") { body in
        let path = Repository.temporaryDirectory("store") + "/catalog.sqlite"
        @Sendable func opened(_ store: SQLiteCatalogStore) -> StoreUnderTest {
            StoreUnderTest(store: store, collector: store, candidates: .inMemory,
                           another: { body in try await body(opened(try await SQLiteCatalogStore(path: path))) })
        }
        try await body(opened(try await SQLiteCatalogStore(path: path, creating: true)))
    }

    /// PostgreSQL + pgvector in a fresh schema of the database `$VSEARCH_TEST_POSTGRES`
    /// names (`scripts/test.sh` starts one). In CI a missing server fails the suite.
    public static let postgreSQL = StoreFactory(name: "PostgreSQL") { body in
        let settings = try PostgreSQLTestDatabase.freshSchema()
        @Sendable func opened(_ store: PostgreSQLCatalogStore) -> StoreUnderTest {
            StoreUnderTest(store: store, collector: store, candidates: .store(store),
                           another: { body in try await PostgreSQLCatalogStore.withStore(settings) { try await body(opened($0)) } })
        }
        try await PostgreSQLCatalogStore.withStore(settings, creating: true) { try await body(opened($0)) }
    }

    /// The in-memory store of TestSupport (no collector): what engine tests
    /// without a database use, held to the same contract.
    public static let inMemory = StoreFactory(name: "in memory") { body in
        @Sendable func opened(_ store: InMemoryCatalogStore) -> StoreUnderTest {
            StoreUnderTest(store: store, collector: nil, candidates: .inMemory, another: { body in try await body(opened(store.sharingState())) })
        }
        try await body(opened(InMemoryCatalogStore()))
    }

    /// The database stores: SQLite always; PostgreSQL when a test server is
    /// configured, and always in CI. They keep the collector's events too.
    public static let databases: [StoreFactory] = PostgreSQLTestDatabase.isRequired ? [.sqlite, .postgreSQL] : [.sqlite]

    init(name: String, open: @escaping @Sendable (_ body: (StoreUnderTest) async throws -> Void) async throws -> Void) {
        self.name = name
        self.open = open
    }

    /// The factory of `kind`.
    public init(_ kind: StoreKind) {
        switch kind {
        case .sqlite: self = .sqlite
        case .postgreSQL: self = .postgreSQL
        case .inMemory: self = .inMemory
        }
    }

    /// Every store the catalog roles' conformance suites run against.
    public static let all: [StoreFactory] = databases + [.inMemory]
}

/// Catalog items for storage tests: no pixels, deterministic vectors.
public enum Items {
    /// A unit vector of ``ColorFeatures/dimensions`` floats, different for each seed.
    public static func vector(_ seed: Int) -> [Float] {
        var state = UInt64(seed) &* 0x9E37_79B9_7F4A_7C15 &+ 1
        var values: [Float] = (0..<ColorFeatures.dimensions).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Float(state >> 40) / Float(1 << 24) - 0.5
        }
        let norm = values.reduce(0) { $0 + $1 * $1 }.squareRoot()
        for i in values.indices { values[i] /= norm }
        return values
    }

    /// A palette of one or two colours.
    public static func palette(_ seed: Int) -> DominantColors {
        DominantColors(entries: [
            .init(color: LabColor(l: Float(10 + seed % 80), a: Float(seed % 40) - 20, b: 7.25), fraction: 0.75),
            .init(color: LabColor(red: 200, green: UInt8(seed % 256), blue: 40), fraction: 0.25),
        ])
    }

    /// A unit vector of `dimension` floats for the learned space, different for each seed (and from the colour vector of the same seed).
    public static func learnedVector(_ seed: Int, dimension: Int = 64) -> [Float] {
        var state = UInt64(seed) &* 0xD1B5_4A32_D192_ED03 &+ 7
        var values: [Float] = (0..<dimension).map { _ in
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Float(state >> 40) / Float(1 << 24) - 0.5
        }
        let norm = values.reduce(0) { $0 + $1 * $1 }.squareRoot()
        for i in values.indices { values[i] /= norm }
        return values
    }

    /// A learned model's descriptor for storage tests (no file behind it).
    public static func learnedModel(dimension: Int = 64, hash: String = String(repeating: "5e", count: 32)) -> EmbeddingDescriptor {
        EmbeddingDescriptor(name: "test-model", version: "1", dimension: dimension, preprocessing: "none", contentHash: hash)
    }

    public static func item(_ name: String, seed: Int = 0, source: String? = nil, hash: String? = nil,
                     metadata: [String: String] = [:]) -> CatalogItem {
        CatalogItem(imageName: name, source: source ?? "/images/\(name).jpg", width: 100 + seed, height: 50 + seed,
                    contentHash: hash ?? "hash-\(name)-\(seed)", features: vector(seed), palette: palette(seed), metadata: metadata)
    }
}
