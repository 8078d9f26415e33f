import Foundation
import Testing

/// A fresh catalog location of each database store, opened the way `vsearch`
/// opens one (`CatalogLocation.withCatalog`): for the roles a store offers
/// through `OpenedCatalog` (``CatalogBackup``, ``CatalogSnapshots``).
public struct LocationFactory: Sendable, CustomTestStringConvertible {
    public let name: String
    public let make: @Sendable () throws -> String

    public var testDescription: String { name }

    public static let sqlite = LocationFactory(name: "SQLite") { Repository.temporaryDirectory("location") + "/catalog.sqlite" }
    public static let postgreSQL = LocationFactory(name: "PostgreSQL") { try PostgreSQLTestDatabase.freshURL() }

    public init(name: String, make: @escaping @Sendable () throws -> String) {
        self.name = name
        self.make = make
    }

    /// The factory of `kind` (a database: the in-memory store has no location).
    public init(_ kind: StoreKind) {
        switch kind {
        case .sqlite: self = .sqlite
        case .postgreSQL: self = .postgreSQL
        case .inMemory: preconditionFailure("the in-memory store has no location")
        }
    }
}
