import Foundation
import ImageOps
import SearchEngine
import TestSupport
import Testing
import VisualSearch

/// The learned model, run in process: its vectors equal an independent
/// PyTorch computation from the original weights, and a missing, damaged or
/// wrong model is a typed error before anything is computed.
@Suite(.enabled(if: LearnedModel.isRequired, "the learned model is not installed (scripts/install-model.sh)"))
struct LearnedEmbedderTests {
    static let fixtures = Repository.root + "/Tests/Fixtures/embeddings"

    struct Reference: Decodable {
        var image: String
        var embedding: [Float]
    }

    static func reference(_ name: String) throws -> Reference {
        let data = try #require(FileManager.default.contents(atPath: "\(fixtures)/reference-\(name).json"))
        return try JSONDecoder().decode(Reference.self, from: data)
    }

    static func cosine(_ a: [Float], _ b: [Float]) -> Float {
        let dot = zip(a, b).reduce(0) { $0 + $1.0 * $1.1 }
        let norms = a.reduce(0) { $0 + $1 * $1 }.squareRoot() * b.reduce(0) { $0 + $1 * $1 }.squareRoot()
        return dot / norms
    }

    /// What the installed int8 model gives through Python's onnxruntime (the same library), for one model file.
    struct QuantizedReference: Decodable {
        var image: String
        var model_sha256: String
        var embedding: [Float]
    }

