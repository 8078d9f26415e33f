import CatalogStores
import Foundation
import SearchEngine
import Testing
import Tracking
import VisualSearch

/// The ``CatalogSnapshots`` contract, on every store that offers it: a
/// snapshot's reads all see the catalog as it was when it began, whatever
/// is committed meanwhile; its store refuses writes; and a ``CatalogCopy``
/// from a snapshot of a catalog being written holds exactly the snapshot.
public enum CatalogSnapshotsConformance {
    static let extra = (0..<7).map { Items.item("late\($0)", seed: 50 + $0, metadata: ["brand": "late"]) }

    /// What the snapshot read, taken out of its closure to be checked.
    struct Seen: Sendable {
        var first, writerCount, count, hashes, indexed, exported, version, events, late: Int
        var upsertRefused, removeRefused: Bool
    }

    /// Every check of the contract, each naming the stores it applies to.
    public static var checks: [ConformanceCheck] {
        var checks: [ConformanceCheck] = []
        checks.append(ConformanceCheck("a snapshot does not see writes committed after it began; its store refuses writes", stores: [.sqlite, .postgreSQL]) { kind in
            let factory = LocationFactory(kind)
            try await CatalogBackupConformance.withSeeded(factory) { location, opened async throws in
                try await CatalogLocation(parsing: location).withCatalog { another async throws in
                    let writer = another.store
                    let snapshots = try #require(opened.snapshots)
                    let before = try await opened.store.version()
                    let seen = try await snapshots.withSnapshot { snapshot throws(CatalogStoreError) in
                        let first = try await snapshot.count()
                        try await writer.upsert(Self.extra, schema: ConformanceSample.schema)
                        _ = try? await writer.receive([click(9)])
                        return Seen(first: first, writerCount: try await writer.count(), count: try await snapshot.count(),
                                    hashes: try await snapshot.contentHashes().count, indexed: try await snapshot.loadIndex().count,
                                    exported: try await snapshot.export().count, version: try await snapshot.version(),
                                    events: (try? await snapshot.eventCount()) ?? -1,
                                    late: try await snapshot.matchingIDs([Filter(field: "brand", value: "late")], schema: ConformanceSample.schema)?.count ?? -1,
                                    upsertRefused: (try? await snapshot.upsert(Self.extra, schema: ConformanceSample.schema)) == nil,
                                    removeRefused: (try? await snapshot.remove(["a"])) == nil)
                    }
                    #expect(seen.first == 5 && seen.writerCount == 12)
                    #expect(seen.count == 5 && seen.hashes == 5 && seen.indexed == 5 && seen.exported == 5, "\(seen)")
                    #expect(seen.version == before && seen.events == 3 && seen.late == 0, "\(seen)")
                    #expect(seen.upsertRefused && seen.removeRefused)
                    #expect(try await opened.store.count() == 12, "nothing written through the snapshot, everything through the writer")
                }
            }
        })
        checks.append(ConformanceCheck("a copy read from a snapshot while the source grows holds the snapshot, and verifies", stores: [.sqlite, .postgreSQL]) { kind in
            let factory = LocationFactory(kind)
            try await CatalogBackupConformance.withSeeded(factory) { location, opened async throws in
                try await CatalogLocation(parsing: location).withCatalog { another async throws in
                    let writer = another.store
                    try await CatalogLocation(parsing: Repository.temporaryDirectory("snapshot") + "/copy.sqlite").withCatalog(creating: true) { copy async throws in
                        let target = copy.store
                        let summary = try await opened.withSnapshot { snapshot throws(CatalogStoreError) in
                            try await writer.upsert(Self.extra, schema: ConformanceSample.schema)  // committed after the snapshot began
                            _ = try? await writer.receive([click(7)])
                            return try await CatalogCopy(from: snapshot, to: target).run()
                        }
                        #expect(summary.images == 5 && summary.events == 3)
                        #expect(try await target.count() == 5)
                        #expect(try await target.contentHashes() == Dictionary(uniqueKeysWithValues: ConformanceSample.sample.map { ($0.imageName, $0.contentHash) }))
                        #expect(try await opened.store.count() == 12)
                    }
                }
            }
        })
        return checks
    }
}
