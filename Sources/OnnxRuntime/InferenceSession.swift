import COnnxRuntime

/// One model loaded into ONNX Runtime, with one float tensor in and one out
/// (an image embedder's shape: `[batch, channels, height, width]` →
/// `[batch, dimension]`). Runs are thread-safe (ONNX Runtime allows
/// concurrent `Run` calls on a session); each run uses ``threads`` threads,
/// one by default, so a pool of workers decides the parallelism.
public final class InferenceSession: @unchecked Sendable {
    public let runtime: OnnxRuntime
    /// The input's and output's names in the model.
    public let inputName: String
    public let outputName: String
    /// The input's shape as declared; -1 for a dynamic dimension (the batch).
    public let inputShape: [Int64]
    /// The output's shape as declared; -1 for a dynamic dimension.
    public let outputShape: [Int64]
    /// Intra-op threads per run.
    public let threads: Int
    let session: OpaquePointer

    /// Loads a model from its bytes (so the bytes checked against a checksum are the bytes run).
    /// - Throws: ``OnnxRuntimeError/invalidModel(reason:)`` for bytes that are not a loadable model,
    ///   ``OnnxRuntimeError/unsupportedModel(reason:)`` for one not shaped one float tensor in, one out.
    public init(runtime: OnnxRuntime, model: [UInt8], threads: Int = 1) throws(OnnxRuntimeError) {
        self.runtime = runtime
        self.threads = max(1, threads)
        let api = runtime.api
        var options: OpaquePointer?
        try runtime.check(api.pointee.CreateSessionOptions(&options), "CreateSessionOptions")
        defer { if let options { api.pointee.ReleaseSessionOptions(options) } }
        try runtime.check(api.pointee.SetIntraOpNumThreads(options, Int32(self.threads)), "SetIntraOpNumThreads")
        try runtime.check(api.pointee.SetInterOpNumThreads(options, 1), "SetInterOpNumThreads")
        try runtime.check(api.pointee.SetSessionGraphOptimizationLevel(options, ORT_ENABLE_ALL), "SetSessionGraphOptimizationLevel")
        // int8 models (QDQ, full-range int8 weights): on x86 without AVX-512 VNNI / AVX-VNNI the fast u8s8 kernels
        // can saturate their 16-bit intermediate sums; this key makes ONNX Runtime use exact kernels there. With
        // VNNI it changes nothing (same outputs, same speed: bench/RESULTS.md, issue 40 item 1); float models ignore it.
        try runtime.check(api.pointee.AddSessionConfigEntry(options, "session.x64quantprecision", "1"), "AddSessionConfigEntry")
        var session: OpaquePointer?
        let status = model.withUnsafeBytes { bytes in
            api.pointee.CreateSessionFromArray(runtime.environment, bytes.baseAddress, bytes.count, options, &session)
        }
        do { try runtime.check(status, "CreateSessionFromArray") } catch {
            if case .runtime(_, let reason) = error { throw .invalidModel(reason: reason) }
            throw error
        }
        guard let session else { throw .invalidModel(reason: "no session returned") }
        self.session = session
        do throws(OnnxRuntimeError) {
            var inputs = 0, outputs = 0
            try runtime.check(api.pointee.SessionGetInputCount(session, &inputs), "SessionGetInputCount")
            try runtime.check(api.pointee.SessionGetOutputCount(session, &outputs), "SessionGetOutputCount")
            guard inputs == 1, outputs == 1 else {
                throw .unsupportedModel(reason: "\(inputs) inputs and \(outputs) outputs; an embedder has one of each")
            }
            inputName = try Self.name(of: session, input: true, api: api, runtime: runtime)
            outputName = try Self.name(of: session, input: false, api: api, runtime: runtime)
            inputShape = try Self.floatTensorShape(of: session, input: true, api: api, runtime: runtime)
            outputShape = try Self.floatTensorShape(of: session, input: false, api: api, runtime: runtime)
        } catch {
            api.pointee.ReleaseSession(session)
            throw error
        }
    }

    deinit {
        runtime.api.pointee.ReleaseSession(session)
    }

