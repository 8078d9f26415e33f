import Foundation
import SearchEngine
import TestSupport
import Testing
import Tracking
import VisualSearch
import SQLiteCatalog
import PostgreSQLCatalog

/// A store under test: a fresh, empty store at a new location, its
/// collector when it keeps events, and a way to open a second instance on
/// the same location — what "another process" sees.
struct StoreUnderTest: Sendable {
    let store: any CatalogStore
    /// The same store's collector role; nil for a store that keeps no events (the in-memory one).
    let collector: (any CollectorStore)?
    /// Where an engine on this store finds candidates (as `CatalogLocation` composes it).
    let candidates: CandidateSource
    let openAnother: @Sendable () async throws -> StoreUnderTest

    /// An engine on the store: its catalog, journal and (when it has one) collector.
    func engine(_ configuration: VisualSearchEngine.Configuration = VisualSearchEngine.Configuration()) async throws -> VisualSearchEngine {
        try await VisualSearchEngine(catalog: store, journal: store, candidates: candidates, engagement: collector, configuration: configuration)
    }
}

/// How the conformance suites get stores. Every suite in `Storage/*Conformance*`
/// runs once per factory in ``all`` (the catalog roles) or ``databases`` (the
/// collector too): a new store joins by adding one factory there, and nothing
/// else changes.
struct StoreFactory: Sendable, CustomTestStringConvertible {
    let name: String
    let make: @Sendable () async throws -> StoreUnderTest

    var testDescription: String { name }

    /// SQLite in a fresh temporary folder.
    static let sqlite = StoreFactory(name: "SQLite") {
        let path = Repository.temporaryDirectory("store") + "/catalog.sqlite"
        @Sendable func opened(_ store: SQLiteCatalogStore) -> StoreUnderTest {
            StoreUnderTest(store: store, collector: store, candidates: .inMemory,
                           openAnother: { opened(try await SQLiteCatalogStore(path: path)) })
        }
        return opened(try await SQLiteCatalogStore(path: path, creating: true))
    }

    /// PostgreSQL + pgvector in a fresh schema of the database `$VSEARCH_TEST_POSTGRES`
    /// names (`scripts/test.sh` starts one). In CI a missing server fails the suite.
    static let postgreSQL = StoreFactory(name: "PostgreSQL") {
        let settings = try PostgreSQLTestDatabase.freshSchema()
        @Sendable func opened(_ store: PostgreSQLCatalogStore) -> StoreUnderTest {
            StoreUnderTest(store: store, collector: store, candidates: .store(store),
                           openAnother: { opened(try await PostgreSQLCatalogStore.open(settings)) })
        }
        return opened(try await PostgreSQLCatalogStore.open(settings, creating: true))
    }

    /// The in-memory store of TestSupport (no collector): what engine tests
    /// without a database use, held to the same contract.
    static let inMemory = StoreFactory(name: "in memory") {
        @Sendable func opened(_ store: InMemoryCatalogStore) -> StoreUnderTest {
            StoreUnderTest(store: store, collector: nil, candidates: .inMemory, openAnother: { opened(store.sharingState()) })
        }
        return opened(InMemoryCatalogStore())
    }

    /// The database stores: SQLite always; PostgreSQL when a test server is
    /// configured, and always in CI. They keep the collector's events too.
    static let databases: [StoreFactory] = PostgreSQLTestDatabase.isRequired ? [.sqlite, .postgreSQL] : [.sqlite]

    /// Every store the catalog roles' conformance suites run against.
    static let all: [StoreFactory] = databases + [.inMemory]
}

/// Catalog items for storage tests: no pixels, deterministic vectors.
enum Items {
    /// A unit vector of ``ColorFeatures/dimensions`` floats, different for each seed.
    static func vector(_ seed: Int) -> [Float] {
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
    static func palette(_ seed: Int) -> DominantColors {
        DominantColors(entries: [
            .init(color: LabColor(l: Float(10 + seed % 80), a: Float(seed % 40) - 20, b: 7.25), fraction: 0.75),
            .init(color: LabColor(red: 200, green: UInt8(seed % 256), blue: 40), fraction: 0.25),
        ])
    }

    /// A unit vector of `dimension` floats for the learned space, different for each seed (and from the colour vector of the same seed).
    static func learnedVector(_ seed: Int, dimension: Int = 64) -> [Float] {
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
    static func learnedModel(dimension: Int = 64, hash: String = String(repeating: "5e", count: 32)) -> EmbeddingDescriptor {
        EmbeddingDescriptor(name: "test-model", version: "1", dimension: dimension, preprocessing: "none", contentHash: hash)
    }

    static func item(_ name: String, seed: Int = 0, source: String? = nil, hash: String? = nil,
                     metadata: [String: String] = [:]) -> CatalogItem {
        CatalogItem(imageName: name, source: source ?? "/images/\(name).jpg", width: 100 + seed, height: 50 + seed,
                    contentHash: hash ?? "hash-\(name)-\(seed)", features: vector(seed), palette: palette(seed), metadata: metadata)
    }
}

/// Runs an external command (found on the PATH) and returns its standard output, trimmed.
@discardableResult
func run(_ executable: String, _ arguments: [String]) async throws -> String {
    let outcome = try await ChildProcess.run("/usr/bin/env", [executable] + arguments)
    return outcome.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
}

/// Whether the tests that look at or make SQLite files behind the store's
/// back with the `sqlite3` command line tool run: when it is installed, and
/// always in CI (`scripts/install-deps.sh` installs it there; a missing tool
/// fails those tests instead of skipping them).
let hasSQLiteTool = ProcessInfo.processInfo.environment["CI"] == "true"
    || ["/usr/bin/sqlite3", "/usr/local/bin/sqlite3", "/opt/homebrew/bin/sqlite3"].contains { FileManager.default.isExecutableFile(atPath: $0) }
