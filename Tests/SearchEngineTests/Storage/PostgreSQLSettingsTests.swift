import Foundation
import SearchEngine
import Testing
import VisualSearch

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

    @Test("a wrong URL or parameter is a catalog error naming it, never the password", arguments: [
        ("mysql://u:secret@h/d", "not a postgresql:// URL"),
        ("postgresql://u:secret@h/d?sslmode=maybe", "sslmode=maybe"),
        ("postgresql://u:secret@h/d?pool_size=0", "pool_size=0"),
        ("postgresql://u:secret@h/d?colour=red", "unknown URL parameter colour"),
    ])
    func invalid(url: String, expected: String) {
        #expect {
            try PostgreSQLSettings(url: url, environment: [:])
        } throws: { error in
            guard case VisualSearchError.catalog(let location, let reason) = error else { return false }
            return reason.contains(expected) && !location.contains("secret") && !"\(error)".contains("secret")
        }
    }
}
