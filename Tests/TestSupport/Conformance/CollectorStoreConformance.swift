import Foundation
import SearchEngine
import Testing
import Tracking

/// The ``CollectorStore`` contract of every database store, run by each
/// store's test target: per-event validation, at-most-once storage per event id,
/// content ids for events without one, and the engagement statistics.
public enum CollectorStoreConformance {
    static func click(_ index: Int, id: String? = nil) -> TrackingEvent {
        var event = TrackingEvent.productClick(queryId: "q\(index)", pid: "p\(index)", imgUrl: "https://cdn.example/p\(index).jpg", pos: 1 + index % 4)
        event.eventID = id
        return event
    }

    /// q1: four product views, two clicks, one cart, one transaction; q2: one view.
    static func engagement() -> [TrackingEvent] {
        var events: [TrackingEvent] = []
        for pos in 1...4 { events.append(.productView(queryId: "q1", pid: "p\(pos)", imgUrl: "https://shop.example/p.jpg", pos: pos)) }
        events.append(.productClick(queryId: "q1", pid: "p1", imgUrl: "https://shop.example/p.jpg", pos: 1))
        events.append(.productClick(queryId: "q1", pid: "p2", imgUrl: "https://shop.example/p.jpg", pos: 2))
        events.append(.addToCart(queryId: "q1", pid: "p1", imgUrl: "https://shop.example/p.jpg", pos: 1))
        events.append(.transaction(queryId: "q1", transactionId: "t", value: 10))
        events.append(.linked(.view, queryId: "q2"))
        for index in events.indices {
            events[index].eventID = "e\(index)"
            events[index].timestamp = 1_800_000_000_000 + Int64(index) * 1000
        }
        return events
    }

