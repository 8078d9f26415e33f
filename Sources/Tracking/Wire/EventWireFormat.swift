import Foundation

/// The analytics wire format (docs/wire-protocol.md §5): the short parameter
/// names, the single-event pixel query string and the batch JSON body —
/// both ways, since the local collector decodes what the tracker encodes.
///
/// | field | wire | field | wire |
/// |---|---|---|---|
/// | category | `cat` | transactionId | `transId` |
/// | campaign | `c` | adGroup | `cag` |
/// | creative | `cc` | timestamp (ms) | `ts` |
/// | eventID | `eid` (ours: the dedup key) | imgUrl | `imUrl` |
///
/// Every other field keeps its name (`queryId`, `pid`, `pos`, `n1`, `s1`, …).
///
/// ```swift
/// let query = EventWireFormat.query(event, code: "APP:1")      // "action=product_click&code=APP%3A1&…"
/// let events = try EventWireFormat.events(fromBatch: body)     // what a collector receives
/// ```
public enum EventWireFormat {
    /// `sdk` sent with every event.
    public static let sdk = "vsearch swift"
    /// `v` sent with every event.
    public static let version = "0.1.0"

    /// Device fields sent with every event: platform `p`, `os`, `osv`
    /// (the mobile SDKs send `Mobile`, `iOS`, `17.2`…).
    public static let device: [(String, String)] = {
        #if os(Linux)
        let os = "Linux"
        #elseif os(macOS)
        let os = "macOS"
        #else
        let os = "Other"
        #endif
        let version = ProcessInfo.processInfo.operatingSystemVersion
        return [("p", "Server"), ("os", os), ("osv", "\(version.majorVersion).\(version.minorVersion)")]
    }()

    /// The event's wire parameters (absent fields omitted), plus `code`,
    /// `sdk`, `v` and the ``device`` fields.
    public static func parameters(_ event: TrackingEvent, code: String?) -> [(String, String)] {
        var out: [(String, String)] = [("action", event.action.rawValue), ("sdk", sdk), ("v", version)] + device
        if let code { out.append(("code", code)) }
        func add(_ name: String, _ value: String?) { if let value, !value.isEmpty { out.append((name, value)) } }
        func add(_ name: String, _ value: Double?) { if let value { out.append((name, number(value))) } }
        add("queryId", event.queryId); add("pid", event.pid); add("imUrl", event.imgUrl)
        if let pos = event.pos { out.append(("pos", String(pos))) }
        add("transId", event.transactionId); add("value", event.value); add("uid", event.uid); add("sid", event.sid)
        add("cat", event.category); add("name", event.name); add("label", event.label); add("fromReqId", event.fromReqId)
        add("source", event.source); add("brand", event.brand); add("price", event.price); add("currency", event.currency)
        add("productUrl", event.productUrl); add("c", event.campaign); add("cag", event.adGroup); add("cc", event.creative)
        add("n1", event.n1); add("n2", event.n2); add("n3", event.n3); add("n4", event.n4); add("n5", event.n5)
        add("s1", event.s1); add("s2", event.s2); add("s3", event.s3); add("s4", event.s4); add("s5", event.s5)
        add("json", event.json); add("eid", event.eventID)
        if let ts = event.timestamp { out.append(("ts", String(ts))) }
        return out
    }

    /// `300` for integral values, else Swift's shortest round-trip form.
    static func number(_ value: Double) -> String {
        value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : String(value)
    }

    /// The pixel GET's query string: keys sorted, the Swift SDK's percent-encoding.
    public static func query(_ event: TrackingEvent, code: String?) -> String {
        parameters(event, code: code).sorted { $0.0 < $1.0 }.map { escape($0.0) + "=" + escape($0.1) }.joined(separator: "&")
    }

