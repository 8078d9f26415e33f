import Foundation

/// The rules of the ViSearch guide's event table (§7.2), enforced — the
/// public SDKs document them but send whatever they are given.
///
/// | rule | fields |
/// |---|---|
/// | required for every predefined action | `queryId` |
/// | required for product_click, product_view, add_to_cart, add_to_wishlist | `pid`, `imgUrl`, `pos` |
/// | required for transaction | `transactionId`, `value` |
/// | at most 32 characters | `category`, `name`, `label`, `fromReqId`, `source`, a custom action |
/// | at most 64 | `brand`, `campaign`, `adGroup`, `creative`, `s1`…`s5`, `uid` |
/// | at most 512 | `productUrl`, `imgUrl`, `json` (bytes) |
/// | an absolute `http`/`https` URL with a host, or a path from `/` | `productUrl`, `imgUrl` |
/// | at most 256 | `queryId`, `pid`, `transactionId`, `eventID`, `sid` (not in the guide: a sanity bound) |
/// | ISO 4217 (three capital letters, a known code) | `currency` |
/// | finite and ≥ 0 | `price` |
/// | finite | `value`, `n1`…`n5` |
/// | ≥ 1 | `pos` |
/// | valid JSON | `json` |
/// | no control characters (U+0000–U+001F, U+007F–U+009F); `json` may hold tab, CR and LF | every text field |
///
/// Control characters have no place in an event, and printed by a
/// statistics table they would drive the terminal (a title changed, a row
/// forged), so an event carrying one is refused naming the field. Bidi marks
/// and overrides are text in right-to-left languages: they are accepted, and
/// escaped wherever vsearch prints them.
///
/// Custom actions need only a name: non-empty, at most 32 characters, no
/// spaces or control characters. Empty strings count as absent.
///
/// ```swift
/// try EventValidator.validate(event)   // throws .invalidEvent(field: "currency", rule: "…")
/// ```
public enum EventValidator {
    /// The fields `action` requires, in the guide's order: `queryId` for every
    /// predefined action; `pid`, `imgUrl`, `pos` for the product actions;
    /// `transactionId`, `value` for a transaction.
    public static func requiredFields(for action: TrackingAction) -> [String] {
        if case .custom = action { return [] }
        return ["queryId"] + (action.isProductAction ? ["pid", "imgUrl", "pos"] : [])
            + (action == .transaction ? ["transactionId", "value"] : [])
    }

    /// Every required field `event` lacks (empty text counts as absent), in ``requiredFields(for:)``'s order.
    public static func missingRequiredFields(_ event: TrackingEvent) -> [String] {
        let present: [String: Bool] = [
            "queryId": !(event.queryId ?? "").isEmpty, "pid": !(event.pid ?? "").isEmpty, "imgUrl": !(event.imgUrl ?? "").isEmpty,
            "pos": event.pos != nil, "transactionId": !(event.transactionId ?? "").isEmpty, "value": event.value != nil,
        ]
        return requiredFields(for: event.action).filter { present[$0] != true }
    }

    /// Checks every rule; the first one broken is thrown.
    /// - Throws: ``TrackingError/invalidEvent(field:rule:)`` naming the field and the rule.
    public static func validate(_ event: TrackingEvent) throws(TrackingError) {
        try validateAction(event.action)
        if let missing = missingRequiredFields(event).first { throw .invalidEvent(field: missing, rule: "required for \(event.action)") }
        for (value, field) in textFields(event) {
            guard let value, let control = value.unicodeScalars.first(where: { isControl($0) && !(field == "json" && "\t\n\r".unicodeScalars.contains($0)) })
            else { continue }
            throw .invalidEvent(field: field, rule: "contains the control character U+\(String(format: "%04X", control.value)); "
                                + "event fields are text without control characters")
        }
        for (value, field, limit) in lengthRules(event) {
            if let value, value.count > limit {
                throw .invalidEvent(field: field, rule: "\(value.count) characters is over the maximum of \(limit)")
            }
        }
        for (value, field) in [(event.imgUrl, "imgUrl"), (event.productUrl, "productUrl")] {
            if let value, !value.isEmpty { try validateURL(value, field: field) }
        }
        if let json = event.json, !json.isEmpty {
            guard json.utf8.count <= 512 else { throw .invalidEvent(field: "json", rule: "\(json.utf8.count) bytes is over the maximum of 512") }
            guard (try? JSONSerialization.jsonObject(with: Data(json.utf8), options: [.fragmentsAllowed])) != nil else {
                throw .invalidEvent(field: "json", rule: "not valid JSON")
            }
        }
        if let pos = event.pos, pos < 1 { throw .invalidEvent(field: "pos", rule: "\(pos) is below 1 (positions start at 1)") }
        if let price = event.price {
            guard price.isFinite, price >= 0 else { throw .invalidEvent(field: "price", rule: "\(price) is not a finite number ≥ 0") }
        }
        let numbers: [(Double?, String)] = [(event.value, "value"), (event.n1, "n1"), (event.n2, "n2"), (event.n3, "n3"), (event.n4, "n4"), (event.n5, "n5")]
        for (number, field) in numbers {
            if let number, !number.isFinite { throw .invalidEvent(field: field, rule: "\(number) is not a finite number") }
        }
        if let currency = event.currency, !currency.isEmpty { try validateCurrency(currency) }
    }

