import Foundation

/// Reading an answer's body: the typed response, or the service's own
/// error text. A `status: fail` body is an error even with a 2xx status.
enum ClientResponseBody {
    /// Decodes a 2xx body; a `status: fail` body becomes ``ClientError/api(method:errors:)``.
    static func decode<T: Decodable>(_ type: T.Type, from body: [UInt8], url: String) throws(ClientError) -> T {
        let object: Any?
        do { object = try JSONSerialization.jsonObject(with: Data(body)) } catch {
            throw .decoding(url: url, reason: body.isEmpty ? "empty body" : "not JSON (\(body.count) bytes)")
        }
        if let dictionary = object as? [String: Any], let status = dictionary["status"] as? String, status.lowercased() == "fail" {
            throw .api(method: dictionary["method"] as? String ?? "", errors: errors(in: dictionary))
        }
        do { return try JSONDecoder().decode(T.self, from: Data(body)) } catch {
            throw .decoding(url: url, reason: describe(error))
        }
    }

    /// The service's error text in a failure body: ViSearch's list of
    /// strings, the data API's objects or ProductSearch's `{code, message}`.
    static func message(in body: [UInt8]) -> String? {
        guard let dictionary = (try? JSONSerialization.jsonObject(with: Data(body))) as? [String: Any] else { return nil }
        let errors = errors(in: dictionary)
        return errors.isEmpty ? nil : errors.joined(separator: "; ")
    }

    static func errors(in dictionary: [String: Any]) -> [String] {
        switch dictionary["error"] {
        case let list as [String]: return list
        case let list as [[String: Any]]: return list.compactMap { ($0["error_message"] ?? $0["message"]) as? String }
        case let object as [String: Any]: return (object["message"] as? String).map { [$0] } ?? []
        case let text as String: return [text]
        default: return []
        }
    }

    static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, let context):
            "missing \"\(key.stringValue)\" at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context), DecodingError.dataCorrupted(let context):
            "\(context.debugDescription) at \(context.codingPath.map(\.stringValue).joined(separator: "."))"
        default: "\(error)"
        }
    }
}
