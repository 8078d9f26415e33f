import Foundation
import SearchEngine
import Testing
import Tracking
import VisualSearch

/// The ``CatalogAdmin`` contract: a store reports itself healthy, new and after
/// writes of every kind — run by each store's test target.
public enum CatalogAdminConformance {
    /// Every check of the contract, each naming the stores it applies to.
    public static var checks: [ConformanceCheck] {
        var checks: [ConformanceCheck] = []
        checks.append(ConformanceCheck("a new store is empty, healthy, and declares no fields", stores: [.sqlite, .postgreSQL, .inMemory]) { kind in
            let factory = StoreFactory(kind)
            try await factory.withStore { sut async throws in
                let store = sut.store
                #expect(try await store.count() == 0)
                #expect(try await store.schema().fields.isEmpty)
                #expect(try await store.loadIndex().count == 0)
                #expect(try await store.export().isEmpty)
                #expect(try await store.contentHashes().isEmpty)
                #expect(try await store.integrityCheck() == "ok")
                #expect(store.location.isEmpty == false)
            }
        })
        checks.append(ConformanceCheck("integrityCheck is ok after writes of every kind", stores: [.sqlite, .postgreSQL, .inMemory]) { kind in
            let factory = StoreFactory(kind)
            try await ConformanceSample.withSeeded(factory) { seeded async throws in
                try await seeded.store.updateMetadata([MetadataUpdate(imageName: "a", metadata: ["title": "x y z"])], schema: ConformanceSample.schema)
                _ = try await seeded.store.remove(["b"])
                #expect(try await seeded.store.integrityCheck() == "ok")
            }
        })
        return checks
    }
}