    /// The batch POST body: `{"v":…,"sdk":…,"uid":…,"events":[{…}]}`, each
    /// event's keys in wire order. Written directly (every value is a string):
    /// Foundation's serializer with sorted keys spent most of delivery's CPU
    /// collating keys through ICU.
    public static func batchBody(_ events: [TrackingEvent], uid: String?) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(events.count * 400 + 64)
        out += Array(#"{"v":"#.utf8)
        appendJSONString(version, to: &out)
        out += Array(#","sdk":"#.utf8)
        appendJSONString(sdk, to: &out)
        if let uid {
            out += Array(#","uid":"#.utf8)
            appendJSONString(uid, to: &out)
        }
        out += Array(#","events":["#.utf8)
        for (index, event) in events.enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            out.append(UInt8(ascii: "{"))
            for (position, (name, value)) in parameters(event, code: nil).enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                appendJSONString(name, to: &out)
                out.append(UInt8(ascii: ":"))
                appendJSONString(value, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
        out += Array("]}".utf8)
        return out
    }

    /// A JSON string literal (RFC 8259 escaping).
    static func appendJSONString(_ text: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0x00..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                out += [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"), hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    /// An event from wire parameters (a pixel query or one batch entry).
    /// The JS tracker's literal `"null"` counts as absent.
    /// - Throws: ``TrackingError/invalidEvent(field:rule:)`` for a missing action or a malformed number.
    public static func event(from parameters: [String: String]) throws(TrackingError) -> TrackingEvent {
        let values = parameters.filter { $0.value != "null" && !$0.value.isEmpty }
        guard let action = values["action"] else { throw .invalidEvent(field: "action", rule: "required") }
        var event = TrackingEvent(action: TrackingAction(rawValue: action))
        func double(_ name: String) throws(TrackingError) -> Double? {
            guard let text = values[name] else { return nil }
            guard let number = Double(text) else { throw .invalidEvent(field: name, rule: "\"\(text)\" is not a number") }
            return number
        }
        event.queryId = values["queryId"]; event.pid = values["pid"]; event.imgUrl = values["imUrl"]
        if let pos = values["pos"] {
            guard let number = Int(pos) else { throw .invalidEvent(field: "pos", rule: "\"\(pos)\" is not an integer") }
            event.pos = number
        }
        event.transactionId = values["transId"]; event.value = try double("value"); event.uid = values["uid"]; event.sid = values["sid"]
        event.category = values["cat"]; event.name = values["name"]; event.label = values["label"]; event.fromReqId = values["fromReqId"]
        event.source = values["source"]; event.brand = values["brand"]; event.price = try double("price"); event.currency = values["currency"]
        event.productUrl = values["productUrl"]; event.campaign = values["c"]; event.adGroup = values["cag"]; event.creative = values["cc"]
        event.n1 = try double("n1"); event.n2 = try double("n2"); event.n3 = try double("n3"); event.n4 = try double("n4"); event.n5 = try double("n5")
        event.s1 = values["s1"]; event.s2 = values["s2"]; event.s3 = values["s3"]; event.s4 = values["s4"]; event.s5 = values["s5"]
        event.json = values["json"]; event.eventID = values["eid"]
        if let ts = values["ts"] {
            // A fractional or exponent form (JS sends 1.7e12) is truncated; one outside Int64, or
            // not finite, is refused (converting it would trap).
            guard let number = Int64(ts) ?? Double(ts).flatMap({ Int64(exactly: $0.rounded(.towardZero)) }) else {
                throw .invalidEvent(field: "ts", rule: "\"\(ts)\" is not milliseconds")
            }
            event.timestamp = number
        }
        return event
    }

    /// The entries of a batch body, each as wire parameters (numbers and
    /// booleans rendered as text), with the body's `uid` as each entry's default.
    /// - Throws: ``TrackingError/invalidEvent(field:rule:)`` with field `body` when it is not a batch.
    public static func entries(fromBatch body: [UInt8]) throws(TrackingError) -> [[String: String]] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any],
              let events = object["events"] as? [Any] else {
            throw .invalidEvent(field: "body", rule: "not a batch: expected {\"events\":[{…}]}")
        }
        let uid = object["uid"] as? String
        return events.map { entry in
            var parameters: [String: String] = [:]
            for (key, value) in entry as? [String: Any] ?? [:] {
                switch value {
                case let text as String: parameters[key] = text
                case let number as NSNumber: parameters[key] = number.stringValue
                default: break
                }
            }
            if parameters["uid"] == nil, let uid { parameters["uid"] = uid }
            return parameters
        }
    }

    /// Percent-encoding as the Swift SDK: `urlQueryAllowed` minus `:#[]@!$&'()*+,;=`.
    public static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }

    static let allowed: CharacterSet = {
        var set = CharacterSet.urlQueryAllowed
        set.remove(charactersIn: ":#[]@!$&'()*+,;=")
        return set
    }()

    /// Parses a query string into parameters (the last value of a repeated key wins).
    public static func parameters(fromQuery query: String) -> [String: String] {
        var out: [String: String] = [:]
        for pair in query.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (text: Substring) in String(text).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(text) }
            let name = decode(parts[0])
            if !name.isEmpty { out[name] = parts.count > 1 ? decode(parts[1]) : "" }
        }
        return out
    }
}
