import Foundation
import ImageOps
import SearchEngine
import TestSupport
import Testing
import VisualSearch

/// Search by what things are: a catalog indexed with the learned model
/// answers `visual` by default, `color` and `fused` on request; a catalog
/// without learned vectors answers exactly as before; a request the catalog
/// or the process cannot answer is refused with the fix named.
@Suite(.enabled(if: LearnedModel.isRequired, "the learned model is not installed (scripts/install-model.sh)"))
struct LearnedSimilarityTests {
    static let groups: [String: [String]] = {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: Repository.images)) ?? []).map { ($0 as NSString).deletingPathExtension }
        return ["hats": names.filter { $0.hasPrefix("tp_clothes_hats") }.sorted(), "guitars": names.filter { $0.contains("guitar") }.sorted()]
    }()

    static func parameters(_ mode: SimilarityMode?, limit: Int = 10) -> SearchParameters {
        Corpus.parameters { $0.similarity = mode; $0.limit = limit }
    }

    /// How many of each group member's nearest (as many as the group has other members) are in its group.
    static func sameKind(_ engine: VisualSearchEngine, _ mode: SimilarityMode) async throws -> (hits: Int, possible: Int) {
        var hits = 0, possible = 0
        for members in groups.values {
            for query in members {
                let response = try await engine.search(SearchRequest(imageName: query, parameters: parameters(mode, limit: members.count)))
                #expect(response.similarity == mode)
                let others = response.result.map(\.imageName).filter { $0 != query }.prefix(members.count - 1)
                hits += others.filter(members.contains).count
                possible += members.count - 1
            }
        }
        return (hits, possible)
    }

    /// Hats find hats and guitars guitars: at least half of their nearest, at least twice what colour finds.
    @Test func visualFindsTheSameKind() async throws {
        let engine = try await Corpus.memoryEngine(learned: true)
        #expect(Self.groups["hats"]?.count == 6 && Self.groups["guitars"]?.count == 4)
        let visual = try await Self.sameKind(engine, .visual), color = try await Self.sameKind(engine, .color)
        #expect(Double(visual.hits) >= 0.5 * Double(visual.possible), "visual \(visual)")
        #expect(visual.hits >= 2 * color.hits, "visual \(visual), colour \(color)")
    }

    /// The default of a catalog with learned vectors and the engine's model is visual; every response says which answered.
    @Test func defaultIsVisual() async throws {
        let engine = try await Corpus.memoryEngine(learned: true)
        let response = try await engine.search(SearchRequest(imageName: "chelsea_cat", parameters: Self.parameters(nil)))
        #expect(response.similarity == .visual)
        #expect(response.result.first?.imageName == "chelsea_cat" && response.result.first?.score == 1)
        let recommended = try await engine.recommendations(RecommendationsRequest(imageName: "tp_clothes_hats_sombrero", parameters: Self.parameters(nil, limit: 3)))
        #expect(recommended.similarity == .visual)
        #expect(recommended.result.map(\.imageName).allSatisfy { $0.hasPrefix("tp_clothes_hats") }, "\(recommended.result.map(\.imageName))")
    }

    /// A catalog without learned vectors answers exactly as before, with or without the model in the engine.
    @Test func colorCatalogAnswersAsBefore() async throws {
        let plain = try await Corpus.memoryEngine()
        let withModel = try await Corpus.memoryEngine { $0.learned = try? LearnedModel.embedder() }
        for name in ["chelsea_cat", "tp_clothes_hats_sombrero", "oc_box_juliane_krug_s"] {
            var before = try await plain.search(SearchRequest(imageName: name, parameters: Self.parameters(nil)))
            var after = try await withModel.search(SearchRequest(imageName: name, parameters: Self.parameters(nil)))
            #expect(after.similarity == .color)
            before.requestID = nil
            after.requestID = nil
            #expect(before == after)
            #expect(!after.result.isEmpty)
        }
        let upload = try await withModel.uploadSearch(UploadSearchRequest(ImageQuery(.bytes(Repository.bytes("coffee_cup.jpg"))), parameters: Self.parameters(nil)))
        #expect(upload.similarity == .color && upload.result.first?.imageName == "coffee_cup")
        await #expect {
            _ = try await withModel.search(SearchRequest(imageName: "chelsea_cat", parameters: Self.parameters(.visual)))
        } throws: { error in
            guard case .learnedModel(.notIndexed, let reason) = error as? VisualSearchError else { return false }
            return reason.contains("vsearch index")
        }
    }

    /// An upload is embedded: the same photo comes first, scoring 1; a box embeds its crop.
    @Test func uploadsAndBoxes() async throws {
        let engine = try await Corpus.memoryEngine(learned: true)
        let bytes = Repository.bytes("tp_hobbies_music_string_guitar2.jpg")
        let whole = try await engine.uploadSearch(UploadSearchRequest(ImageQuery(.bytes(bytes)), parameters: Self.parameters(nil, limit: 4)))
        #expect(whole.similarity == .visual)
        #expect(whole.result.first?.imageName == "tp_hobbies_music_string_guitar2")
        #expect((whole.result.first?.score ?? 0) > 0.97, "the upload is re-encoded as the SDKs prepare it: nearly, not exactly, the same pixels")
        #expect(whole.result.dropFirst().allSatisfy { $0.imageName.contains("guitar") }, "\(whole.result.map(\.imageName))")
        let size = try ImageDecoder.readHeader(bytes, source: "query").size
        let box = PixelBox(x1: 0, y1: 0, x2: size.width / 2, y2: size.height / 3)
        let boxed = try await engine.uploadSearch(UploadSearchRequest(ImageQuery(.bytes(bytes), box: box), parameters: Self.parameters(nil, limit: 4)))
        #expect(boxed.result.first?.score != whole.result.first?.score, "the crop is not the whole image")
    }

    /// Fused scores are the weighted mean of the visual and colour scores.
    @Test func fusedIsTheWeightedMean() async throws {
        let engine = try await Corpus.memoryEngine(learned: true) { $0.fusedWeight = 0.6 }
        let name = "tp_hobbies_music_string_guitar2"
        let all = SearchParameters.maximumLimit
        let visual = try await engine.search(SearchRequest(imageName: name, parameters: Self.parameters(.visual, limit: all)))
        let color = try await engine.search(SearchRequest(imageName: name, parameters: Self.parameters(.color, limit: all)))
        let fused = try await engine.search(SearchRequest(imageName: name, parameters: Self.parameters(.fused, limit: 5)))
        #expect(fused.similarity == .fused)
        let visualScores = Dictionary(uniqueKeysWithValues: visual.result.map { ($0.imageName, $0.score ?? 0) })
        let colorScores = Dictionary(uniqueKeysWithValues: color.result.map { ($0.imageName, $0.score ?? 0) })
        for result in fused.result {
            let expected = 0.6 * (visualScores[result.imageName] ?? 0) + 0.4 * (colorScores[result.imageName] ?? 0)
            #expect(abs((result.score ?? 0) - expected) < 1e-5, "\(result.imageName)")
        }
        // Score ranges keep their meaning in every mode.
        let ranged = try await engine.search(SearchRequest(imageName: name, parameters: Corpus.parameters {
            $0.similarity = .visual; $0.scoreMin = 0.55; $0.limit = 100
        }))
        #expect(ranged.total == visual.result.filter { ($0.score ?? 0) >= 0.55 }.count)
    }

    /// A process without the model: the default is colour; a search by im_name may still ask for visual
    /// (the stored vectors answer it); an upload asking for visual is refused, naming the install command.
    @Test func withoutTheModel() async throws {
        let engine = try await Corpus.memoryEngine(learned: true) { $0.learned = nil }
        let plain = try await engine.search(SearchRequest(imageName: "chelsea_cat", parameters: Self.parameters(nil)))
        #expect(plain.similarity == .color)
        let stored = try await engine.search(SearchRequest(imageName: "tp_clothes_hats_tophat", parameters: Self.parameters(.visual, limit: 3)))
        #expect(stored.similarity == .visual && stored.result.allSatisfy { $0.imageName.hasPrefix("tp_clothes_hats") })
        let upload = UploadSearchRequest(ImageQuery(.bytes(Repository.bytes("coffee_cup.jpg"))), parameters: Self.parameters(.visual))
        await #expect {
            _ = try await engine.uploadSearch(upload)
        } throws: { error in
            guard case .learnedModel(.missing, let reason) = error as? VisualSearchError else { return false }
            return reason.contains("vsearch model install")
        }
    }

    /// Another model made the catalog's vectors: uploads asking for visual are refused with the fix; the default falls back to colour.
    @Test func anotherModelIsRefused() async throws {
        let engine = try await Corpus.memoryEngine(learned: true) { $0.learned = OtherModel() }
        let upload = UploadSearchRequest(ImageQuery(.bytes(Repository.bytes("coffee_cup.jpg"))), parameters: Self.parameters(.visual))
        await #expect {
            _ = try await engine.uploadSearch(upload)
        } throws: { error in
            guard case .learnedModel(.mismatch, let reason) = error as? VisualSearchError else { return false }
            return reason.contains("vsearch index") && reason.contains("other-model")
        }
        let fallback = try await engine.uploadSearch(UploadSearchRequest(ImageQuery(.bytes(Repository.bytes("coffee_cup.jpg"))), parameters: Self.parameters(nil)))
        #expect(fallback.similarity == .color)
    }

    /// Discover embeds each object; the page's objects say what they searched with.
    @Test func discoverEmbedsEachObject() async throws {
        let engine = try await Corpus.memoryEngine(learned: true)
        let bytes = Repository.bytes("tp_clothes_hats_sombrero.jpg")
        let size = try ImageDecoder.readHeader(bytes, source: "query").size
        let response = try await engine.discoverSearch(DiscoverSearchRequest(
            ImageQuery(.bytes(bytes), box: PixelBox(x1: 0, y1: 0, x2: size.width, y2: size.height)),
            points: [PixelPoint(x: size.width / 2, y: size.height / 2)], resultLimit: 3))
        #expect(response.similarity == .visual)
        #expect(response.objects?.count == 2)
        #expect(response.objects?.first?.result.first?.imageName == "tp_clothes_hats_sombrero")
    }

    /// Re-indexing without the model keeps the learned vectors (the images are unchanged); with another model recomputes them.
    @Test func reindexingKeepsOrRecomputes() async throws {
        let store = InMemoryCatalogStore()
        let folder = Repository.temporaryDirectory("reindex-images")
        for name in ["chelsea_cat.jpg", "coffee_cup.jpg", "tp_clothes_hats_tophat.jpg"] {
            try FileManager.default.copyItem(atPath: Repository.images + "/" + name, toPath: folder + "/" + name)
        }
        var withModel = Indexer.Configuration()
        withModel.features = FeaturePipeline(learned: try LearnedModel.embedder())
        let first = try await Indexer(store: store, configuration: withModel).run(directory: folder)
        #expect(first.indexed == 3)
        #expect(try await store.loadIndex(learned: .compact).learnedCount == 3)
        #expect(try await store.learnedVectorCount() == 3)
        let colorOnly = try await Indexer(store: store).run(directory: folder)
        #expect(colorOnly.unchanged == 3 && colorOnly.indexed == 0)
        #expect(try await store.loadIndex(learned: .compact).learnedCount == 3)
        var other = Indexer.Configuration()
        other.features = FeaturePipeline(learned: OtherModel(wrapping: try LearnedModel.embedder()))
        let recomputed = try await Indexer(store: store, configuration: other).run(directory: folder)
        #expect(recomputed.indexed == 3)
        #expect(try await store.learnedModel() == other.features.learned?.descriptor)
    }

    /// Data API inserts follow the catalog's model: learned vectors in a catalog the same model made,
    /// colour alone in a colour-only one (one insert never switches a catalog to visual similarity).
    @Test func insertsFollowTheCatalogsModel() async throws {
        let uploads = Repository.temporaryDirectory("learned-uploads")
        try FileManager.default.copyItem(atPath: Repository.images + "/tp_clothes_hats_tophat.jpg", toPath: uploads + "/tophat.jpg")
        let input = Repository.temporaryDirectory("learned-insert-input")
        try FileManager.default.copyItem(atPath: Repository.images + "/coffee_cup.jpg", toPath: input + "/coffee_cup.jpg")
        for learnedCatalog in [false, true] {
            let store = InMemoryCatalogStore()
            var indexing = Indexer.Configuration()
            indexing.features = FeaturePipeline(learned: learnedCatalog ? try LearnedModel.embedder() : nil)
            _ = try await Indexer(store: store, configuration: indexing).run(directory: input)
            var configuration = VisualSearchEngine.Configuration()
            configuration.imageSources = ImageSourcePolicy(imageRoots: [uploads])
            configuration.queryCacheDirectory = Repository.temporaryDirectory("learned-insert-cache")
            configuration.learned = try LearnedModel.embedder()
            let engine = try await store.engine(configuration: configuration)
            let response = try await engine.insert(InsertRequest(items: [InsertItem(imageName: "tophat", imageURL: "file://" + uploads + "/tophat.jpg")]))
            let id = try #require(response.transactionID)
            await engine.withInserts { await engine.finishInserts() }
            #expect(try await engine.insertStatus(InsertStatusRequest(transactionID: id)).result.first?.isFinished == true)
            #expect(try await store.count() == 2)
            #expect(try await store.learnedModel() == (learnedCatalog ? try LearnedModel.embedder().descriptor : nil))
            #expect(try await store.learnedVectorCount() == (learnedCatalog ? 2 : 0))
        }
    }

    /// A model that cannot load writes nothing: no row, no recorded model.
    @Test func brokenModelWritesNothing() async throws {
        let copy = try LearnedModel.copy()
        try Data("damaged".utf8).write(to: URL(fileURLWithPath: copy.modelDirectory + "/model.onnx"))
        let store = InMemoryCatalogStore()
        var configuration = Indexer.Configuration()
        configuration.features = FeaturePipeline(learned: try LearnedEmbedder(installation: copy))
        await #expect {
            _ = try await Indexer(store: store, configuration: configuration).run(directory: Repository.images)
        } throws: { error in
            guard case .learnedModel(.damaged, _) = error as? VisualSearchError else { return false }
            return true
        }
        #expect(try await store.count() == 0)
        #expect(try await store.learnedModel() == nil)
    }
}

/// An embedder that says it is another model (its vectors are another embedder's, or none).
struct OtherModel: ImageEmbedder {
    var wrapped: (any ImageEmbedder)?
    init(wrapping: (any ImageEmbedder)? = nil) { wrapped = wrapping }
    var descriptor: EmbeddingDescriptor {
        EmbeddingDescriptor(name: "other-model", version: "1", dimension: wrapped?.descriptor.dimension ?? 1280,
                            preprocessing: "none", contentHash: String(repeating: "ab", count: 32))
    }
    func decodeScale(for size: PixelSize) -> Double { wrapped?.decodeScale(for: size) ?? 1 }
    func embed(_ images: [PixelBuffer]) throws(EmbeddingError) -> [[Float]] {
        guard let wrapped else { throw .inference(reason: "other-model has no weights") }
        return try wrapped.embed(images)
    }
}
