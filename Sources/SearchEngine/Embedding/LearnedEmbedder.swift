import Foundation
import ImageOps
import OnnxRuntime
import ConcurrencyToolkit

/// A learned image embedding: a convolutional network (by default
/// EfficientNet-Lite0 trained on ImageNet, its classifier removed) run in
/// process by ONNX Runtime, the pooled features L2-normalised and, when the
/// model ships one, projected to fewer dimensions by a fixed linear map and
/// normalised again. Similar vectors mean the same *kind* of thing.
///
/// Pipeline (``prepare(_:)``): alpha flattened on white → the manifest's
/// resize to `input_size`² with Lanczos-3 (`pad`: the longer side to the
/// square, centred on white — the default model's; `squash`; `center-crop`)
/// → RGB floats `(v/255 − mean)/std`, planar (NCHW). One intra-op thread per run:
/// the image work pool's threads run images side by side.
///
/// Creating one reads only the manifest (the descriptor comes from its
/// pinned checksums, so a catalog's model is recognised at no cost); the
/// runtime and the model load on first use, or at ``load()``, which checks
/// the model file's SHA-256 against the manifest, so a damaged or replaced
/// file is refused before it computes a single vector.
public final class LearnedEmbedder: ImageEmbedder {
    public let manifest: ModelManifest
    public let installation: ModelInstallation
    public let descriptor: EmbeddingDescriptor
    let loaded = Locked<Result<Loaded, EmbeddingError>?>(nil)

    /// The runtime session and projection, once loaded.
    struct Loaded: Sendable {
        var session: InferenceSession
        var projection: EmbeddingProjection?
    }

    /// Reads the installed model's manifest.
    /// - Throws: ``EmbeddingError/modelDamaged(path:reason:)`` for a manifest that is unreadable or wrong.
    public init(installation: ModelInstallation) throws(EmbeddingError) {
        self.installation = installation
        let manifest = try ModelManifest.read(at: installation.manifestPath)
        self.manifest = manifest
        let hash = manifest.identity
        descriptor = EmbeddingDescriptor(
            name: manifest.name, version: manifest.version, dimension: manifest.projection?.outputDimension ?? manifest.dimension,
            preprocessing: "sRGB, alpha flattened on white; \(manifest.resize) to \(manifest.inputSize)×\(manifest.inputSize) "
                + "with Lanczos-3; RGB (v/255 − mean \(manifest.mean)) / std \(manifest.std), NCHW float32; output L2-normalised"
                + (manifest.projection.map { "; projected to \($0.outputDimension) dimensions and L2-normalised" } ?? ""),
            contentHash: hash)
    }

    /// Finds the installed model (``ModelInstallation/locate(modelDirectory:environment:currentDirectory:executable:)``) and reads its manifest.
    /// - Throws: ``EmbeddingError/modelMissing(looked:)``, ``EmbeddingError/runtimeUnavailable(path:reason:)``,
    ///   ``EmbeddingError/modelDamaged(path:reason:)``.
    public convenience init(modelDirectory: String? = nil) throws(EmbeddingError) {
        try self.init(installation: try ModelInstallation.locate(modelDirectory: modelDirectory))
    }

    /// Loads the runtime and the model now (once; later calls return the first outcome).
    /// - Throws: ``EmbeddingError/runtimeUnavailable(path:reason:)``, ``EmbeddingError/modelDamaged(path:reason:)``
    ///   (unreadable, checksum mismatch, not loadable, wrong shape).
    public func load() throws(EmbeddingError) {
        _ = try session()
    }

    /// ONNX Runtime's version, once loaded.
    public var runtimeVersion: String? {
        loaded.withLock { state in (try? state?.get())?.session.runtime.version }
    }

    func session() throws(EmbeddingError) -> Loaded {
        let outcome = loaded.withLock { state -> Result<Loaded, EmbeddingError> in
            if let state { return state }
            let result: Result<Loaded, EmbeddingError>
            do throws(EmbeddingError) { result = .success(try Self.load(manifest, installation: installation)) } catch { result = .failure(error) }
            state = result
            return result
        }
        return try outcome.get()
    }

