import Foundation
import OnnxRuntime
import TestSupport
import Testing

/// The ONNX Runtime binding on its own: the library loaded at run time (one
/// per path), a model from its bytes, one float tensor in and out, and typed
/// errors for every way that fails. The model is the installed one
/// (`scripts/install-model.sh`; always in CI).
@Suite("ONNX Runtime")
struct OnnxRuntimeTests {
    static var library: String? { LearnedModel.installation?.runtimeLibrary }
    static var model: String? { LearnedModel.installation.map { $0.modelDirectory + "/model.onnx" } }

    @Test("a missing library is libraryUnavailable, naming the path")
    func missingLibrary() throws {
        let path = Repository.temporaryDirectory("ort") + "/libonnxruntime.so.1"
        #expect {
            _ = try OnnxRuntime.load(from: path)
        } throws: { error in
            guard case .libraryUnavailable(let named, _) = error as? OnnxRuntimeError else { return false }
            return named == path && (error as? OnnxRuntimeError)?.description.contains(path) == true
        }
    }

    @Test("a file that is not a library is libraryUnavailable")
    func notALibrary() throws {
        let path = Repository.temporaryDirectory("ort") + "/libonnxruntime.so.1"
        try Data("not a shared library".utf8).write(to: URL(fileURLWithPath: path))
        #expect {
            _ = try OnnxRuntime.load(from: path)
        } throws: { error in
            if case .libraryUnavailable = error as? OnnxRuntimeError { return true }
            return false
        }
    }

    @Test("the installed library loads once per path and says its version", .enabled(if: LearnedModel.isRequired))
    func loadsOncePerPath() throws {
        let library = try #require(Self.library)
        let first = try OnnxRuntime.load(from: library)
        let second = try OnnxRuntime.load(from: library)
        #expect(first === second)
        #expect(first.libraryPath == library)
        #expect(first.version.split(separator: ".").count >= 2, "version \(first.version)")
    }

    @Test("bytes that are not a model are invalidModel", .enabled(if: LearnedModel.isRequired),
          arguments: [[UInt8](), Array("not an onnx model".utf8), [UInt8](repeating: 0xFF, count: 4096)])
    func invalidModel(bytes: [UInt8]) throws {
        let runtime = try OnnxRuntime.load(from: try #require(Self.library))
        #expect {
            _ = try InferenceSession(runtime: runtime, model: bytes)
        } throws: { error in
            if case .invalidModel = error as? OnnxRuntimeError { return true }
            return false
        }
    }

    @Test("the installed model runs: one float tensor in, one out, the same output for the same input", .enabled(if: LearnedModel.isRequired))
    func runsTheModel() throws {
        let runtime = try OnnxRuntime.load(from: try #require(Self.library))
        let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: try #require(Self.model))))
        let session = try InferenceSession(runtime: runtime, model: bytes, threads: 1)
        #expect(session.inputShape.count == 4 && session.outputShape.count == 2)
        // The batch dimension may be symbolic (-1); the rest are fixed.
        let shape = [1] + session.inputShape.dropFirst().map { Int($0) }
        #expect(shape.allSatisfy { $0 > 0 }, "input shape \(session.inputShape)")
        var state: UInt32 = 12345
        let input: [Float] = (0..<shape.reduce(1, *)).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return Float(state >> 8) / Float(1 << 24) - 0.5
        }
        let first = try session.run(input, shape: shape)
        let second = try session.run(input, shape: shape)
        #expect(first.shape.first == 1 && first.shape.count == 2)
        #expect(first.values.count == first.shape.reduce(1, *))
        #expect(first.values.allSatisfy { $0.isFinite })
        #expect(first.values == second.values)
        #expect(Set(first.values).count > 1, "a constant output means the model did not run")
    }
}