    /// Golden embeddings (Tests/Fixtures/embeddings/README.md): a 224×224 PNG's model output is, within int8's
    /// rounding, PyTorch's float32 output of the original weights (cosine 0.9976 and 0.9948 measured), and —
    /// for the model file it was computed with — exactly what onnxruntime from Python computes with the same file.
    @Test(arguments: ["chelsea_cat", "coffee_cup"])
    func goldenEmbedding(_ name: String) throws {
        let embedder = try LearnedModel.embedder()
        let reference = try Self.reference(name)
        let pixels = try ImageDecoder.decode(fileAt: "\(Self.fixtures)/\(reference.image)").pixels
        let output = try embedder.modelOutputs([pixels])[0]
        #expect(output.count == 1280)
        #expect(Self.cosine(output, reference.embedding) >= 0.99)
        let quantized = try JSONDecoder().decode(QuantizedReference.self, from: try #require(
            FileManager.default.contents(atPath: "\(Self.fixtures)/reference-int8-\(name).json")))
        if quantized.model_sha256 == embedder.manifest.sha256 {
            #expect(Self.cosine(output, quantized.embedding) >= 0.99999)
            let largest = zip(output, quantized.embedding).map { abs($0 - $1) }.max() ?? 1
            #expect(largest < 1e-3, "largest difference \(largest)")
        } else {
            Issue.record("reference-int8-\(name).json was computed with model \(quantized.model_sha256.prefix(12)), not the installed \(embedder.manifest.sha256.prefix(12)): regenerate it (Tests/Fixtures/embeddings/README.md)")
        }
        // The catalog's vector of the same file: the same output, normalised (and projected when the model ships a projection).
        let item = try FeaturePipeline(learned: embedder).catalogItem(named: name, bytes: try FileIO.read("\(Self.fixtures)/\(reference.image)"),
                                                                      source: name, metadata: [:])
        #expect(item.learned == (try embedder.embed(pixels)))
        #expect(item.contentHash.hasSuffix(StoredContentHash.learnedTag(of: embedder.descriptor)))
    }

    /// A batch gives each image the vector it gets alone; vectors have unit length.
    @Test func batchesMatchSingles() throws {
        let embedder = try LearnedModel.embedder()
        let images = try ["chelsea_cat", "coffee_cup"].map { try ImageDecoder.decode(fileAt: "\(Self.fixtures)/\($0).png").pixels }
        let together = try embedder.embed(images)
        for (image, vector) in zip(images, together) {
            let alone = try embedder.embed(image)
            #expect(Self.cosine(alone, vector) > 0.99999)
            #expect(abs(vector.reduce(0) { $0 + $1 * $1 } - 1) < 1e-4)
        }
        #expect(Self.cosine(together[0], together[1]) < 0.9, "a cat and a coffee cup are not alike")
    }

    /// The descriptor says what made the vectors, from the manifest's pinned checksums.
    @Test func descriptor() throws {
        let embedder = try LearnedModel.embedder()
        let descriptor = embedder.descriptor
        #expect(descriptor.name == "efficientnet-lite0")
        #expect(descriptor.dimension == (embedder.manifest.projection?.outputDimension ?? 1280))
        #expect(descriptor.contentHash.count == 64)
        #expect(embedder.runtimeVersion == "1.23.2")
        #expect(descriptor != ColorEmbedder().descriptor)
    }

    /// `install-model.sh --dir D` fills D/models/<name>/ and D/onnxruntime/lib/: `--model-dir D`,
    /// `VSEARCH_MODEL_DIR=D` (relative or not) and the model's own folder all find the same installation.
    @Test func installFolderAndModelFolderAreTheSame() throws {
        let root = Repository.temporaryDirectory("installed-into")
        let model = root + "/d/models/efficientnet-lite0", library = root + "/d/onnxruntime/lib/libonnxruntime.so.1"
        try FileManager.default.createDirectory(atPath: model, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/d/onnxruntime/lib", withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: model + "/model.json", contents: Data("{}".utf8)))
        #expect(FileManager.default.createFile(atPath: library, contents: Data()))
        let nowhere = Repository.temporaryDirectory("no-model-home")
        let expected = ModelInstallation(modelDirectory: model, runtimeLibrary: library)
        let asGiven = try ModelInstallation.locate(modelDirectory: root + "/d", environment: ["HOME": nowhere], currentDirectory: nowhere, executable: nil)
        let fromEnvironment = try ModelInstallation.locate(environment: ["HOME": nowhere, "VSEARCH_MODEL_DIR": "d"], currentDirectory: root, executable: nil)
        let modelFolder = try ModelInstallation.locate(modelDirectory: model, environment: ["HOME": nowhere], currentDirectory: nowhere, executable: nil)
        #expect(asGiven == expected && fromEnvironment == expected && modelFolder == expected)
        // Both readings of the folder are listed when neither holds a model.
        let candidates = ModelInstallation.modelCandidates(modelDirectory: nowhere, environment: [:], currentDirectory: "/", executable: nil)
        #expect(candidates == [nowhere, nowhere + "/models/efficientnet-lite0"])
    }

    /// No model where it is looked for: a typed error naming the places and the install command.
    @Test func missingModel() throws {
        let empty = Repository.temporaryDirectory("no-model")
        #expect {
            _ = try ModelInstallation.locate(environment: ["HOME": empty], currentDirectory: empty, executable: nil)
        } throws: { error in
            guard case .modelMissing(let looked) = error as? EmbeddingError else { return false }
            return looked.contains(empty + "/.build-tools/models/efficientnet-lite0/model.json")
                && "\(error)".contains("vsearch model install")
        }
        #expect(throws: EmbeddingError.self) { _ = try LearnedEmbedder(modelDirectory: empty) }
    }

    /// A model file whose bytes changed (one flipped byte) is refused by its checksum, before any run.
    @Test func damagedModel() throws {
        let copy = try LearnedModel.copy()
        let path = copy.modelDirectory + "/model.onnx"
        var bytes = try FileIO.read(path)
        bytes[bytes.count / 2] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let embedder = try LearnedEmbedder(installation: copy)
        #expect { try embedder.load() } throws: { error in
            guard case .modelDamaged(let at, let reason) = error as? EmbeddingError else { return false }
            return at == path && reason.contains("SHA-256")
        }
        #expect(throws: EmbeddingError.self) { _ = try embedder.embed(PixelBuffer(width: 8, height: 8, hasAlpha: false, fill: (1, 2, 3, 255))) }
    }

    /// A file that is not an ONNX model, pinned by its own checksum (a wrong file installed on purpose): the runtime's refusal, typed.
    @Test func notAModel() throws {
        let copy = try LearnedModel.copy()
        let garbage = Array("this is not an ONNX model".utf8)
        try Data(garbage).write(to: URL(fileURLWithPath: copy.modelDirectory + "/model.onnx"))
        try editManifest(copy) { $0["sha256"] = SHA256Digest.hex(of: garbage) }
        #expect { try LearnedEmbedder(installation: copy).load() } throws: { error in
            guard case .modelDamaged(_, let reason) = error as? EmbeddingError else { return false }
            return reason.contains("not a usable ONNX model")
        }
    }

    /// The tag a catalog records covers the preprocessing: a manifest whose `mean` or `std` changed (the same
    /// model file) is another model, so catalogs embedded before are re-indexed, never searched with vectors that no longer compare.
    @Test func preprocessingIsPartOfTheModel() throws {
        let installed = try LearnedModel.embedder().descriptor
        for edit: (inout [String: Any]) -> Void in [{ $0["mean"] = [0.485, 0.456, 0.406] }, { $0["std"] = [0.229, 0.224, 0.225] },
                                                     { $0["resize"] = "squash" }] {
            let copy = try LearnedModel.copy()
            try editManifest(copy, edit)
            let changed = try LearnedEmbedder(installation: copy).descriptor
            #expect(changed.contentHash != installed.contentHash && changed.tag != installed.tag, "\(changed.preprocessing)")
            #expect(!StoredContentHash.hasLearned("x-f3" + StoredContentHash.learnedTag(of: installed), of: changed))
        }
        let untouched = try LearnedEmbedder(installation: try LearnedModel.copy()).descriptor
        #expect(untouched.contentHash == installed.contentHash)
    }

    /// A manifest whose numbers do not fit the model file is refused when the model loads.
    @Test func manifestThatDoesNotFit() throws {
        let copy = try LearnedModel.copy()
        try editManifest(copy) { $0["input_size"] = 256 }
        #expect { try LearnedEmbedder(installation: copy).load() } throws: { error in
            guard case .modelDamaged(_, let reason) = error as? EmbeddingError else { return false }
            return reason.contains("input")
        }
        try editManifest(copy) { $0["resize"] = "stretch" }
        #expect(throws: EmbeddingError.self) { _ = try LearnedEmbedder(installation: copy) }
    }

    /// A runtime library that is not there: typed, naming the path.
    @Test func missingRuntime() throws {
        var copy = try LearnedModel.copy()
        copy.runtimeLibrary = "/nonexistent/libonnxruntime.so.1"
        #expect { try LearnedEmbedder(installation: copy).load() } throws: { error in
            guard case .runtimeUnavailable(let path, _) = error as? EmbeddingError else { return false }
            return path == "/nonexistent/libonnxruntime.so.1"
        }
    }

    func editManifest(_ installation: ModelInstallation, _ edit: (inout [String: Any]) -> Void) throws {
        let data = try #require(FileManager.default.contents(atPath: installation.manifestPath))
        var object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        edit(&object)
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: installation.manifestPath))
    }
}
