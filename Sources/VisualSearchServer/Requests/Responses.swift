import Foundation
import ImageOps
import Hummingbird
import NIOCore
import ConcurrencyToolkit
import VisualSearch

/// JSON responses.
enum Responses {
    static func json<T: Encodable>(_ value: T, status: HTTPResponse.Status = .ok) -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let bytes = (try? encoder.encode(value)).map(Array.init) ?? Array("{\"status\":\"fail\",\"error\":[\"encoding failed\"]}".utf8)
        return Response(status: status, headers: [.contentType: "application/json; charset=utf-8"],
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
    }

    /// The API family's error JSON with the error's status, and `Retry-After` when the error says when to retry.
    static func failure(_ error: ServerError, family: APIFamily, method: String, requestID: String,
                        settingNames: [SettingName: String] = [:]) -> Response {
        var headers: HTTPFields = [.contentType: "application/json; charset=utf-8"]
        if let seconds = error.retryAfter { headers[.retryAfter] = String(seconds) }
        return Response(status: error.status, headers: headers,
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: failureBody(family: family, method: method, error: error, requestID: requestID,
                                                                                     settingNames: settingNames))))
    }

    /// The error JSON of an API family:
    /// ViSearch `{"status":"fail","method":…,"error":["…"],"page":0,"limit":0,"total":0,"result":[]}`;
    /// ProductSearch `{"reqid":…,"status":"fail","method":…,"error":{"code":…,"message":…}}`;
    /// tracking `{"status":"fail","reqid":…,"error":{"code":…,"message":…}}`.
    /// A library setting an error names is called what `settingNames` says (``ServerConfiguration/settingNames``).
    static func failureBody(family: APIFamily, method: String, error: ServerError, requestID: String,
                            settingNames: [SettingName: String] = [:]) -> [UInt8] {
        let message = SettingName.rename(in: error.message, settingNames)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        switch family {
        case .viSearch:
            let response = SearchResponse(status: .fail, method: method, error: [message], page: 0, limit: 0, total: 0,
                                          result: [], requestID: requestID)
            return (try? encoder.encode(response)).map(Array.init) ?? []
        case .productSearch:
            let response = ProductSearchResponse(requestID: requestID, status: .fail, method: method,
                                                 error: .init(code: error.statusCode, message: message))
            return (try? encoder.encode(response)).map(Array.init) ?? []
        case .tracking:
            struct Body: Encodable {
                var status = "fail"
                var reqid: String
                var error: ProductSearchResponse.ErrorInfo
            }
            return (try? encoder.encode(Body(reqid: requestID, error: .init(code: error.statusCode, message: message)))).map(Array.init) ?? []
        }
    }
}

/// Runs `operation`, but answers no later than `seconds`: past the deadline
/// the operation is cancelled, then the caller gets `onTimeout()` — so by the
/// time a client reads its 503 the work was told to stop (the engine stops
/// between steps it can stop between: a discover search between objects;
/// a step that cannot stop finishes in the background, and the concurrency
/// cap bounds how much of it there can be).
func withDeadline<T: Sendable>(_ seconds: Double, _ operation: @escaping @Sendable () async -> T,
                               onTimeout: @escaping @Sendable () -> T) async -> T {
    let race = Race<T>()
    let work = Task { race.finish(await operation()) }
    let timer = Task {
        try? await Task.sleep(nanoseconds: UInt64(max(0, seconds) * 1e9))
        if !Task.isCancelled {
            race.finish(onTimeout(), beforeAnswering: { work.cancel() })
        }
    }
    let value = await withTaskCancellationHandler {
        await race.value()
    } onCancel: {
        work.cancel()
    }
    timer.cancel()
    return value
}

/// The first of several results, handed to one waiter.
final class Race<T: Sendable>: Sendable {
    struct State {
        var continuation: CheckedContinuation<T, Never>?
        var result: T?
    }
    let state = Locked(State())

    /// Records a result; later ones are ignored. When this one is the first,
    /// `beforeAnswering` runs before the waiter gets it (and after any later
    /// result is already ignored): the deadline cancels the work there.
    func finish(_ value: T, beforeAnswering: () -> Void = {}) {
        let (first, waiter): (Bool, CheckedContinuation<T, Never>?) = state.withLock { state in
            guard state.result == nil else { return (false, nil) }
            state.result = value
            defer { state.continuation = nil }
            return (true, state.continuation)
        }
        guard first else { return }
        beforeAnswering()
        waiter?.resume(returning: value)
    }

    /// Waits for the first result.
    func value() async -> T {
        await withCheckedContinuation { continuation in
            let ready: T? = state.withLock { state in
                if let result = state.result { return result }
                state.continuation = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
