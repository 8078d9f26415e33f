import Foundation
import GRDB
import SearchEngine
import VisualSearch

/// The data API's insert transactions, in the catalog file (migration "v3: insert transactions").
extension SQLiteCatalogStore {
    public func saveInsertTransaction(_ progress: InsertStatusResponse.Progress) async throws(CatalogStoreError) {
        let json = String(decoding: (try? JSONEncoder().encode(progress)) ?? Data(), as: UTF8.self)
        try await write { db in
            try db.execute(sql: """
                INSERT INTO insert_transactions (trans_id, progress, started_at) VALUES (?, ?, ?)
                ON CONFLICT (trans_id) DO UPDATE SET progress = excluded.progress
                """, arguments: [progress.transactionID, json, Date().timeIntervalSince1970])
            try db.execute(sql: """
                DELETE FROM insert_transactions WHERE trans_id NOT IN
                    (SELECT trans_id FROM insert_transactions ORDER BY started_at DESC, trans_id DESC LIMIT ?)
                """, arguments: [InsertStatusResponse.Progress.transactionsKept])
        }
    }

    public func insertTransaction(_ id: String) async throws(CatalogStoreError) -> InsertStatusResponse.Progress? {
        let text = try await read { db in try String.fetchOne(db, sql: "SELECT progress FROM insert_transactions WHERE trans_id = ?", arguments: [id]) }
        return text.flatMap { try? JSONDecoder().decode(InsertStatusResponse.Progress.self, from: Data($0.utf8)) }
    }
}
