import ArgumentParser
import Foundation
import SearchEngine
import Tracking
import VisualSearch

/// `--catalog`, shared by every command that reads or writes a catalog.
struct CatalogOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The catalog: a SQLite file, or postgresql://user@host:port/db (password from $PGPASSWORD or ~/.pgpass). "
                               + "Default: $VSEARCH_CATALOG, else .vsearch/catalog.sqlite.", valueName: "path|url"))
    var catalog: String?

    /// The location in effect.
    var location: CatalogLocation { catalog.map(CatalogLocation.init(parsing:)) ?? .fromEnvironment() }

    /// Opens the catalog; only `creating` (vsearch index) makes a new one.
    func open(creating: Bool = false) async throws -> any CatalogStore & CollectorStore {
        do { return try await location.open(creating: creating) } catch {
            throw CLIError.report(error)
        }
    }

    /// The offline engine over the catalog, reading the user's own files and URLs.
    func engine(recommendations: RecommendationBlend = RecommendationBlend()) async throws -> VisualSearchEngine {
        let store = try await open()
        var configuration = VisualSearchEngine.Configuration()
        configuration.imageSources = .commandLine
        configuration.recommendations = recommendations
        do { return try await VisualSearchEngine(store: store, configuration: configuration) } catch {
            throw CLIError.report(error)
        }
    }
}
