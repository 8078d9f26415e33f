import Foundation
import SearchEngine
import Testing
import VisualSearch
import PostgreSQLCatalog
import TestSupport

/// How a `postgresql://` URL is read: libpq's defaults and password sources,
/// vsearch's own parameters, and a description that never holds the password.
@Suite("PostgreSQL settings")
struct PostgreSQLSettingsTests {
    @Test("user, password, host, port and database from the URL; the description drops the password")
    func fullURL() throws {
        let settings = try PostgreSQLSettings(url: "postgresql://shop:p%40ss@db.example:6543/catalog?sslmode=require", environment: [:])
        #expect(settings.user == "shop" && settings.password == "p@ss")
        #expect(settings.host == "db.example" && settings.port == 6543 && settings.database == "catalog")
        #expect(settings.tls == .require)
        #expect(settings.description == "postgresql://shop@db.example:6543/catalog")
        #expect(!settings.description.contains("p@ss"))
    }

    @Test("libpq's defaults: localhost, 5432, the database named as the user, sslmode prefer, schema public")
    func defaults() throws {
        let settings = try PostgreSQLSettings(url: "postgres://vsearch@/", environment: [:])
        #expect(settings.host == "localhost" && settings.port == 5432 && settings.database == "vsearch")
        #expect(settings.tls == .prefer && settings.schema == "public" && settings.password == nil)
        #expect(settings.connectTimeout == 5 && settings.poolSize == 10)
        let fromEnvironment = try PostgreSQLSettings(url: "postgresql://db.example/shop", environment: ["PGUSER": "reader"])
        #expect(fromEnvironment.user == "reader")
    }

    @Test("the password: the URL's first, then PGPASSWORD, then the password file's first matching line")
    func passwordSources() throws {
        let file = NSTemporaryDirectory() + "pgpass-\(UUID().uuidString)"
        try """
            # comment
            other.example:5432:*:shop:wrong
            db.example:5432:catalog:shop:from\\:file
            *:*:*:*:fallback
            """.write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let url = "postgresql://shop@db.example/catalog"
        #expect(try PostgreSQLSettings(url: url, environment: ["PGPASSFILE": file]).password == "from:file")
        #expect(try PostgreSQLSettings(url: url, environment: ["PGPASSFILE": file, "PGPASSWORD": "env"]).password == "env")
        #expect(try PostgreSQLSettings(url: "postgresql://shop:url@db.example/catalog", environment: ["PGPASSWORD": "env"]).password == "url")
        #expect(try PostgreSQLSettings(url: "postgresql://x@elsewhere/db", environment: ["PGPASSFILE": file]).password == "fallback")
    }

    @Test("vsearch's parameters: schema, connect_timeout, pool_size")
    func parameters() throws {
        let settings = try PostgreSQLSettings(url: "postgresql://u@h/d?schema=shop_1&connect_timeout=2&pool_size=3", environment: [:])
        #expect(settings.schema == "shop_1" && settings.connectTimeout == 2 && settings.poolSize == 3)
        #expect(settings.description == "postgresql://u@h:5432/d?schema=shop_1")
    }

    @Test("k-NN settings: knn, ef_search and exact_below, with documented defaults")
    func nearestNeighbourSettings() throws {
        let defaults = try PostgreSQLSettings(url: "postgresql://u@h/d", environment: [:])
        #expect(defaults.nearestNeighbours == .auto && defaults.efSearch == 100 && defaults.exactBelow == 1000)
        let set = try PostgreSQLSettings(url: "postgresql://u@h/d?knn=approximate&ef_search=40&exact_below=500", environment: [:])
        #expect(set.nearestNeighbours == .approximate && set.efSearch == 40 && set.exactBelow == 500)
        // pgvector allows ef_search up to 1000.
        #expect(try PostgreSQLSettings(url: "postgresql://u@h/d?ef_search=5000", environment: [:]).efSearch == 1000)
    }

    @Test("auto scans exactly for few or too rare matches, a score range or a deep page; the index otherwise", arguments: [
        // (count, matching, catalog size, score range, exact?)
        (10, 1_000_000, 1_000_000, false, false),
        (10, 1_000, 1_000_000, false, true),      // a filter leaving exact_below images
        (10, 100_000, 1_000_000, false, false),   // 10 %: the iterative scan meets ~2000 matches in its 20 000 rows
        (10, 1_999, 1_000_000, false, true),      // 0.2 %: ~40 matches expected, under 4 x 10: a short page is likely
        (10, 2_000, 1_000_000, false, false),     // 0.2 %: 40 expected, enough
        (10, 1_001, 1_001, false, false),         // everything in a small catalog: the index
        (10, 1_000_000, 1_000_000, true, true),   // a score range: the total needs the scan anyway
        (1_001, 1_000_000, 1_000_000, false, true),  // deeper than approximateDepth
        (1_000, 1_000_000, 1_000_000, false, false),
    ])
    func autoChoice(count: Int, matching: Int, catalogSize: Int, scoreRange: Bool, exact: Bool) throws {
        let auto = try PostgreSQLSettings(url: "postgresql://u@h/d", environment: [:])
        #expect(auto.scansExactly(count: count, matching: matching, catalogSize: catalogSize, scoreRange: scoreRange) == exact)
        let exactly = try PostgreSQLSettings(url: "postgresql://u@h/d?knn=exact", environment: [:])
        #expect(exactly.scansExactly(count: count, matching: matching, catalogSize: catalogSize, scoreRange: scoreRange))
        let approximately = try PostgreSQLSettings(url: "postgresql://u@h/d?knn=approximate", environment: [:])
        #expect(!approximately.scansExactly(count: count, matching: matching, catalogSize: catalogSize, scoreRange: scoreRange))
    }

    @Test("a wrong URL or parameter is a catalog error naming it, never the password", arguments: [
        ("mysql://u:secret@h/d", "not a postgresql:// URL"),
        ("postgresql://u:secret@h/d?sslmode=maybe", "sslmode=maybe"),
        ("postgresql://u:secret@h/d?pool_size=0", "pool_size=0"),
        ("postgresql://u:secret@h/d?colour=red", "unknown URL parameter colour"),
        ("postgresql://u:secret@h/d?knn=fast", "knn=fast is not one of auto, exact, approximate"),
        ("postgresql://u:secret@h/d?ef_search=0", "ef_search=0"),
    ])
    func invalid(url: String, expected: String) {
        #expect {
            try PostgreSQLSettings(url: url, environment: [:])
        } throws: { error in
            guard case CatalogStoreError.unusable(let location, let reason) = error else { return false }
            return reason.contains(expected) && !location.contains("secret") && !"\(error)".contains("secret")
        }
    }
}
