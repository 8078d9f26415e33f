/// What went wrong in ONNX Runtime, with its own message.
public enum OnnxRuntimeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The shared library could not be loaded (missing, not a library, too old).
    case libraryUnavailable(path: String, reason: String)
    /// The model could not be loaded: not an ONNX model, damaged, or an operator this runtime lacks.
    case invalidModel(reason: String)
    /// The model has inputs or outputs other than one float tensor each, or the input's shape does not fit.
    case unsupportedModel(reason: String)
    /// A call into the runtime failed.
    case runtime(call: String, reason: String)

    public var description: String {
        switch self {
        case .libraryUnavailable(let path, let reason): "cannot load ONNX Runtime from \(path): \(reason)"
        case .invalidModel(let reason): "not a usable ONNX model: \(reason)"
        case .unsupportedModel(let reason): "unsupported model: \(reason)"
        case .runtime(let call, let reason): "ONNX Runtime \(call) failed: \(reason)"
        }
    }
}
