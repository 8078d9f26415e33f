import Foundation
import TestSupport
import Testing
@testable import Tracking

@Suite("Analytics wire format")
struct EventWireFormatTests {
    static var full: TrackingEvent {
        var event = TrackingEvent.productClick(queryId: "1158812345678901234", pid: "dress 17", imgUrl: "https://cdn.example/d.jpg", pos: 3)
        event.category = "search_results"; event.campaign = "spring"; event.adGroup = "g"; event.creative = "c1"
        event.price = 59.9; event.currency = "USD"; event.n1 = 2; event.s1 = "a:b"; event.uid = "u1"; event.sid = "s1"
        event.eventID = "e-1"; event.timestamp = 1_800_000_000_123
        return event
    }

    @Test("the pixel query: short names, sorted keys, the Swift SDK's escaping, device fields")
    func pixelGolden() {
        let device = EventWireFormat.device.map { "\($0.0)=\($0.1)" }
        #expect(device.first == "p=Server" && device.count == 3)
        let expected = "action=product_click&c=spring&cag=g&cat=search_results&cc=c1&code=APP%3A1&currency=USD&eid=e-1&imUrl=https%3A//cdn.example/d.jpg"
            + "&n1=2&\(device[1])&\(device[2])&\(device[0])&pid=dress%2017&pos=3&price=59.9&queryId=1158812345678901234&s1=a%3Ab&sdk=vsearch%20swift&sid=s1"
            + "&ts=1800000000123&uid=u1&v=0.1.0"
        #expect(EventWireFormat.query(Self.full, code: "APP:1") == expected)
    }

    @Test("round trip through the pixel query and through a batch body")
    func roundTrip() throws {
        let decoded = try EventWireFormat.event(from: EventWireFormat.parameters(fromQuery: EventWireFormat.query(Self.full, code: "x")))
        #expect(decoded == Self.full)
        let body = EventWireFormat.batchBody([Self.full, click(1)], uid: "u1")
        let entries = try EventWireFormat.entries(fromBatch: body)
        #expect(entries.count == 2)
        #expect(try EventWireFormat.event(from: entries[0]) == Self.full)
        #expect(entries[1]["uid"] == "u1")  // the body's uid is each entry's default
        let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
        #expect(object?["sdk"] as? String == "vsearch swift" && (object?["events"] as? [Any])?.count == 2)
    }

    @Test("batch bodies escape what JSON requires and parse back exactly")
    func escaping() throws {
        var event = click(1)
        event.label = "quote \" back\\slash\nnew\u{01}é"
        let entries = try EventWireFormat.entries(fromBatch: EventWireFormat.batchBody([event], uid: nil))
        #expect(try EventWireFormat.event(from: entries[0]) == event)
    }

    @Test("the JS tracker's literal \"null\" is absent; malformed numbers are named")
    func lenientAndStrict() throws {
        let event = try EventWireFormat.event(from: ["action": "click", "queryId": "1", "db": "null", "label": "null"])
        #expect(event.label == nil)
        #expect(throws: TrackingError.invalidEvent(field: "pos", rule: "\"x\" is not an integer")) { try EventWireFormat.event(from: ["action": "click", "pos": "x"]) }
        #expect(throws: TrackingError.self) { try EventWireFormat.event(from: ["queryId": "1"]) }
        #expect(throws: TrackingError.self) { try EventWireFormat.entries(fromBatch: Array("[1,2]".utf8)) }
    }

    @Test("a timestamp beyond Int64 or not finite is refused, not a crash (fuzz findings in Fuzz/Regressions/events, query)",
          arguments: ["7e21", "7e22", "-1e19", "9223372036854775808", "1e309", "nan", "inf", "-inf"])
    func timestampOutOfRange(ts: String) {
        #expect(throws: TrackingError.invalidEvent(field: "ts", rule: "\"\(ts)\" is not milliseconds")) {
            try EventWireFormat.event(from: ["action": "search", "ts": ts])
        }
    }

    @Test("the fuzzer's inputs that crashed the collector are refused: a batch and a pixel query with ts 7e21")
    func timestampFuzzRegressions() throws {
        let entries = try EventWireFormat.entries(fromBatch: Array(#"{"events":[{"action":"n","ts":7e21}]}"#.utf8))
        #expect(throws: TrackingError.self) { try EventWireFormat.event(from: entries[0]) }
        #expect(throws: TrackingError.self) { try EventWireFormat.event(from: EventWireFormat.parameters(fromQuery: "action=u&ts=7e22")) }
        // Exponent and fractional forms within range still read, truncated.
        #expect(try EventWireFormat.event(from: ["action": "search", "ts": "1.7e12"]).timestamp == 1_700_000_000_000)
        #expect(try EventWireFormat.event(from: ["action": "search", "ts": "-2.9"]).timestamp == -2)
    }
}
