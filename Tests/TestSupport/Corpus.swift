import Foundation
import ImageOps
import SearchEngine
import VisualSearch
import SQLiteCatalog
import CatalogStores

/// Paths of the repository's fixtures and fresh temporary folders.
public enum Repository {
    /// The repository's root folder.
    public static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    /// The sample images.
    public static let images = root + "/corpus/images"
    /// Their catalog metadata.
    public static let metadata = root + "/corpus/catalog.csv"
    /// Malformed and unusual images with expected outcomes (README.tsv).
    public static let badInput = root + "/Tests/Fixtures/badinput"

    /// A new, empty folder for a test: under this process's own folder (``testFolder``), which is
    /// removed when the process exits, so a run leaves nothing in the system's temporary folder.
    public static func temporaryDirectory(_ label: String = "test") -> String {
        let path = testFolder + "/\(label)-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// `vsearch-tests/PID` under the system's temporary folder: made at first use, removed at exit
    /// (kept when `VSEARCH_KEEP_TEST_FILES` is set, to look at after a failure); the folders of
    /// test processes no longer running (killed, crashed) are removed then too.
    static let testFolder: String = {
        let base = NSTemporaryDirectory() + "vsearch-tests"
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: base)) ?? [] {
            if let pid = Int32(entry), kill(pid, 0) != 0, errno == ESRCH { try? FileManager.default.removeItem(atPath: base + "/" + entry) }
        }
        let folder = base + "/\(getpid())"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        if ProcessInfo.processInfo.environment["VSEARCH_KEEP_TEST_FILES"] == nil {
            atexit { try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "vsearch-tests/\(getpid())") }
        }
        return folder
    }()

    /// The bytes of a corpus image.
    public static func bytes(_ name: String) -> [UInt8] {
        (try? FileIO.read(images + "/" + name)) ?? []
    }
}

/// The corpus indexed with its metadata, for tests that query it.
public enum Corpus {
    /// A fresh SQLite catalog of the corpus; returns its path.
    public static func makeCatalog() async -> String {
        let path = Repository.temporaryDirectory("catalog") + "/catalog.sqlite"
        let store = try! await SQLiteCatalogStore(path: path, creating: true)  // test setup: a failure here fails every test loudly
        _ = try! await Indexer(store: store).run(directory: Repository.images, metadata: try! MetadataTable(contentsOf: Repository.metadata))
        return path
    }

    /// The corpus catalog shared by a test process (indexed once).
    public static func sharedCatalog() async -> String { await Shared.instance.catalog() }

    /// A fresh SQLite catalog of the corpus with learned vectors (``LearnedModel``); returns its path.
    public static func makeLearnedCatalog() async throws -> String {
        let path = Repository.temporaryDirectory("learned-catalog") + "/catalog.sqlite"
        let store = try await SQLiteCatalogStore(path: path, creating: true)
        var configuration = Indexer.Configuration()
        configuration.features = FeaturePipeline(learned: try LearnedModel.embedder())
        let summary = try await Indexer(store: store, configuration: configuration)
            .run(directory: Repository.images, metadata: try MetadataTable(contentsOf: Repository.metadata))
        precondition(summary.failed == 0, "the corpus indexes without failures: \(summary.failures)")
        return path
    }

    /// The corpus catalog with learned vectors shared by a test process (indexed once).
    public static func sharedLearnedCatalog() async throws -> String { try await Shared.instance.learnedCatalog() }

    /// An engine over the shared learned catalog, with the model; `configure` adjusts its settings.
    public static func learnedEngine(_ configure: (inout VisualSearchEngine.Configuration) -> Void = { _ in }) async throws -> VisualSearchEngine {
        var configuration = VisualSearchEngine.Configuration()
        configuration.learned = try LearnedModel.embedder()
        configure(&configuration)
        let store = try await SQLiteCatalogStore(path: try await sharedLearnedCatalog())
        return try await OpenedCatalog(sqlite: store).engine(configuration: configuration)
    }

