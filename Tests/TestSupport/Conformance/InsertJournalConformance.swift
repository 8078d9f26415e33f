import Foundation
import SearchEngine
import Testing
import Tracking
import VisualSearch

/// The ``InsertJournal`` contract: insert progress saved, replaced, shared with
/// another instance on the same location — run by each store's test target.
public enum InsertJournalConformance {
    /// Every check of the contract, each naming the stores it applies to.
    public static var checks: [ConformanceCheck] {
        var checks: [ConformanceCheck] = []
        checks.append(ConformanceCheck("insert transactions: saved progress round-trips, later saves replace it, another instance sees it, unknown ids are nil", stores: [.sqlite, .postgreSQL, .inMemory]) { kind in
            let factory = StoreFactory(kind)
            try await factory.withStore { sut async throws in
                let store = sut.store
                try await sut.withAnother { another async throws in
                    let other = another.store
                    var progress = InsertStatusResponse.Progress(transactionID: "1234567890", processedPercent: 0, total: 3, successCount: 0,
                                                                 failCount: 0, startTime: "2026-11-23T10:00:00Z", updateTime: "2026-11-23T10:00:00Z",
                                                                 errorList: [])
                    try await store.saveInsertTransaction(progress)
                    #expect(try await other.insertTransaction("1234567890") == progress)
                    progress.processedPercent = 100
                    progress.successCount = 2
                    progress.failCount = 1
                    progress.errorList = [DataAPIError(imageName: "broken", index: 2, code: 400, message: "Invalid image: truncated JPEG")]
                    try await other.saveInsertTransaction(progress)
                    #expect(try await store.insertTransaction("1234567890") == progress)
                    #expect(try await store.insertTransaction("999") == nil)
                    #expect(try await store.insertTransaction("x' OR '1'='1") == nil)
                    let versions = (try await store.version(), try await other.version())
                    #expect(try await store.count() == 0, "transactions are not catalog content")
                    #expect(versions.0 == versions.1)
                }
            }
        })
        return checks
    }
}
