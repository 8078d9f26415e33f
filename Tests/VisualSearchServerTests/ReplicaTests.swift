import Foundation
import Networking
import SearchEngine
import Testing
import TestSupport
import VisualSearch
import VisualSearchServer
import CatalogStores
import PostgreSQLCatalog

/// Several `vsearch serve` replicas on one PostgreSQL catalog behave as one
/// service: what is inserted or removed through one is seen through the
/// others within seconds, and any of them answers an insert's status.
@Suite("Replicas on one PostgreSQL catalog", .serialized, .enabled(if: PostgreSQLTestDatabase.isRequired), .timeLimit(.minutes(10)))
struct ReplicaTests {
    /// A PostgreSQL catalog of the corpus; returns its URL.
    static func corpusCatalog() async throws -> String {
        let url = try PostgreSQLTestDatabase.freshURL()
        return try await PostgreSQLCatalogStore.withStore(try PostgreSQLSettings(url: url), creating: true) { store async throws in
            _ = try await Indexer(store: store).run(directory: Repository.images, metadata: try MetadataTable(contentsOf: Repository.metadata))
            return url
        }
    }

    @Test("insert through one replica, search and status through the other; remove through the other, gone from the first")
    func insertAndRemoveAcrossReplicas() async throws {
        let url = try await Self.corpusCatalog()
        let configure: (inout ServerConfiguration) -> Void = {
            $0.catalog = CatalogLocation(parsing: url)
            $0.imageRoots = [Repository.images]
            $0.engine.versionCheckInterval = .zero  // each query asks the database for its version: a replica sees a commit at once
        }
        let first = try await ServerFixture.live(configure), second = try await ServerFixture.live(configure)
        do {
            try await Self.insertAndRemove(a: ServerFixture.client(first.url), inserting: first.server.service,
                                           b: ServerFixture.client(second.url))
        } catch {
            Issue.record(error)
        }
        await first.stop()
        await second.stop()
    }

    /// Inserts through `a` (whose engine is `inserting`), searches and reads the status through `b`, removes through
    /// `b` and searches through `a`. Each step waits for the event that makes the next one hold — the insert job's end
    /// in `a`'s engine, the commit of the remove — never on a timer: a replica asks the database for the catalog's
    /// version on each query, so a committed change is seen by the next one.
    static func insertAndRemove(a: ViSearchClient, inserting: VisualSearchEngine, b: ViSearchClient) async throws {
        let item = InsertItem(imageName: "replica_cat", imageURL: "file://" + Repository.images + "/chelsea_cat.jpg", metadata: ["brand": "acme"])
        let inserted = try await a.insert(InsertRequest(items: [item]))
        let id = try #require(inserted.transactionID)
        await inserting.finishInserts()
        let status = try await b.insertStatus(InsertStatusRequest(transactionID: id)).result.first
        #expect(status?.isFinished == true, "the other replica does not report the insert finished: \(String(describing: status))")
        #expect(status?.successCount == 1 && status?.failCount == 0)

        let search = SearchRequest(imageName: "replica_cat", parameters: Corpus.parameters { $0.fields = ["brand"] })
        // chelsea_cat is the same picture: the two tie at score 1 and rank by name, so look for it anywhere on the page.
        let found = try await b.search(search).result.contains { $0.imageName == "replica_cat" }
        #expect(found, "the image inserted through one replica was not searchable through the other")

        // A name the PostgreSQL catalog does not hold is listed (looked up in one query with the others).
        let removed = try await b.remove(RemoveRequest(imageNames: ["replica_cat", "never-there"]))
        #expect(removed.total == 1 && removed.error.map(\.imageName) == ["never-there"] && removed.error.first?.index == 1, "\(removed)")
        await #expect {
            try await a.search(search)
        } throws: { error in
            guard case ClientError.http(404, _, _) = error else { return false }
            return true
        }
    }

    @Test("a replica started later answers the same as one that ran all along (nothing needed is kept in memory)")
    func freshReplicaAgrees() async throws {
        let url = try await Self.corpusCatalog()
        let configure: (inout ServerConfiguration) -> Void = { $0.catalog = CatalogLocation(parsing: url) }
        let old = try await ServerFixture.live(configure)
        let request = SearchRequest(imageName: "chelsea_cat", parameters: Corpus.parameters {
            $0.fields = ["brand", "price"]; $0.facets = ["brand"]; $0.facetsShowCount = true; $0.limit = 15
        })
        var before = try await ServerFixture.client(old.url).search(request)
        await old.stop()
        let fresh = try await ServerFixture.live(configure)
        var after = try await ServerFixture.client(fresh.url).search(request)
        await fresh.stop()
        before.requestID = nil
        after.requestID = nil
        #expect(before == after)
    }
}
