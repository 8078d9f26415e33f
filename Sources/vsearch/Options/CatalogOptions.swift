import ArgumentParser
import CatalogStores
import Foundation
import ImageOps
import SearchEngine
import Tracking
import VisualSearch
import PostgreSQLCatalog

/// `--catalog`, shared by every command that reads or writes a catalog.
struct CatalogOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The catalog: a SQLite file, or postgresql://user@host:port/db (password from $PGPASSWORD or ~/.pgpass). "
                               + "Default $VSEARCH_CATALOG, else .vsearch/catalog.sqlite.", valueName: "path|url"))
    var catalog: String?

    /// The location in effect.
    var location: CatalogLocation { catalog.map(CatalogLocation.init(parsing:)) ?? .fromEnvironment() }

    /// Runs `body` with the catalog open (a database's pool runs for as long as `body` does); only `creating`
    /// (vsearch index) makes a new one. An error opening it is reported (``CLIError``) and thrown as its exit code;
    /// what `body` throws is passed on as it is.
    func withStore<Result>(creating: Bool = false, _ body: (any CatalogStore & CollectorStore) async throws -> Result) async throws -> Result {
        do { try checkLocation() } catch { throw CLIError.report(error) }
        var opened = false
        do {
            return try await location.withCatalog(creating: creating) { catalog in
                opened = true
                return try await body(catalog.store)
            }
        } catch where !opened {
            throw CLIError.report(error)
        }
    }

    /// ``withStore(creating:_:)`` throwing an error opening the catalog itself (``InputError`` or ``CatalogStoreError``)
    /// for the caller to report.
    func withStoreUnreported<Result>(creating: Bool = false, _ body: (any CatalogStore & CollectorStore) async throws -> Result) async throws -> Result {
        try checkLocation()
        return try await location.withCatalog(creating: creating) { try await body($0.store) }
    }

    /// Refuses what is wrong with the location itself, before any connection:
    /// a folder given as a SQLite file, a postgresql:// URL that does not parse (a usage error, 64).
    func checkLocation() throws(InputError) {
        switch location {
        case .sqlite(let path):
            if ImageFiles.isDirectory(path) { throw .catalogIsFolder(path: path) }
        case .postgreSQL(let url):
            do { _ = try PostgreSQLSettings(url: url.absoluteString) } catch { throw .catalogURL(error) }
        }
    }

    /// ``withEngineUnreported(model:recommendations:_:)`` reporting an error opening the catalog or loading the
    /// model (``CLIError``) and throwing it as its exit code; what `body` throws is passed on as it is.
    func withEngine<Result>(model: ModelOptions?, _ body: (VisualSearchEngine) async throws -> Result) async throws -> Result {
        var opened = false
        do {
            return try await withEngineUnreported(model: model) { engine in
                opened = true
                return try await body(engine)
            }
        } catch where !opened {
            throw CLIError.report(error)
        }
    }

    /// Runs `body` with the offline engine over the catalog (open for as long as `body` runs), reading the user's own
    /// files and URLs; with `model`, the learned model (and its detector) that command loads — nil for commands that
    /// never embed an image. Errors are thrown unreported, for the caller's ``CLIError/report(_:)`` (or JSON failure shape).
    func withEngineUnreported<Result>(model: ModelOptions?, recommendations: RecommendationBlend = RecommendationBlend(),
                            _ body: (VisualSearchEngine) async throws -> Result) async throws -> Result {
        try checkLocation()
        var configuration = VisualSearchEngine.Configuration()
        configuration.imageSources = .commandLine
        configuration.recommendations = recommendations
        let learned = try model?.learnedEmbedder()
        configuration.learned = learned
        // Detection needs the model's detection files (installed with it since issue 38); without them discover says so.
        configuration.detector = learned.flatMap { try? ObjectDetector(embedder: $0) }
        // A one-shot command uses a saved HNSW index (caught up in memory when the catalog moved) but never spends
        // minutes building one: without it, queries scan exactly.
        configuration.graphPolicy = ApproximateIndex.Policy(builds: false, saves: false)
        configuration.graphReports = GraphReporting.warnings
        let engineConfiguration = configuration
        return try await location.withCatalog { opened in
            try await body(try await opened.engine(configuration: engineConfiguration))
        }
    }
}
