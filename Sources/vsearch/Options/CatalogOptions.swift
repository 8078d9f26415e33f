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

    /// Opens the catalog; only `creating` (vsearch index) makes a new one.
    /// An error is reported (``CLIError``) and thrown as its exit code.
    func open(creating: Bool = false) async throws -> any CatalogStore & CollectorStore {
        do { return try await openUnreported(creating: creating) } catch {
            throw CLIError.report(error)
        }
    }

    /// Opens the catalog, throwing the error itself (``InputError`` or ``VisualSearchError``) for the caller to report.
    func openUnreported(creating: Bool = false) async throws -> any CatalogStore & CollectorStore {
        try checkLocation()
        return try await location.open(creating: creating)
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

    /// The offline engine over the catalog, reading the user's own files and URLs; with `model`, the learned model
    /// (and its detector) that command loads — nil for commands that never embed an image.
    /// Errors are thrown unreported, for the caller's ``CLIError/report(_:)`` (or JSON failure shape).
    func engine(model: ModelOptions?, recommendations: RecommendationBlend = RecommendationBlend()) async throws -> VisualSearchEngine {
        try checkLocation()
        let opened = try await location.openCatalog()
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
        return try await opened.engine(configuration: configuration)
    }
}