    /// An engine over the shared catalog; `configure` adjusts its settings.
    public static func engine(_ configure: (inout VisualSearchEngine.Configuration) -> Void = { _ in }) async -> VisualSearchEngine {
        var configuration = VisualSearchEngine.Configuration()
        configure(&configuration)
        let store = try! await SQLiteCatalogStore(path: await sharedCatalog())
        return try! await OpenedCatalog(sqlite: store).engine(configuration: configuration)
    }

    /// An engine over the corpus in an ``InMemoryCatalogStore`` (indexed once per test process, shared, read
    /// only): the engine's own tests, with no database; `configure` adjusts its settings. With `learned`, the
    /// catalog holds learned vectors of ``LearnedModel`` and the engine has the model.
    public static func memoryEngine(learned: Bool = false, _ configure: (inout VisualSearchEngine.Configuration) -> Void = { _ in })
        async throws -> VisualSearchEngine {
        var configuration = VisualSearchEngine.Configuration()
        if learned { configuration.learned = try LearnedModel.embedder() }
        configure(&configuration)
        let store = try await Shared.instance.memoryCatalog(learned: learned)
        return try await store.engine(configuration: configuration)
    }

    /// The corpus indexed into a new in-memory store.
    static func makeMemoryCatalog(learned: Bool) async throws -> InMemoryCatalogStore {
        let store = InMemoryCatalogStore(location: learned ? "memory:corpus-learned" : "memory:corpus")
        var configuration = Indexer.Configuration()
        if learned { configuration.features = FeaturePipeline(learned: try LearnedModel.embedder()) }
        let summary = try await Indexer(store: store, configuration: configuration)
            .run(directory: Repository.images, metadata: try MetadataTable(contentsOf: Repository.metadata))
        precondition(summary.failed == 0, "the corpus indexes without failures: \(summary.failures)")
        return store
    }

    /// Parameters with scores on, adjusted by `configure`.
    public static func parameters(_ configure: (inout SearchParameters) -> Void = { _ in }) -> SearchParameters {
        var parameters = SearchParameters()
        parameters.includesScore = true
        configure(&parameters)
        return parameters
    }

    /// Each catalog is made by one task that every caller awaits: an actor method that awaited the indexing
    /// itself would let every caller arriving meanwhile start its own (actors are re-entrant at `await`).
    actor Shared {
        static let instance = Shared()
        var made: Task<String, Never>?
        var learnedMade: Task<String, any Error>?
        func learnedCatalog() async throws -> String {
            if learnedMade == nil { learnedMade = Task { try await Corpus.makeLearnedCatalog() } }
            return try await learnedMade!.value
        }
        var memoryMade: [Bool: Task<InMemoryCatalogStore, any Error>] = [:]
        func memoryCatalog(learned: Bool) async throws -> InMemoryCatalogStore {
            if memoryMade[learned] == nil { memoryMade[learned] = Task { try await Corpus.makeMemoryCatalog(learned: learned) } }
            return try await memoryMade[learned]!.value
        }
        func catalog() async -> String {
            if made == nil { made = Task { await Corpus.makeCatalog() } }
            return await made!.value
        }
    }
}

/// Seeds for randomised tests: printed, and taken from `$VSEARCH_TEST_SEED` when set, so a failure can be replayed.
public struct TestSeed: RandomNumberGenerator, Sendable {
    public let seed: UInt64
    var state: UInt64

    /// A seed from `$VSEARCH_TEST_SEED`, else a fresh one; `label` names the test in the printed line.
    public init(_ label: String) {
        let given = ProcessInfo.processInfo.environment["VSEARCH_TEST_SEED"].flatMap { UInt64($0) }
        seed = given ?? UInt64.random(in: 1...UInt64.max)
        state = seed
        print("\(label): seed \(seed) (replay with VSEARCH_TEST_SEED=\(seed))")
    }

    /// SplitMix64.
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
