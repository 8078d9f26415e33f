import COnnxRuntime
import ConcurrencyToolkit

/// ONNX Runtime's C library, loaded at run time (`dlopen`): nothing links
/// against it, so a program that never asks for a model neither needs nor
/// ships it. One per library path per process; the environment it creates
/// lives as long as the process (ONNX Runtime allows one).
///
/// ```swift
/// let runtime = try OnnxRuntime.load(from: ".build-tools/onnxruntime/lib/libonnxruntime.so.1")
/// let session = try InferenceSession(runtime: runtime, model: bytes)
/// ```
public final class OnnxRuntime: @unchecked Sendable {
    /// The API version asked of the library: the lowest that has every function used here.
    public static let apiVersion: UInt32 = UInt32(VS_ORT_API_VERSION)

    /// Where the library was loaded from.
    public let libraryPath: String
    /// The library's own version string, e.g. "1.23.2".
    public let version: String
    let api: UnsafePointer<OrtApi>
    let environment: OpaquePointer
    let memoryInfo: OpaquePointer

    static let loaded = Locked<[String: OnnxRuntime]>([:])

    /// The library at `path`, loaded once per process.
    /// - Throws: ``OnnxRuntimeError/libraryUnavailable(path:reason:)`` naming the path and the loader's reason.
    public static func load(from path: String) throws(OnnxRuntimeError) -> OnnxRuntime {
        if let runtime = loaded.withLock({ $0[path] }) { return runtime }
        let runtime = try OnnxRuntime(path: path)
        return loaded.withLock { table in
            if let existing = table[path] { return existing }
            table[path] = runtime
            return runtime
        }
    }

    private init(path: String) throws(OnnxRuntimeError) {
        var message = [CChar](repeating: 0, count: 1024)
        var versionText = [CChar](repeating: 0, count: 64)
        guard let api = vs_ort_load(path, Self.apiVersion, &message, message.count, &versionText, versionText.count) else {
            throw .libraryUnavailable(path: path, reason: Self.text(message))
        }
        self.api = api
        libraryPath = path
        version = Self.text(versionText)
        var environment: OpaquePointer?
        try Self.check(api, api.pointee.CreateEnv(ORT_LOGGING_LEVEL_ERROR, "vsearch", &environment), "CreateEnv")
        guard let environment else { throw .runtime(call: "CreateEnv", reason: "no environment returned") }
        self.environment = environment
        var memoryInfo: OpaquePointer?
        try Self.check(api, api.pointee.CreateCpuMemoryInfo(OrtArenaAllocator, OrtMemTypeDefault, &memoryInfo), "CreateCpuMemoryInfo")
        guard let memoryInfo else { throw .runtime(call: "CreateCpuMemoryInfo", reason: "no memory info returned") }
        self.memoryInfo = memoryInfo
    }

    /// Throws the status's message (and releases it) when `status` is an error.
    static func check(_ api: UnsafePointer<OrtApi>, _ status: OpaquePointer?, _ call: String) throws(OnnxRuntimeError) {
        guard let status else { return }
        let reason = api.pointee.GetErrorMessage(status).map { String(cString: $0) } ?? "unknown error"
        api.pointee.ReleaseStatus(status)
        throw .runtime(call: call, reason: reason)
    }

    func check(_ status: OpaquePointer?, _ call: String) throws(OnnxRuntimeError) {
        try Self.check(api, status, call)
    }
}

extension OnnxRuntime {
    /// The text a C call wrote into `buffer`, up to its NUL.
    static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
