import Foundation
import SearchEngine
import TestSupport
import Testing
import Tracking
import VisualSearch

/// The ``CatalogAdmin`` contract: a store reports itself healthy, new and after
/// writes of every kind — run once per ``StoreFactory`` in ``StoreFactory/all``.
@Suite("CatalogAdmin conformance", .timeLimit(.minutes(10)))
struct CatalogAdminConformanceTests {
    @Test("a new store is empty, healthy, and declares no fields", arguments: StoreFactory.all)
    func empty(factory: StoreFactory) async throws {
        let store = try await factory.make().store
        #expect(try await store.count() == 0)
        #expect(try await store.schema().fields.isEmpty)
        #expect(try await store.loadIndex().count == 0)
        #expect(try await store.export().isEmpty)
        #expect(try await store.contentHashes().isEmpty)
        #expect(try await store.integrityCheck() == "ok")
        #expect(store.location.isEmpty == false)
    }

    @Test("integrityCheck is ok after writes of every kind", arguments: StoreFactory.all)
    func integrity(factory: StoreFactory) async throws {
        let seeded = try await ConformanceSample.seeded(factory)
        try await seeded.store.updateMetadata([MetadataUpdate(imageName: "a", metadata: ["title": "x y z"])], schema: ConformanceSample.schema)
        _ = try await seeded.store.remove(["b"])
        #expect(try await seeded.store.integrityCheck() == "ok")
    }
}
