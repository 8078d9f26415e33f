import Foundation
import SearchEngine
import Testing
import TestSupport

/// ``ModelManifest/identity``: the model tag a catalog records covers the
/// whole recipe, so a manifest changed anywhere is another model.
@Suite("ModelManifest identity")
struct ModelManifestTests {
    static var base: [String: Any] { [
        "name": "m", "version": "1", "format": "onnx", "file": "model.onnx", "sha256": String(repeating: "ab", count: 32),
        "input_name": "input", "output_name": "output", "input_size": 224, "resize": "pad", "dimension": 1280,
        "mean": [0.498, 0.498, 0.498], "std": [0.502, 0.502, 0.502],
        "projection": ["file": "projection.bin", "sha256": String(repeating: "cd", count: 32), "output_dimension": 512],
    ] }

    static func manifest(_ edit: (inout [String: Any]) -> Void = { _ in }) throws -> ModelManifest {
        var object = base
        edit(&object)
        return try JSONDecoder().decode(ModelManifest.self, from: JSONSerialization.data(withJSONObject: object))
    }

    @Test("the same manifest has the same identity; a change to mean, std, resize, input size, projection, model file, tensor names or output length gives another")
    func everyPartCounts() throws {
        let identity = try Self.manifest().identity
        let again = try Self.manifest().identity
        #expect(identity.count == 64 && identity == again)
        let edits: [(String, (inout [String: Any]) -> Void)] = [
            ("mean", { $0["mean"] = [0.485, 0.456, 0.406] }),
            ("one mean", { $0["mean"] = [0.498, 0.498, 0.4981] }),
            ("std", { $0["std"] = [0.229, 0.224, 0.225] }),
            ("resize", { $0["resize"] = "center-crop" }),
            ("input size", { $0["input_size"] = 256 }),
            ("input name", { $0["input_name"] = "pixels" }),
            ("output name", { $0["output_name"] = "features" }),
            ("dimension", { $0["dimension"] = 1024 }),
            ("model file", { $0["sha256"] = String(repeating: "ef", count: 32) }),
            ("projection", { $0["projection"] = ["file": "projection.bin", "sha256": String(repeating: "01", count: 32), "output_dimension": 512] }),
            ("projection length", { $0["projection"] = ["file": "projection.bin", "sha256": String(repeating: "cd", count: 32), "output_dimension": 256] }),
            ("no projection", { $0["projection"] = nil }),
            ("version", { $0["version"] = "2" }),
        ]
        var seen: Set<String> = [identity]
        for (what, edit) in edits {
            let other = try Self.manifest(edit).identity
            #expect(seen.insert(other).inserted, "\(what) changed, the identity did not")
        }
        // What does not make vectors (the licence, where the file lies) changes nothing.
        let unrelated = try Self.manifest { $0["license"] = "MIT"; $0["file"] = "elsewhere.onnx" }.identity
        #expect(unrelated == identity)
    }
}