    static func load(_ manifest: ModelManifest, installation: ModelInstallation) throws(EmbeddingError) -> Loaded {
        let session: InferenceSession
        let modelPath = (installation.modelDirectory as NSString).appendingPathComponent(manifest.file)
        let bytes = try checkedBytes(at: modelPath, sha256: manifest.sha256)
        let runtime: OnnxRuntime
        do { runtime = try OnnxRuntime.load(from: installation.runtimeLibrary) } catch {
            throw .runtimeUnavailable(path: installation.runtimeLibrary, reason: "\(error)")
        }
        do { session = try InferenceSession(runtime: runtime, model: bytes) } catch {
            throw .modelDamaged(path: modelPath, reason: "\(error)")
        }
        let expectedInput: [Int64] = [-1, 3, Int64(manifest.inputSize), Int64(manifest.inputSize)]
        guard session.inputShape.count == 4, Array(session.inputShape.dropFirst()) == Array(expectedInput.dropFirst()) else {
            throw .modelDamaged(path: modelPath, reason: "its input is \(session.inputShape), the manifest says [batch, 3, \(manifest.inputSize), \(manifest.inputSize)]")
        }
        guard session.outputShape.last == Int64(manifest.dimension) else {
            throw .modelDamaged(path: modelPath, reason: "its output is \(session.outputShape), the manifest says [batch, \(manifest.dimension)]")
        }
        guard let shipped = manifest.projection else { return Loaded(session: session, projection: nil) }
        let path = (installation.modelDirectory as NSString).appendingPathComponent(shipped.file)
        let projection = try EmbeddingProjection(bytes: try checkedBytes(at: path, sha256: shipped.sha256),
                                                 inputDimension: manifest.dimension, outputDimension: shipped.outputDimension, path: path)
        return Loaded(session: session, projection: projection)
    }

    /// The bytes of a file whose SHA-256 must be `sha256`.
    static func checkedBytes(at path: String, sha256: String) throws(EmbeddingError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else { throw .modelDamaged(path: path, reason: "cannot read the file") }
        let bytes = [UInt8](data)
        let actual = SHA256Digest.hex(of: bytes)
        guard actual == sha256.lowercased() else {
            throw .modelDamaged(path: path, reason: "its SHA-256 is \(actual), the manifest pins \(sha256) (damaged or replaced)")
        }
        return bytes
    }

    /// The model's input side on the longer side (`pad`: the picture is fitted
    /// inside the square) or the shorter (`squash`, `center-crop` fill it).
    public func decodeScale(for size: PixelSize) -> Double {
        let side = manifest.resize == "pad" ? max(size.width, size.height) : min(size.width, size.height)
        return min(1, Double(manifest.inputSize) / Double(max(1, side)))
    }

    public func embed(_ images: [PixelBuffer]) throws(EmbeddingError) -> [[Float]] {
        let (outputs, projection) = try run(images)
        return outputs.map { output in
            let unit = Self.normalised(output)
            return projection.map { Self.normalised($0.apply(to: unit)) } ?? unit
        }
    }

    /// The vectors of `images` (as ``embed(_:)``) with the model's raw
    /// outputs they were made from (the pooled features a ``ClassifierHead``
    /// names): one run of the model serves search and classification.
    /// - Throws: ``EmbeddingError`` when the model cannot load or run.
    public func embedWithFeatures(_ images: [PixelBuffer]) throws(EmbeddingError) -> [(vector: [Float], features: [Float])] {
        let (outputs, projection) = try run(images)
        return outputs.map { output in
            let unit = Self.normalised(output)
            return (projection.map { Self.normalised($0.apply(to: unit)) } ?? unit, output)
        }
    }

    /// The model's raw outputs for `images` (before normalising and any projection):
    /// what `vsearch model info` documents and an independent implementation reproduces.
    /// - Throws: ``EmbeddingError`` when the model cannot load or run.
    public func modelOutputs(_ images: [PixelBuffer]) throws(EmbeddingError) -> [[Float]] {
        try run(images).outputs
    }

