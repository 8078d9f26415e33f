import CatalogStores
import Foundation
import PostgreSQLCatalog
import SQLiteCatalog
import SearchEngine
import TestSupport
import Testing

/// Multiple Products Search on PostgreSQL: the learned corpus copied into a
/// fresh schema answers discover as the engine does in memory
/// (SearchEngineTests' `DiscoverDetectionTests`).
@Suite("Discover search on PostgreSQL", .enabled(if: LearnedModel.isRequired, "the learned model is not installed (scripts/install-model.sh)"),
       .enabled(if: PostgreSQLTestDatabase.isRequired, "no PostgreSQL (VSEARCH_TEST_POSTGRES)"), .timeLimit(.minutes(10)))
struct DiscoverOnPostgreSQLTests {
    @Test("discover finds each thing of a scene and searches it: its own image first (PostgreSQL)")
    func discoverOnPostgreSQL() async throws {
        let source = try await SQLiteCatalogStore(path: try await Corpus.sharedLearnedCatalog())
        try await PostgreSQLCatalogStore.withStore(try PostgreSQLTestDatabase.freshSchema(), creating: true) { target async throws in
            _ = try await CatalogCopy(from: source, to: target).run()
            var configuration = VisualSearchEngine.Configuration()
            configuration.learned = try LearnedModel.embedder()
            configuration.detector = try ObjectDetector(embedder: try LearnedModel.embedder())
            try await DetectionScenes.expectFindsEachThing(try await OpenedCatalog(postgreSQL: target).engine(configuration: configuration))
        }
    }
}