    static func validateAction(_ action: TrackingAction) throws(TrackingError) {
        guard case .custom(let name) = action else { return }
        guard !name.isEmpty else { throw .invalidEvent(field: "action", rule: "empty") }
        guard name.count <= 32 else { throw .invalidEvent(field: "action", rule: "\(name.count) characters is over the maximum of 32") }
        guard !name.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 || $0.value == 0x7F }) else {
            throw .invalidEvent(field: "action", rule: "\"\(name)\" contains spaces or control characters")
        }
    }

    /// An absolute `http`/`https` URL with a host, or an absolute path on the
    /// page's own site (`/images/x`): what a page can load and what
    /// `/analytics` can show (a value it could not parse once broke that page for everyone).
    static func validateURL(_ text: String, field: String) throws(TrackingError) {
        let valid: Bool
        if let components = URLComponents(string: text), URL(string: text) != nil {
            if let scheme = components.scheme?.lowercased() {
                valid = (scheme == "http" || scheme == "https") && !(components.host ?? "").isEmpty
            } else {
                valid = text.hasPrefix("/") && !text.hasPrefix("//") && components.host == nil
            }
        } else {
            valid = false
        }
        guard valid else {
            throw .invalidEvent(field: field, rule: "\"\(text.prefix(80))\" is not an http or https URL (or a path from /)")
        }
    }

    /// The earliest timestamp a collector takes: 2000-01-01 (an earlier one is
    /// seconds sent as milliseconds, or no time at all).
    public static let earliestTimestamp: Int64 = 946_684_800_000
    /// How far ahead of the collector's clock a timestamp may be: one hour
    /// (clients' clocks drift; an event from the future would stay inside every
    /// "last N days" window of the statistics for ever).
    public static let maximumClockSkew: Int64 = 3_600_000

    /// The collector's rule for `ts` (milliseconds since 1970): not before
    /// ``earliestTimestamp``, not more than ``maximumClockSkew`` after `now`.
    /// An event without one is stamped when it is stored. Queued events keep
    /// their time however late they are delivered, so there is no bound in the past beyond that.
    /// - Throws: ``TrackingError/invalidEvent(field:rule:)`` naming `ts`.
    public static func validateTimestamp(_ event: TrackingEvent, now: Date) throws(TrackingError) {
        guard let ts = event.timestamp else { return }
        let latest = Int64(now.timeIntervalSince1970 * 1000) + maximumClockSkew
        guard ts >= earliestTimestamp else {
            throw .invalidEvent(field: "ts", rule: "\(ts) is before 2000-01-01 (ts is milliseconds since 1970, not seconds)")
        }
        guard ts <= latest else {
            throw .invalidEvent(field: "ts", rule: "\(ts) is more than an hour ahead of the collector's clock (\(latest - maximumClockSkew))")
        }
    }

    /// C0 controls, DEL and C1 controls.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)
    }

    /// Every text field with its name (the action's own name is checked by ``validateAction(_:)``).
    static func textFields(_ event: TrackingEvent) -> [(String?, String)] {
        [(event.queryId, "queryId"), (event.pid, "pid"), (event.imgUrl, "imgUrl"), (event.transactionId, "transactionId"),
         (event.uid, "uid"), (event.sid, "sid"), (event.category, "category"), (event.name, "name"), (event.label, "label"),
         (event.fromReqId, "fromReqId"), (event.source, "source"), (event.brand, "brand"), (event.currency, "currency"),
         (event.productUrl, "productUrl"), (event.campaign, "campaign"), (event.adGroup, "adGroup"), (event.creative, "creative"),
         (event.s1, "s1"), (event.s2, "s2"), (event.s3, "s3"), (event.s4, "s4"), (event.s5, "s5"), (event.json, "json"),
         (event.eventID, "eventID")]
    }

    static func lengthRules(_ event: TrackingEvent) -> [(String?, String, Int)] {
        [(event.category, "category", 32), (event.name, "name", 32), (event.label, "label", 32), (event.fromReqId, "fromReqId", 32),
         (event.source, "source", 32), (event.brand, "brand", 64), (event.campaign, "campaign", 64), (event.adGroup, "adGroup", 64),
         (event.creative, "creative", 64), (event.s1, "s1", 64), (event.s2, "s2", 64), (event.s3, "s3", 64), (event.s4, "s4", 64),
         (event.s5, "s5", 64), (event.uid, "uid", 64), (event.productUrl, "productUrl", 512), (event.imgUrl, "imgUrl", 512),
         (event.queryId, "queryId", 256), (event.pid, "pid", 256), (event.transactionId, "transactionId", 256),
         (event.eventID, "eventID", 256), (event.sid, "sid", 256)]
    }

    /// Three capital letters that name a currency ISO 4217 lists (from the
    /// platform's ICU data; the pattern alone if that list is unavailable).
    static func validateCurrency(_ code: String) throws(TrackingError) {
        guard code.count == 3, code.unicodeScalars.allSatisfy({ (65...90).contains($0.value) }) else {
            throw .invalidEvent(field: "currency", rule: "\"\(code)\" is not an ISO 4217 code (three capital letters such as USD)")
        }
        if !knownCurrencies.isEmpty, !knownCurrencies.contains(code) {
            throw .invalidEvent(field: "currency", rule: "\"\(code)\" is not an ISO 4217 currency code")
        }
    }

    static let knownCurrencies: Set<String> = Set(Locale.commonISOCurrencyCodes)
}
