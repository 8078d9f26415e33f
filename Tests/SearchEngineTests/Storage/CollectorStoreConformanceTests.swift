import Foundation
import GRDB
import Testing
@testable import Tracking

@Suite("Collector store")
struct EventStoreTests {
    @Test("dedup by event id; invalid events rejected alone; events without id get one from their content")
    func receive() throws {
        let store = try EventStore(path: Temp.path("c.sqlite"))
        var a = click(1); a.eventID = "a"
        var b = click(2); b.eventID = "b"
        var bad = click(3); bad.pos = 0
        let results = try store.receive([a, b, bad, a])
        #expect(results.map(\.code) == [0, 0, 400, 0] && results[2].message.contains("pos"))
        #expect(try store.count() == 2)
        let anonymous = click(4)
        _ = try store.receive([anonymous, anonymous])
        #expect(try store.count() == 3)
    }

    @Test("stats: views, clicks, carts, transactions, CTR and conversion per query and per product")
    func stats() throws {
        let store = try EventStore(path: Temp.path("c.sqlite"))
        var events: [TrackingEvent] = []
        for pos in 1...4 { events.append(.productView(queryId: "q1", pid: "p\(pos)", imgUrl: "u", pos: pos)) }
        events.append(.productClick(queryId: "q1", pid: "p1", imgUrl: "u", pos: 1))
        events.append(.productClick(queryId: "q1", pid: "p2", imgUrl: "u", pos: 2))
        events.append(.addToCart(queryId: "q1", pid: "p1", imgUrl: "u", pos: 1))
        events.append(.transaction(queryId: "q1", transactionId: "t", value: 10))
        events.append(.linked(.view, queryId: "q2"))
        for (index, var event) in events.enumerated() { event.eventID = "e\(index)"; event.timestamp = 1_800_000_000_000; events[index] = event }
        _ = try store.receive(events)
        let stats = try store.stats()
        #expect(stats.total == 9 && stats.actions["product_view"] == 4)
        let q1 = try #require(stats.queries.first { $0.key == "q1" })
        #expect(q1.views == 4 && q1.clicks == 2 && q1.addToCarts == 1 && q1.transactions == 1)
        #expect(q1.clickThroughRate == 0.5 && q1.conversion == 0.5)
        let p1 = try #require(stats.products.first { $0.key == "p1" })
        #expect(p1.views == 1 && p1.clicks == 1 && p1.addToCarts == 1 && p1.clickThroughRate == 1)
        #expect(stats.queries.first { $0.key == "q2" }?.clickThroughRate == 0)
        #expect(try store.stats(since: Date(timeIntervalSince1970: 1_900_000_000)).total == 0)
    }

    @Test("shares the catalog's file without touching its migrations or application id")
    func coexists() throws {
        let path = Temp.path("catalog.sqlite")
        let pool = try DatabasePool(path: path)
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1: images") { db in try db.execute(sql: "CREATE TABLE images (id INTEGER PRIMARY KEY)") }
        try pool.write { db in try db.execute(sql: "PRAGMA application_id = 1987273576") }
        try migrator.migrate(pool)
        _ = try EventStore(path: path)
        _ = try EventStore(path: path)  // reopening applies nothing twice
        #expect(try pool.read { db in try migrator.hasCompletedMigrations(db) })
        #expect(try pool.read { db in try Int32.fetchOne(db, sql: "PRAGMA application_id") } == 1987273576)
        #expect(try pool.read { db in try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM tracking_migrations") } == 1)
    }
}
