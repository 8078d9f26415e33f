import Foundation
import ImageOps
@testable import SearchEngine
import TestSupport
import Testing
import VisualSearch

/// Multiple Products Search in the engine: discover search detects the
/// objects of the query image and searches each (its own corpus image first),
/// upload search's `detection` lists them and searches the best, a point
/// searches the object under it (on the corpus in memory; CatalogStoresTests
/// runs the same discover on PostgreSQL); without a detector the whole image is one object and the answer says why.
@Suite("Discover search with object detection", .enabled(if: LearnedModel.isRequired, "the learned model is not installed (scripts/install-model.sh)"),
       .timeLimit(.minutes(10)))
struct DiscoverDetectionTests {
    static func detector() throws -> ObjectDetector { try ObjectDetector(embedder: try LearnedModel.embedder()) }

    static func memoryEngine() async throws -> VisualSearchEngine {
        let detector = try detector()
        return try await Corpus.memoryEngine(learned: true) { $0.detector = detector }
    }

    @Test("discover finds each thing of a scene and searches it: its own image first (CatalogStoresTests: the same on PostgreSQL)")
    func discoverFindsEachThing() async throws {
        try await DetectionScenes.expectFindsEachThing(try await Self.memoryEngine())
    }

    @Test("detection_limit caps the objects; a point searches the object under it, or its neighbourhood when none is there")
    func limitAndPoints() async throws {
        let engine = try await Self.memoryEngine()
        let scene = try DetectionScenes.threeOnWhite()
        let two = try await engine.discoverSearch(DiscoverSearchRequest(ImageQuery(.bytes(scene.jpeg)), detectionLimit: 2, parameters: Corpus.parameters()))
        #expect(two.objects?.count == 2)
        let guitar = scene.objects[1].box
        let onGuitar = PixelPoint(x: guitar.x + guitar.width / 2, y: guitar.y + guitar.height / 2)
        let onNothing = PixelPoint(x: 980, y: 680)
        let pointed = try await engine.discoverSearch(DiscoverSearchRequest(ImageQuery(.bytes(scene.jpeg)), points: [onGuitar, onNothing],
                                                                            parameters: Corpus.parameters()))
        let objects = try #require(pointed.objects)
        #expect(objects.count == 2)
        #expect(objects.first?.result.first?.imageName == scene.objects[1].name, "\(objects.first?.result.map(\.imageName) ?? [])")
        #expect(objects.last?.type == "point")
        // A zero-size box is a point too (the guide: "detect the object over the current point").
        let boxed = try await engine.discoverSearch(DiscoverSearchRequest(ImageQuery(.bytes(scene.jpeg), box: onGuitar.box), parameters: Corpus.parameters()))
        #expect(boxed.objects?.count == 1)
        #expect(boxed.objects?.first?.result.first?.imageName == scene.objects[1].name)
        await #expect(throws: VisualSearchError.self) {
            try await engine.discoverSearch(DiscoverSearchRequest(ImageQuery(.bytes(scene.jpeg)), detectionLimit: 31, parameters: Corpus.parameters()))
        }
    }

    @Test("upload search with detection=all lists every object, best first, and searches the best; detection=TYPE searches that type's object")
    func uploadDetection() async throws {
        let engine = try await Self.memoryEngine()
        let scene = try DetectionScenes.threeOnWhite()
        var all = Corpus.parameters()
        all.detection = "all"
        let listed = try await engine.uploadSearch(UploadSearchRequest(ImageQuery(.bytes(scene.jpeg)), parameters: all))
        let types = try #require(listed.productTypes)
        #expect(types.count == 3)
        #expect(types.map(\.score) == types.map(\.score).sorted(by: >))
        #expect(listed.productTypesList?.contains { $0.type == "hat" } == true)
        var hat = Corpus.parameters()
        hat.detection = "hat"
        let hatSearch = try await engine.uploadSearch(UploadSearchRequest(ImageQuery(.bytes(scene.jpeg)), parameters: hat))
        #expect(hatSearch.result.first?.imageName == "tp_clothes_hats_sombrero", "\(hatSearch.result.map(\.imageName))")
        var absent = Corpus.parameters()
        absent.detection = "umbrella"
        let whole = try await engine.uploadSearch(UploadSearchRequest(ImageQuery(.bytes(scene.jpeg)), parameters: absent))
        var plain = Corpus.parameters()
        plain.detection = nil
        let undetected = try await engine.uploadSearch(UploadSearchRequest(ImageQuery(.bytes(scene.jpeg)), parameters: plain))
        #expect(whole.result.map(\.imageName) == undetected.result.map(\.imageName), "no umbrella: the whole image is searched")
        #expect(whole.productTypes?.count == 3)
    }

    @Test("a picture of one thing is one object, searched exactly as upload search searches the whole image")
    func singleObject() async throws {
        let engine = try await Self.memoryEngine()
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Repository.images + "/tp_clothes_hats_sombrero.jpg")))
        let discovered = try await engine.discoverSearch(DiscoverSearchRequest(ImageQuery(.bytes(bytes)), resultLimit: 10, parameters: Corpus.parameters()))
        let object = try #require(discovered.objects?.first)
        #expect(discovered.objects?.count == 1)
        #expect(object.type == "hat")
        let uploaded = try await engine.uploadSearch(UploadSearchRequest(ImageQuery(.bytes(bytes)), parameters: Corpus.parameters()))
        #expect(object.result.map(\.imageName) == uploaded.result.map(\.imageName))
        #expect(object.result.map(\.score) == uploaded.result.map(\.score))
    }

    @Test("without a detector, discover answers with the whole image as one object and says that detection needs the model")
    func withoutDetector() async throws {
        let engine = try await Corpus.memoryEngine(learned: true)
        let scene = try DetectionScenes.threeOnWhite()
        let response = try await engine.discoverSearch(DiscoverSearchRequest(ImageQuery(.bytes(scene.jpeg)), parameters: Corpus.parameters()))
        #expect(response.objects?.count == 1 && response.objects?.first?.type == "image")
        #expect(response.offlineNote == VisualSearchEngine.detectionNeedsModel)
        var all = Corpus.parameters()
        all.detection = "all"
        let upload = try await engine.uploadSearch(UploadSearchRequest(ImageQuery(.bytes(scene.jpeg)), parameters: all))
        #expect(upload.productTypes == [] && upload.offlineNote == VisualSearchEngine.detectionNeedsModel)
    }
}
