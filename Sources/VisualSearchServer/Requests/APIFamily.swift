import Foundation
import VisualSearch

/// Which API an endpoint belongs to: it decides the error JSON shape.
enum APIFamily: Sendable {
    /// `{"status":"fail","method":…,"error":["…"],"page":0,"limit":0,"total":0,"result":[]}`.
    case viSearch
    /// `{"reqid":…,"status":"fail","method":…,"error":{"code":…,"message":…}}`.
    case productSearch
    /// `{"status":"fail","reqid":…,"error":{"code":…,"message":…}}` (the analytics shape).
    case tracking

    /// The failure body for this family.
    func failureBody(method: String, error: ServerError, requestID: String) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        switch self {
        case .viSearch:
            let response = SearchResponse(status: .fail, method: method, error: [error.message], page: 0, limit: 0, total: 0,
                                          result: [], requestID: requestID)
            return (try? encoder.encode(response)).map(Array.init) ?? []
        case .productSearch:
            let response = ProductSearchResponse(requestID: requestID, status: .fail, method: method,
                                                 error: .init(code: error.status, message: error.message))
            return (try? encoder.encode(response)).map(Array.init) ?? []
        case .tracking:
            struct Body: Encodable {
                var status = "fail"
                var reqid: String
                var error: ProductSearchResponse.ErrorInfo
            }
            return (try? encoder.encode(Body(reqid: requestID, error: .init(code: error.status, message: error.message)))).map(Array.init) ?? []
        }
    }
}
