import Foundation

/// Any JSON value, for fields whose shape the hosted service does not fix —
/// ProductSearch `data` mixes strings, numbers, lists and objects such as
/// `{"sale_price": {"currency": "SGD", "value": "44.0"}}`.
///
/// ```swift
/// let data = try JSONDecoder().decode([String: JSONValue].self, from: body)
/// data["title"]?.stringValue   // "Linen shirt"
/// ```
public enum JSONValue: Sendable, Hashable, Codable, CustomStringConvertible {
    case string(String)
    case number(Double)
    case bool(Bool)
    case array([JSONValue])
    case object([String: JSONValue])
    case null

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() { self = .null }
        else if let value = try? container.decode(Bool.self) { self = .bool(value) }
        else if let value = try? container.decode(Double.self) { self = .number(value) }
        else if let value = try? container.decode(String.self) { self = .string(value) }
        else if let value = try? container.decode([JSONValue].self) { self = .array(value) }
        else { self = .object(try container.decode([String: JSONValue].self)) }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        case .null: try container.encodeNil()
        }
    }

    /// The value as the hosted service's string convention renders it:
    /// strings as they are, integral numbers without a fraction, `nil` for
    /// null, lists and objects.
    public var stringValue: String? {
        switch self {
        case .string(let value): value
        case .number(let value): value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : String(value)
        case .bool(let value): value ? "true" : "false"
        case .array, .object, .null: nil
        }
    }

    public var description: String {
        switch self {
        case .string(let value): "\"\(value)\""
        case .array(let values): "[" + values.map(\.description).joined(separator: ",") + "]"
        case .object(let values): "{" + values.sorted { $0.key < $1.key }.map { "\"\($0.key)\":\($0.value)" }.joined(separator: ",") + "}"
        case .null: "null"
        default: stringValue ?? ""
        }
    }
}

extension KeyedDecodingContainer {
    /// Decodes a `{key: scalar}` map leniently: strings kept, numbers and
    /// booleans rendered as strings, nested values and nulls skipped — the
    /// hosted service sends strings, some fixtures send numbers.
    func decodeLenientStringMap(forKey key: Key) throws -> [String: String]? {
        guard let raw = try decodeIfPresent([String: JSONValue].self, forKey: key) else { return nil }
        return raw.compactMapValues(\.stringValue)
    }

    /// Decodes a scalar as a string leniently (`"9"`, `9`, `9.5`).
    func decodeLenientString(forKey key: Key) throws -> String {
        let value = try decode(JSONValue.self, forKey: key)
        guard let text = value.stringValue else {
            throw DecodingError.typeMismatch(String.self, .init(codingPath: codingPath + [key], debugDescription: "expected a string or number"))
        }
        return text
    }
}