    func run(_ images: [PixelBuffer]) throws(EmbeddingError) -> (outputs: [[Float]], projection: EmbeddingProjection?) {
        guard !images.isEmpty else { return ([], nil) }
        let side = manifest.inputSize, plane = side * side
        var input = [Float](repeating: 0, count: images.count * 3 * plane)
        for (index, image) in images.enumerated() {
            prepare(image, into: &input, at: index * 3 * plane)
        }
        let loaded = try session()
        let output: (values: [Float], shape: [Int])
        do { output = try loaded.session.run(input, shape: [images.count, 3, side, side]) } catch {
            throw .inference(reason: "\(error)")
        }
        let dimension = manifest.dimension
        guard output.values.count == images.count * dimension else {
            throw .inference(reason: "the output has \(output.values.count) floats for \(images.count) images of \(dimension)")
        }
        let outputs = (0..<images.count).map { Array(output.values[($0 * dimension)..<(($0 + 1) * dimension)]) }
        return (outputs, loaded.projection)
    }

    /// The model's input for one image: the square `input_size`² pixels, planar normalised floats.
    public func prepare(_ image: PixelBuffer) -> [Float] {
        var input = [Float](repeating: 0, count: 3 * manifest.inputSize * manifest.inputSize)
        prepare(image, into: &input, at: 0)
        return input
    }

    func prepare(_ image: PixelBuffer, into input: inout [Float], at offset: Int) {
        let side = manifest.inputSize, plane = side * side
        let flat = image.hasAlpha ? image.flattened() : image
        let (square, origin) = Self.square(flat, side: side, mode: manifest.resize)
        let scale = (0..<3).map { 1 / (255 * manifest.std[$0]) }
        let shift = (0..<3).map { -manifest.mean[$0] / manifest.std[$0] }
        input.withUnsafeMutableBufferPointer { out in
            if square.width != side || square.height != side {  // padded: white around the picture
                for channel in 0..<3 {
                    let white = 255 * scale[channel] + shift[channel]
                    for i in 0..<plane { out[offset + channel * plane + i] = white }
                }
            }
            square.bytes.withUnsafeBufferPointer { pixels in
                for y in 0..<square.height {
                    let row = offset + (origin.y + y) * side + origin.x
                    for x in 0..<square.width {
                        let p = (y * square.width + x) * PixelBuffer.channels
                        out[row + x] = Float(pixels[p]) * scale[0] + shift[0]
                        out[row + plane + x] = Float(pixels[p + 1]) * scale[1] + shift[1]
                        out[row + 2 * plane + x] = Float(pixels[p + 2]) * scale[2] + shift[2]
                    }
                }
            }
        }
    }

    /// `image` resized for a `side`×`side` input, and where it goes in it:
    /// `pad` keeps the aspect (the longer side becomes `side`, centred),
    /// `squash` fills the square, `center-crop` cuts the centre of the shorter side's square.
    static func square(_ image: PixelBuffer, side: Int, mode: String) -> (PixelBuffer, origin: (x: Int, y: Int)) {
        switch mode {
        case "pad":
            let longer = Double(max(image.width, image.height))
            let size = PixelSize(width: max(1, min(side, Int((Double(image.width) * Double(side) / longer).rounded()))),
                                 height: max(1, min(side, Int((Double(image.height) * Double(side) / longer).rounded()))))
            return (Resampler.resample(image, to: size), ((side - size.width) / 2, (side - size.height) / 2))
        case "center-crop" where image.width != image.height:
            let short = min(image.width, image.height)
            let rect = PixelRect(x: (image.width - short) / 2, y: (image.height - short) / 2, width: short, height: short)
            let cropped = (try? ImageProcessors.Crop(rect).process(image)) ?? image
            return (Resampler.resample(cropped, to: PixelSize(width: side, height: side)), (0, 0))
        default:
            return (Resampler.resample(image, to: PixelSize(width: side, height: side)), (0, 0))
        }
    }

    /// `vector` scaled to unit length (a zero vector stays zero).
    static func normalised(_ vector: [Float]) -> [Float] {
        let length = vector.reduce(0) { $0 + $1 * $1 }.squareRoot()
        return length > 0 ? vector.map { $0 / length } : vector
    }
}
