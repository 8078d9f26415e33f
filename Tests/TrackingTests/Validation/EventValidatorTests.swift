import Foundation
import Testing
@testable import Tracking

@Suite("Event validation: every documented rule, enforced")
struct EventValidatorTests {
    static func event(_ change: (inout TrackingEvent) -> Void) -> TrackingEvent {
        var event = TrackingEvent.productClick(queryId: "123", pid: "p", imgUrl: "https://x/p.jpg", pos: 1)
        change(&event)
        return event
    }

    static let long33 = String(repeating: "a", count: 33)
    static let long65 = String(repeating: "a", count: 65)
    static let long513 = String(repeating: "a", count: 513)

    /// (case, event, field the error must name)
    static let violations: [(String, TrackingEvent, String)] = [
        ("queryId missing on a predefined action", event { $0.queryId = nil }, "queryId"),
        ("queryId empty", event { $0.queryId = "" }, "queryId"),
        ("pid missing on product_click", event { $0.pid = nil }, "pid"),
        ("imgUrl missing on product_click", event { $0.imgUrl = nil }, "imgUrl"),
        ("pos missing on product_click", event { $0.pos = nil }, "pos"),
        ("pos 0", event { $0.pos = 0 }, "pos"),
        ("pos negative", event { $0.pos = -3 }, "pos"),
        ("transactionId missing on transaction", { var e = TrackingEvent.transaction(queryId: "1", transactionId: "t", value: 1); e.transactionId = nil; return e }(), "transactionId"),
        ("value missing on transaction", { var e = TrackingEvent.transaction(queryId: "1", transactionId: "t", value: 1); e.value = nil; return e }(), "value"),
        ("category over 32", event { $0.category = long33 }, "category"),
        ("name over 32", event { $0.name = long33 }, "name"),
        ("label over 32", event { $0.label = long33 }, "label"),
        ("fromReqId over 32", event { $0.fromReqId = long33 }, "fromReqId"),
        ("source over 32", event { $0.source = long33 }, "source"),
        ("brand over 64", event { $0.brand = long65 }, "brand"),
        ("campaign over 64", event { $0.campaign = long65 }, "campaign"),
        ("adGroup over 64", event { $0.adGroup = long65 }, "adGroup"),
        ("creative over 64", event { $0.creative = long65 }, "creative"),
        ("s1 over 64", event { $0.s1 = long65 }, "s1"),
        ("s5 over 64", event { $0.s5 = long65 }, "s5"),
        ("uid over 64", event { $0.uid = long65 }, "uid"),
        ("productUrl over 512", event { $0.productUrl = long513 }, "productUrl"),
        ("imgUrl over 512", event { $0.imgUrl = long513 }, "imgUrl"),
        ("imgUrl no browser can parse (it once broke /analytics)", event { $0.imgUrl = "http://[" }, "imgUrl"),
        ("imgUrl relative", event { $0.imgUrl = "u" }, "imgUrl"),
        ("imgUrl javascript:", event { $0.imgUrl = "javascript:alert(1)" }, "imgUrl"),
        ("imgUrl without a host", event { $0.imgUrl = "https://" }, "imgUrl"),
        ("productUrl ftp:", event { $0.productUrl = "ftp://shop.example/a" }, "productUrl"),
        ("json over 512 bytes", event { $0.json = "\"" + String(repeating: "é", count: 300) + "\"" }, "json"),
        ("json invalid", event { $0.json = "{not json" }, "json"),
        ("currency lower case", event { $0.currency = "usd" }, "currency"),
        ("currency four letters", event { $0.currency = "USDX" }, "currency"),
        ("currency not in ISO 4217", event { $0.currency = "ZZZ" }, "currency"),
        ("price negative", event { $0.price = -0.01 }, "price"),
        ("price infinite", event { $0.price = .infinity }, "price"),
        ("price NaN", event { $0.price = .nan }, "price"),
        ("value NaN", event { $0.value = .nan }, "value"),
        ("n3 infinite", event { $0.n3 = -.infinity }, "n3"),
        ("custom action empty", TrackingEvent(action: .custom("")), "action"),
        ("custom action over 32", TrackingEvent(action: .custom(long33)), "action"),
        ("custom action with a space", TrackingEvent(action: .custom("open app")), "action"),
    ]

    @Test("each violation is rejected naming its field", arguments: 0..<violations.count)
    func violation(index: Int) {
        let (name, event, field) = Self.violations[index]
        do {
            try EventValidator.validate(event)
            Issue.record("\(name): accepted")
        } catch {
            guard case .invalidEvent(let named, let rule) = error else { Issue.record("\(name): \(error)"); return }
            #expect(named == field, "\(name): \(rule)")
            #expect(error.description.contains(field))
        }
    }

    @Test("valid events pass: the guide's examples, limits exactly reached, custom actions without a query")
    func valid() throws {
        try EventValidator.validate(Self.event { _ in })
        try EventValidator.validate(.transaction(queryId: "xxx", transactionId: "your trans id", value: 300))
        try EventValidator.validate(.resultLoad(queryId: "xxx", pid: "your query product id"))
        try EventValidator.validate(Self.event {
            $0.category = String(repeating: "c", count: 32); $0.brand = String(repeating: "b", count: 64)
            $0.productUrl = "https://shop.example/" + String(repeating: "u", count: 512 - 21); $0.currency = "SGD"; $0.price = 0; $0.json = #"{"a":[1,2]}"#
            $0.n1 = -5; $0.s1 = String(repeating: "s", count: 64)
        })
        try EventValidator.validate(TrackingEvent(action: .custom("open_app")))
        try EventValidator.validate(Self.event { $0.imgUrl = "/images/chelsea_cat?size=400"; $0.productUrl = "HTTP://Shop.example:8080/p?id=1#top" })
    }

    @Test("a collector's timestamp window: from 2000 to an hour ahead of its clock; none is fine")
    func timestampWindow() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)  // 2027-01-15
        let nowMs: Int64 = 1_800_000_000_000
        for accepted in [nil, EventValidator.earliestTimestamp, nowMs - 86_400_000 * 400, nowMs, nowMs + 3_600_000] {
            try EventValidator.validateTimestamp(Self.event { $0.timestamp = accepted }, now: now)
        }
        for (refused, words) in [(nowMs + 3_600_001, "ahead"), (1_953_306_000_000, "ahead"), (1_800_000_000, "seconds"), (-1, "before 2000")] {
            #expect(throws: TrackingError.self, "ts \(refused)") {
                try EventValidator.validateTimestamp(Self.event { $0.timestamp = refused }, now: now)
            }
            do { try EventValidator.validateTimestamp(Self.event { $0.timestamp = refused }, now: now) } catch {
                #expect(error.description.contains("ts") && error.description.contains(words), "\(error)")
            }
        }
    }
}