    /// Runs the model on `input` (row-major, `shape`'s product floats) and
    /// returns the output's floats and shape.
    /// - Throws: ``OnnxRuntimeError/runtime(call:reason:)`` with the runtime's message.
    public func run(_ input: [Float], shape: [Int]) throws(OnnxRuntimeError) -> (values: [Float], shape: [Int]) {
        precondition(shape.reduce(1, *) == input.count, "input has \(input.count) floats, shape \(shape) needs \(shape.reduce(1, *))")
        let api = runtime.api
        var dimensions = shape.map(Int64.init)
        var output: OpaquePointer?
        // The tensor points into `input`'s storage, created and run inside its closure. The C API takes a
        // mutable pointer, but a run never writes its inputs (a `var` copy would copy the whole batch).
        let (status, call) = input.withUnsafeBytes { bytes -> (OpaquePointer?, String) in
            var tensor: OpaquePointer?
            if let failed = api.pointee.CreateTensorWithDataAsOrtValue(
                runtime.memoryInfo, UnsafeMutableRawPointer(mutating: bytes.baseAddress), bytes.count, &dimensions,
                dimensions.count, ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT, &tensor) { return (failed, "CreateTensorWithDataAsOrtValue") }
            defer { if let tensor { api.pointee.ReleaseValue(tensor) } }
            let status = inputName.withCString { inputName in
                outputName.withCString { outputName in
                    var inputNames: [UnsafePointer<CChar>?] = [inputName]
                    var outputNames: [UnsafePointer<CChar>?] = [outputName]
                    var inputs: [OpaquePointer?] = [tensor]
                    return api.pointee.Run(session, nil, &inputNames, &inputs, 1, &outputNames, 1, &output)
                }
            }
            return (status, "Run")
        }
        try runtime.check(status, call)
        guard let output else { throw .runtime(call: "Run", reason: "no output returned") }
        defer { api.pointee.ReleaseValue(output) }
        let outputShape = try Self.shape(of: output, api: api, runtime: runtime)
        let count = outputShape.reduce(1, *)
        var data: UnsafeMutableRawPointer?
        try runtime.check(api.pointee.GetTensorMutableData(output, &data), "GetTensorMutableData")
        guard let data else { throw .runtime(call: "GetTensorMutableData", reason: "no data") }
        let floats = data.bindMemory(to: Float.self, capacity: count)
        return (Array(UnsafeBufferPointer(start: floats, count: count)), outputShape)
    }

    static func name(of session: OpaquePointer, input: Bool, api: UnsafePointer<OrtApi>,
                     runtime: OnnxRuntime) throws(OnnxRuntimeError) -> String {
        var allocator: UnsafeMutablePointer<OrtAllocator>?
        try runtime.check(api.pointee.GetAllocatorWithDefaultOptions(&allocator), "GetAllocatorWithDefaultOptions")
        var name: UnsafeMutablePointer<CChar>?
        let status = input ? api.pointee.SessionGetInputName(session, 0, allocator, &name)
                           : api.pointee.SessionGetOutputName(session, 0, allocator, &name)
        try runtime.check(status, input ? "SessionGetInputName" : "SessionGetOutputName")
        guard let name else { return "" }
        defer { _ = api.pointee.AllocatorFree(allocator, name) }
        return String(cString: name)
    }

    static func floatTensorShape(of session: OpaquePointer, input: Bool, api: UnsafePointer<OrtApi>,
                                 runtime: OnnxRuntime) throws(OnnxRuntimeError) -> [Int64] {
        var typeInfo: OpaquePointer?
        let status = input ? api.pointee.SessionGetInputTypeInfo(session, 0, &typeInfo)
                           : api.pointee.SessionGetOutputTypeInfo(session, 0, &typeInfo)
        try runtime.check(status, input ? "SessionGetInputTypeInfo" : "SessionGetOutputTypeInfo")
        guard let typeInfo else { throw .unsupportedModel(reason: "no type information") }
        defer { api.pointee.ReleaseTypeInfo(typeInfo) }
        var tensorInfo: OpaquePointer?
        try runtime.check(api.pointee.CastTypeInfoToTensorInfo(typeInfo, &tensorInfo), "CastTypeInfoToTensorInfo")
        guard let tensorInfo else { throw .unsupportedModel(reason: "its \(input ? "input" : "output") is not a tensor") }
        var elementType = ONNX_TENSOR_ELEMENT_DATA_TYPE_UNDEFINED
        try runtime.check(api.pointee.GetTensorElementType(tensorInfo, &elementType), "GetTensorElementType")
        guard elementType == ONNX_TENSOR_ELEMENT_DATA_TYPE_FLOAT else {
            throw .unsupportedModel(reason: "its \(input ? "input" : "output") is not float32 (element type \(elementType.rawValue))")
        }
        return try dimensions(of: tensorInfo, api: api, runtime: runtime)
    }

    static func shape(of value: OpaquePointer, api: UnsafePointer<OrtApi>, runtime: OnnxRuntime) throws(OnnxRuntimeError) -> [Int] {
        var info: OpaquePointer?
        try runtime.check(api.pointee.GetTensorTypeAndShape(value, &info), "GetTensorTypeAndShape")
        guard let info else { throw .runtime(call: "GetTensorTypeAndShape", reason: "no shape") }
        defer { api.pointee.ReleaseTensorTypeAndShapeInfo(info) }
        return try dimensions(of: info, api: api, runtime: runtime).map { Int($0) }
    }

    static func dimensions(of info: OpaquePointer, api: UnsafePointer<OrtApi>, runtime: OnnxRuntime) throws(OnnxRuntimeError) -> [Int64] {
        var count = 0
        try runtime.check(api.pointee.GetDimensionsCount(info, &count), "GetDimensionsCount")
        var dimensions = [Int64](repeating: 0, count: count)
        try runtime.check(api.pointee.GetDimensions(info, &dimensions, count), "GetDimensions")
        return dimensions
    }
}
