import Foundation
import TestSupport
import Testing

/// A fresh catalog location of each database store, opened the way `vsearch`
/// opens one (`CatalogLocation.openCatalog`): for the roles a store offers
/// through `OpenedCatalog` (``CatalogBackup``, ``CatalogSnapshots``).
struct LocationFactory: Sendable, CustomTestStringConvertible {
    let name: String
    let make: @Sendable () throws -> String

    var testDescription: String { name }

    static let sqlite = LocationFactory(name: "SQLite") { Repository.temporaryDirectory("location") + "/catalog.sqlite" }
    static let postgreSQL = LocationFactory(name: "PostgreSQL") { try PostgreSQLTestDatabase.freshURL() }

    /// SQLite always; PostgreSQL when a test server is configured, and always in CI.
    static let all: [LocationFactory] = PostgreSQLTestDatabase.isRequired ? [.sqlite, .postgreSQL] : [.sqlite]
}
