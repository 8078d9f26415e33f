import SearchEngine
import Foundation
import PostgresNIO
import VisualSearch

/// The data API's insert transactions in the database (migration "v3: insert
/// transactions"): whichever replica runs an insert, every replica answers
/// its status.
extension PostgreSQLCatalogStore {
    public func saveInsertTransaction(_ progress: InsertStatusResponse.Progress) async throws(CatalogStoreError) {
        let json = String(decoding: (try? JSONEncoder().encode(progress)) ?? Data(), as: UTF8.self)
        let id = progress.transactionID, kept = InsertStatusResponse.Progress.transactionsKept
        try await withTransaction { connection in
            try await connection.query("""
                INSERT INTO insert_transactions (trans_id, progress) VALUES (\(id), \(json))
                ON CONFLICT (trans_id) DO UPDATE SET progress = excluded.progress
                """, logger: Self.silent)
            try await connection.query("""
                DELETE FROM insert_transactions WHERE trans_id NOT IN
                    (SELECT trans_id FROM insert_transactions ORDER BY started_at DESC, trans_id DESC LIMIT \(kept))
                """, logger: Self.silent)
        }
    }

    public func insertTransaction(_ id: String) async throws(CatalogStoreError) -> InsertStatusResponse.Progress? {
        if id.contains("\u{0}") { return nil }
        let text: String? = try await withConnection { connection in
            var found: String?
            for try await text in try await connection.query("SELECT progress FROM insert_transactions WHERE trans_id = \(id)",
                                                             logger: Self.silent).decode(String.self) {
                found = text
            }
            return found
        }
        return text.flatMap { try? JSONDecoder().decode(InsertStatusResponse.Progress.self, from: Data($0.utf8)) }
    }
}