    /// Every check of the contract, each naming the stores it applies to.
    public static var checks: [ConformanceCheck] {
        var checks: [ConformanceCheck] = []
        checks.append(ConformanceCheck("events are validated one by one: an invalid event is rejected alone with 400 and its reason", stores: [.sqlite, .postgreSQL]) { kind in
            let factory = StoreFactory(kind)
            try await factory.withStore { sut async throws in
                let store = try #require(sut.collector)
                var noPosition = Self.click(3, id: "bad-pos"); noPosition.pos = 0
                var noQuery = Self.click(4, id: "bad-query"); noQuery.queryId = nil
                let results = try await store.receive([Self.click(1, id: "a"), noPosition, Self.click(2, id: "b"), noQuery])
                #expect(results.map(\.code) == [0, 400, 0, 400])
                #expect(results[0] == .accepted && results[2] == .accepted)
                #expect(results[1].message.contains("pos") && results[3].message.contains("queryId"))
                #expect(try await store.eventCount() == 2)
                #expect(try await store.stats(since: nil, limit: 10).actions == ["product_click": 2])
            }
        })
        checks.append(ConformanceCheck("storedEventBytes is the sum of the stored events' JSON (TrackingEvent.storedByteCount): a duplicate or a rejected event adds nothing", stores: [.sqlite, .postgreSQL]) { kind in
            let factory = StoreFactory(kind)
            try await factory.withStore { sut async throws in
                let store = try #require(sut.collector)
                #expect(try await store.storedEventBytes() == 0)
                var invalid = Self.click(5, id: "bad"); invalid.pos = 0
                let sent = [Self.click(1, id: "a"), Self.click(2), invalid]
                _ = try await store.receive(sent)
                _ = try await store.receive([sent[0]])
                #expect(try await store.storedEventBytes() == sent[0].storedByteCount + sent[1].storedByteCount)
            }
        })
        checks.append(ConformanceCheck("storedEvents pages through every stored event once, in the order stored, each with its id", stores: [.sqlite, .postgreSQL]) { kind in
            let factory = StoreFactory(kind)
            try await factory.withStore { sut async throws in
                let store = try #require(sut.collector)
                let sent = (0..<7).map { Self.click($0, id: "e\($0)") } + [Self.click(9)]
                _ = try await store.receive(sent)
                _ = try await store.receive([sent[0]])  // a duplicate is not stored again
                var cursor: Int64 = 0, read: [TrackingEvent] = []
                while true {
                    let page = try await store.storedEvents(after: cursor, limit: 3)
                    guard let last = page.last else { break }
                    #expect(page.count <= 3 && page.map(\.cursor) == page.map(\.cursor).sorted())
                    read += page.map(\.event)
                    cursor = last.cursor
                }
                #expect(read.map(\.eventID) == (0..<7).map { "e\($0)" } + [sent[7].contentID])
                #expect(read.map(\.pid) == sent.map(\.pid))
            }
        })
        checks.append(ConformanceCheck("the timeline counts events per action in buckets starting at multiples of the width, oldest first, since a time", stores: [.sqlite, .postgreSQL]) { kind in
            let factory = StoreFactory(kind)
            try await factory.withStore { sut async throws in
                let store = try #require(sut.collector)
                let hour: Int64 = 3_600_000, base: Int64 = 1_800_000_000 * 1000 / hour * hour  // an hour boundary
                func event(_ index: Int, _ action: TrackingAction, at ts: Int64) -> TrackingEvent {
                    var event = Self.click(index, id: "t\(index)")
                    event.action = action
                    event.timestamp = ts
                    return event
                }
                _ = try await store.receive([
                    event(1, .productClick, at: base + 10), event(2, .productClick, at: base + hour - 1), event(3, .productView, at: base + 5),
                    event(4, .productView, at: base + 2 * hour + 7), event(5, .productClick, at: base - 1),
                ])
                let all = try await store.timeline(since: nil, bucketSeconds: 3600)
                #expect(all.bucketSeconds == 3600)
                #expect(all.buckets == [
                    .init(start: base - hour, counts: ["product_click": 1]),
                    .init(start: base, counts: ["product_click": 2, "product_view": 1]),
                    .init(start: base + 2 * hour, counts: ["product_view": 1]),
                ])
                let recent = try await store.timeline(since: Date(timeIntervalSince1970: Double(base + hour) / 1000), bucketSeconds: 86_400)
                #expect(recent.buckets.map { $0.counts } == [["product_view": 1]])
                #expect(recent.buckets.allSatisfy { $0.start % 86_400_000 == 0 })
            }
        })
        checks.append(ConformanceCheck("a query's row carries the picture and label of its result_load; product rows carry none", stores: [.sqlite, .postgreSQL]) { kind in
            let factory = StoreFactory(kind)
            try await factory.withStore { sut async throws in
                let store = try #require(sut.collector)
                var load = TrackingEvent.resultLoad(queryId: "q-pic")
                load.imgUrl = "http://127.0.0.1:8080/images/chelsea_cat?size=400"
                load.label = "similar:chelsea_cat"
                load.eventID = "rl1"
                var plain = TrackingEvent.resultLoad(queryId: "q-plain")
                plain.eventID = "rl2"
                var click = Self.click(1, id: "pc1")
                click.queryId = "q-pic"
                _ = try await store.receive([load, plain, click])
                let stats = try await store.stats(since: nil, limit: 10)
                let pictured = try #require(stats.queries.first { $0.key == "q-pic" })
                #expect(pictured.imageURL == load.imgUrl && pictured.label == "similar:chelsea_cat" && pictured.clicks == 1)
                let unpictured = try #require(stats.queries.first { $0.key == "q-plain" })
                #expect(unpictured.imageURL == nil && unpictured.label == nil)
                #expect(stats.products.allSatisfy { $0.imageURL == nil && $0.label == nil })
            }
        })
        checks.append(ConformanceCheck("an event is stored at most once per event id; a resent event is accepted, not stored again", stores: [.sqlite, .postgreSQL]) { kind in
            let factory = StoreFactory(kind)
            try await factory.withStore { sut async throws in
                let store = try #require(sut.collector)
                let a = Self.click(1, id: "a"), b = Self.click(2, id: "b")
                #expect(try await store.receive([a, b, a]).map(\.code) == [0, 0, 0])
                #expect(try await store.eventCount() == 2)
                #expect(try await store.receive([b, a]).map(\.code) == [0, 0])
                #expect(try await store.eventCount() == 2)
                // The same id with other content is still the same event: the first one stays.
                var changed = Self.click(3, id: "a")
                changed.action = .productView
                _ = try await store.receive([changed])
                #expect(try await store.eventCount() == 2)
                #expect(try await store.stats(since: nil, limit: 10).actions == ["product_click": 2])
            }
        })
        checks.append(ConformanceCheck("an event without an id is identified by its content: resent, it is stored once; different ones are all stored", stores: [.sqlite, .postgreSQL]) { kind in
            let factory = StoreFactory(kind)
            try await factory.withStore { sut async throws in
                let store = try #require(sut.collector)
                var anonymous = Self.click(1)
                anonymous.timestamp = 1_800_000_000_000
                #expect(try await store.receive([anonymous, anonymous]).map(\.code) == [0, 0])
                _ = try await store.receive([anonymous])
                #expect(try await store.eventCount() == 1)
                var emptyID = anonymous
                emptyID.eventID = ""
                _ = try await store.receive([emptyID])
                #expect(try await store.eventCount() == 1)
                var other = anonymous
                other.pos = 4
                _ = try await store.receive([other, Self.click(2)])
                #expect(try await store.eventCount() == 3)
                // An explicit id that happens to equal another event's content id is the same event.
                _ = try await store.receive([Self.click(9, id: anonymous.contentID)])
                #expect(try await store.eventCount() == 3)
            }
        })
        checks.append(ConformanceCheck("another instance on the same location sees the events", stores: [.sqlite, .postgreSQL]) { kind in
            let factory = StoreFactory(kind)
            try await factory.withStore { sut async throws in
                let collector = try #require(sut.collector)
                _ = try await collector.receive([Self.click(1, id: "a"), Self.click(2, id: "b")])
                try await sut.withAnother { another async throws in
                    let other = try #require(another.collector)
                    #expect(try await other.eventCount() == 2)
                    _ = try await other.receive([Self.click(1, id: "a"), Self.click(3, id: "c")])
                    #expect(try await collector.eventCount() == 3)
                }
            }
        })
        checks.append(ConformanceCheck("stats: views, clicks, carts, transactions, click-through rate and conversion per query and per product", stores: [.sqlite, .postgreSQL]) { kind in
            let factory = StoreFactory(kind)
            try await factory.withStore { sut async throws in
                let store = try #require(sut.collector)
                _ = try await store.receive(Self.engagement())
                let stats = try await store.stats(since: nil, limit: 10)
                #expect(stats.total == 9)
                #expect(stats.actions == ["product_view": 4, "product_click": 2, "add_to_cart": 1, "transaction": 1, "view": 1])

                #expect(stats.queries.map(\.key) == ["q1", "q2"])  // most clicked first
                #expect(stats.queries[0] == EventStats.Row(key: "q1", views: 4, clicks: 2, addToCarts: 1, transactions: 1))
                #expect(stats.queries[0].clickThroughRate == 0.5 && stats.queries[0].conversion == 0.5)
                #expect(stats.queries[1] == EventStats.Row(key: "q2", views: 1, clicks: 0, addToCarts: 0, transactions: 0))
                #expect(stats.queries[1].clickThroughRate == 0 && stats.queries[1].conversion == nil)

                // By product: clicks first, then views, then key; the transaction has no pid.
                #expect(stats.products == [
                    EventStats.Row(key: "p1", views: 1, clicks: 1, addToCarts: 1, transactions: 0),
                    EventStats.Row(key: "p2", views: 1, clicks: 1, addToCarts: 0, transactions: 0),
                    EventStats.Row(key: "p3", views: 1, clicks: 0, addToCarts: 0, transactions: 0),
                    EventStats.Row(key: "p4", views: 1, clicks: 0, addToCarts: 0, transactions: 0),
                ])
                #expect(stats.products[0].clickThroughRate == 1 && stats.products[2].clickThroughRate == 0)
            }
        })
        checks.append(ConformanceCheck("stats: the limit caps the rows per table", stores: [.sqlite, .postgreSQL]) { kind in
            let factory = StoreFactory(kind)
            try await factory.withStore { sut async throws in
                let store = try #require(sut.collector)
                _ = try await store.receive(Self.engagement())
                let stats = try await store.stats(since: nil, limit: 1)
                #expect(stats.queries.map(\.key) == ["q1"])
                #expect(stats.products.map(\.key) == ["p1"])
                #expect(stats.total == 9)
            }
        })
        checks.append(ConformanceCheck("stats: since counts only events at or after it", stores: [.sqlite, .postgreSQL]) { kind in
            let factory = StoreFactory(kind)
            try await factory.withStore { sut async throws in
                let store = try #require(sut.collector)
                _ = try await store.receive(Self.engagement())
                let start = Date(timeIntervalSince1970: 1_800_000_000)
                #expect(try await store.stats(since: start.addingTimeInterval(-1), limit: 10).total == 9)
                #expect(try await store.stats(since: start, limit: 10).total == 9)
                // Events 4...8 are at start + 4 s ... start + 8 s: two clicks, a cart, a transaction, a view.
                let later = try await store.stats(since: start.addingTimeInterval(4), limit: 10)
                #expect(later.total == 5)
                #expect(later.actions == ["product_click": 2, "add_to_cart": 1, "transaction": 1, "view": 1])
                #expect(later.queries.first { $0.key == "q1" } == EventStats.Row(key: "q1", views: 0, clicks: 2, addToCarts: 1, transactions: 1))
                #expect(try await store.stats(since: start.addingTimeInterval(9), limit: 10).total == 0)
                #expect(try await store.stats(since: Date(timeIntervalSince1970: 1_900_000_000), limit: 10) == EventStats(total: 0, actions: [:], queries: [], products: []))
            }
        })
        checks.append(ConformanceCheck("an event without a timestamp is stamped on arrival", stores: [.sqlite, .postgreSQL]) { kind in
            let factory = StoreFactory(kind)
            try await factory.withStore { sut async throws in
                let store = try #require(sut.collector)
                let before = Date().addingTimeInterval(-60)
                _ = try await store.receive([Self.click(1, id: "now")])
                #expect(try await store.stats(since: before, limit: 10).total == 1)
                #expect(try await store.stats(since: Date().addingTimeInterval(3600), limit: 10).total == 0)
            }
        })
        return checks
    }
}
