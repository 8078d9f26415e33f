import Foundation
import ImageOps
import OnnxRuntime
import ConcurrencyToolkit

/// The learned model's two detection parts, beside the embedding it serves:
/// the network without its pooling (`detector.onnx`: a ``FeatureMap`` of a
/// whole picture at any size) and the ImageNet classifier the embedding
/// drops (`classifier.bin`: a ``ClassifierHead``). Both come from the same
/// weights at set-up (`scripts/install-model.sh`), pinned by checksum in the
/// manifest; nothing is fetched.
///
/// Creating one reads nothing; the files load on first use or at ``load()``,
/// which checks their SHA-256 against the manifest.
public final class DetectionModel: Sendable {
    public let manifest: ModelManifest
    public let installation: ModelInstallation
    public let detector: ModelManifest.Detector
    public let classifier: ModelManifest.Classifier
    let loaded = Locked<Result<Loaded, EmbeddingError>?>(nil)

    struct Loaded: Sendable {
        var session: InferenceSession
        var head: ClassifierHead
    }

    /// The detection parts of `embedder`'s model.
    /// - Throws: ``EmbeddingError/modelDamaged(path:reason:)`` when the
    ///   manifest names no detector or classifier (a model installed before
    ///   object detection; installing it again completes it).
    public init(embedder: LearnedEmbedder) throws(EmbeddingError) {
        manifest = embedder.manifest
        installation = embedder.installation
        guard let detector = manifest.detector, let classifier = manifest.classifier else {
            throw .modelDamaged(path: installation.manifestPath,
                                reason: "it has no object detector (the model was installed before detection came); "
                                    + "run `\(EmbeddingError.installCommand) --force` or ./scripts/install-model.sh to add it")
        }
        self.detector = detector
        self.classifier = classifier
    }

    /// Loads both files now (once; later calls return the first outcome).
    public func load() throws(EmbeddingError) {
        _ = try parts()
    }

    /// The classifier head.
    public func head() throws(EmbeddingError) -> ClassifierHead {
        try parts().head
    }

    func parts() throws(EmbeddingError) -> Loaded {
        let outcome = loaded.withLock { state -> Result<Loaded, EmbeddingError> in
            if let state { return state }
            let result: Result<Loaded, EmbeddingError>
            do throws(EmbeddingError) { result = .success(try loadParts()) } catch { result = .failure(error) }
            state = result
            return result
        }
        return try outcome.get()
    }

    func loadParts() throws(EmbeddingError) -> Loaded {
        let folder = installation.modelDirectory as NSString
        let headPath = folder.appendingPathComponent(classifier.file)
        let head = try ClassifierHead(bytes: try LearnedEmbedder.checkedBytes(at: headPath, sha256: classifier.sha256),
                                      classes: classifier.classes, channels: manifest.dimension, path: headPath)
        let modelPath = folder.appendingPathComponent(detector.file)
        let bytes = try LearnedEmbedder.checkedBytes(at: modelPath, sha256: detector.sha256)
        let runtime: OnnxRuntime
        do { runtime = try OnnxRuntime.load(from: installation.runtimeLibrary) } catch {
            throw .runtimeUnavailable(path: installation.runtimeLibrary, reason: "\(error)")
        }
        let session: InferenceSession
        do { session = try InferenceSession(runtime: runtime, model: bytes) } catch {
            throw .modelDamaged(path: modelPath, reason: "\(error)")
        }
        guard session.inputShape.count == 4, session.inputShape[1] == 3, session.outputShape.count == 4,
              session.outputShape[1] == Int64(detector.channels) else {
            throw .modelDamaged(path: modelPath, reason: "its input is \(session.inputShape) and output \(session.outputShape); "
                                + "the manifest says [batch, 3, height, width] → [batch, \(detector.channels), height/\(detector.stride), width/\(detector.stride)]")
        }
        return Loaded(session: session, head: head)
    }

    /// The features of `image` resized (bilinear) so that its longer side is
    /// about `longSide` and both sides are the nearest multiples of the
    /// stride (at least two strides; the aspect bends by under half a stride);
    /// alpha flattened on white; normalised as the embedding's input.
    /// - Throws: ``EmbeddingError`` when the model cannot load or run.
    public func featureMap(of image: PixelBuffer, longSide: Int) throws(EmbeddingError) -> FeatureMap {
        let loaded = try parts()
        let stride = detector.stride
        let scale = Double(longSide) / Double(max(image.width, image.height))
        func side(_ length: Int) -> Int {
            max(2 * stride, Int((Double(length) * scale / Double(stride)).rounded(.toNearestOrEven)) * stride)
        }
        let width = side(image.width), height = side(image.height), plane = width * height
        let columns = width / stride, rows = height / stride
        let flat = image.hasAlpha ? image.flattened() : image
        let resized = Resampler.resample(flat, to: PixelSize(width: width, height: height), filter: .triangle)
        let scales = (0..<3).map { 1 / (255 * manifest.std[$0]) }
        let shift = (0..<3).map { -manifest.mean[$0] / manifest.std[$0] }
        var input = [Float](repeating: 0, count: 3 * plane)
        input.withUnsafeMutableBufferPointer { out in
            resized.bytes.withUnsafeBufferPointer { pixels in
                for index in 0..<plane {
                    let p = index * PixelBuffer.channels
                    out[index] = Float(pixels[p]) * scales[0] + shift[0]
                    out[index + plane] = Float(pixels[p + 1]) * scales[1] + shift[1]
                    out[index + 2 * plane] = Float(pixels[p + 2]) * scales[2] + shift[2]
                }
            }
        }
        let output: (values: [Float], shape: [Int])
        do { output = try loaded.session.run(input, shape: [1, 3, height, width]) } catch {
            throw .inference(reason: "\(error)")
        }
        guard output.shape == [1, detector.channels, rows, columns] else {
            throw .inference(reason: "the detector's output is \(output.shape) for a \(width)×\(height) input, expected [1, \(detector.channels), \(rows), \(columns)]")
        }
        return FeatureMap(channels: detector.channels, columns: columns, rows: rows, values: output.values,
                          cellSize: (Double(image.width) / Double(width) * Double(stride), Double(image.height) / Double(height) * Double(stride)))
    }
}
