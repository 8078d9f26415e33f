import Foundation
import HTTPTypes
import Hummingbird

/// Who a request is from, for ``ClientLimits``: its key when the server has
/// keys and the request names one (without reading the body), otherwise its address.
enum ClientIdentity {
    static func key(of request: Request, remoteAddress: String?, limits: ClientLimits, keyed: Bool) -> String {
        if keyed {
            if let authorization = request.headers[.authorization], let (key, _) = ServerCredentials.basicCredentials(authorization) {
                return "key:" + key
            }
            let parameters = request.uri.queryParameters
            if let key = parameters.get("access_key") ?? parameters.get("app_key"), !key.isEmpty { return "key:" + key }
        }
        if let name = limits.addressHeader, let field = HTTPField.Name(name), let value = request.headers[field],
           let last = value.split(separator: ",").last?.trimmingCharacters(in: .whitespaces), !last.isEmpty {
            return "address:" + last
        }
        return "address:" + (remoteAddress ?? "unknown")
    }
}
