import ImageOps
@testable import SearchEngine
import TestSupport
import Testing

/// The detector on real pictures with the installed model: things on a
/// plain background are found one by one, each typed; a picture of one thing
/// is that one thing.
@Suite("Object detection with the learned model", .enabled(if: LearnedModel.isRequired, "the learned model is not installed (scripts/install-model.sh)"))
struct ObjectDetectorTests {
    static func detector() throws -> ObjectDetector {
        let detector = try ObjectDetector(embedder: try LearnedModel.embedder())
        try detector.load()
        return detector
    }

    @Test("three things on white are three objects, each box on its thing (IoU ≥ 0.5), ranked by score, typed from the vocabulary")
    func threeOnWhite() throws {
        let scene = try DetectionScenes.threeOnWhite()
        guard case .objects(let found) = try Self.detector().detect(scene.pixels, full: scene.pixels.size, limit: 5) else {
            Issue.record("the scene was taken as one whole picture")
            return
        }
        #expect(found.count == 3, "\(found.map { ($0.object.type, $0.object.region) })")
        for (name, box) in scene.objects {
            #expect(found.contains { $0.object.region.overlap(with: box) >= 0.5 }, "\(name) at \(box) not found in \(found.map(\.object.region))")
        }
        #expect(found.map(\.object.score) == found.map(\.object.score).sorted(by: >))
        for detection in found {
            #expect((0...1).contains(detection.object.score))
            #expect(ProductTypes.isKnown(detection.object.type))
            #expect(detection.vector.count == (try LearnedModel.embedder()).descriptor.dimension)
        }
        let hat = found.first { $0.object.region.overlap(with: scene.objects[0].box) >= 0.5 }
        #expect(hat?.object.type == "hat", "the sombrero is a \(hat?.object.type ?? "nothing")")
    }

    @Test("a picture of one thing filling it is one object: the whole picture, typed")
    func single() throws {
        let sombrero = try ImageDecoder.decode(fileAt: Repository.images + "/tp_clothes_hats_sombrero.jpg").pixels
        guard case .whole(let type, let probability, _) = try Self.detector().detect(sombrero, full: sombrero.size, limit: 5) else {
            Issue.record("one sombrero was taken as several objects")
            return
        }
        #expect(type == "hat")
        #expect(probability > 0.3)
    }

    @Test("the limit caps the objects; stopping between crops gives no partial answer")
    func limit() throws {
        let scene = try DetectionScenes.threeOnWhite()
        guard case .objects(let two) = try Self.detector().detect(scene.pixels, full: scene.pixels.size, limit: 2) else {
            Issue.record("the scene was taken as one whole picture")
            return
        }
        #expect(two.count == 2)
    }

    @Test("regions are given in the full picture's pixels when the detector saw a smaller decode")
    func rescaled() throws {
        let scene = try DetectionScenes.threeOnWhite()
        let half = Resampler.resample(scene.pixels, to: PixelSize(width: 500, height: 350))
        guard case .objects(let found) = try Self.detector().detect(half, full: scene.pixels.size, limit: 5) else {
            Issue.record("the scene was taken as one whole picture")
            return
        }
        for (name, box) in scene.objects {
            #expect(found.contains { $0.object.region.overlap(with: box) >= 0.5 }, "\(name) at \(box) not found in \(found.map(\.object.region))")
        }
    }
}
