import Foundation
import ImageOps
@testable import SearchEngine
import TestSupport
import Testing

@Suite("FeaturePipeline", .timeLimit(.minutes(10)))
struct FeaturePipelineTests {
    static func png(_ pixels: PixelBuffer) throws -> [UInt8] { try ImageEncoders.PNG().encode(pixels) }

    static func catalogVector(_ bytes: [UInt8]) throws -> [Float] {
        try FeaturePipeline().catalogItem(named: "x", bytes: bytes, source: "x", metadata: [:]).features
    }

    /// The corpus as a catalog: every image's name and vector.
    static func corpus() throws -> [(name: String, vector: [Float])] {
        try FileManager.default.contentsOfDirectory(atPath: Repository.images).sorted().map { file in
            ((file as NSString).deletingPathExtension, try catalogVector(Repository.bytes(file)))
        }
    }

    /// The corpus image a query's vectors rank first (each image scoring its best).
    static func first(_ vectors: [[Float]], in corpus: [(name: String, vector: [Float])]) -> String? {
        corpus.max { a, b in
            vectors.map { Canvas.dot($0, a.vector) }.max()! < vectors.map { Canvas.dot($0, b.vector) }.max()!
        }?.name
    }

    @Test("a pipeline's embedders are colour, then the learned model when it has one; another learned model keeps its limits")
    func embedders() throws {
        #expect(FeaturePipeline().embedders.map(\.descriptor.name) == [ColorEmbedder().descriptor.name])
        let model = PadModel(side: 224)
        var limits = ImageLimits.default
        limits.maxPixels = 1_000_000
        let pipeline = FeaturePipeline(limits: limits, learned: model)
        #expect(pipeline.embedders.map(\.descriptor) == [ColorEmbedder().descriptor, model.descriptor])
        let colorOnly = pipeline.with(learned: nil)
        #expect(colorOnly.learned == nil && colorOnly.limits == limits && colorOnly.embedders.count == 1)
        // The colour column is the colour embedder's vector: a catalog row's features are its output, 112 floats of unit length.
        let item = try colorOnly.catalogItem(named: "x", bytes: Repository.bytes("coffee_cup.jpg"), source: "x", metadata: [:])
        #expect(item.features.count == ColorEmbedder().descriptor.dimension && item.learned == nil)
    }

    @Test("a copy with a coloured border finds its original first: margins are trimmed at index and query alike")
    func borderedCopy() throws {
        let corpus = try Self.corpus()
        for (file, color) in [("tp_clothes_t_jacket.jpg", (UInt8(178), UInt8(34), UInt8(34))), ("chelsea_cat.jpg", (0, 0, 0)),
                               ("oc_cattle.jpg", (30, 58, 138))] {
            let drawing = try ImageDecoder.decode(Repository.bytes(file), source: file).pixels
            let framed = Canvas.paste(drawing, at: 40, 40, width: drawing.width + 80, height: drawing.height + 80, color: color)
            let query = try FeaturePipeline().query(try Self.png(framed), box: nil)
            #expect(Self.first(query.vectors, in: corpus) == (file as NSString).deletingPathExtension, "\(file)")
            // Without trimming the border's colour weighs in: the pipeline, not luck, makes the match.
            let original = try #require(corpus.first { $0.name == (file as NSString).deletingPathExtension }).vector
            #expect(Canvas.dot(original, query.primary) > Canvas.dot(original, ColorFeatures.vector(of: framed)), "\(file)")
        }
    }

    @Test("a banner query searches with the whole image and with its proposal; the product comes first")
    func bannerQuery() throws {
        let corpus = try Self.corpus()
        for file in ["coffee_cup.jpg", "tp_clothes_t_jacket.jpg", "astronaut.jpg"] {
            let photo = try ImageDecoder.decode(Repository.bytes(file), source: file).pixels
            let (banner, _) = Canvas.banner(photo)
            let query = try FeaturePipeline().query(try Self.png(banner), box: nil)
            #expect(query.vectors.count == 2, "\(file)")
            #expect(Self.first(query.vectors, in: corpus) == (file as NSString).deletingPathExtension, "\(file)")
            // The proposal is what finds it: on its own it ranks the product first, the whole banner does not.
            #expect(Self.first([query.vectors[1]], in: corpus) == (file as NSString).deletingPathExtension, "\(file)")
            #expect(Self.first([query.primary], in: corpus) != (file as NSString).deletingPathExtension, "\(file)")
        }
    }

    @Test("a whole image decodes at the size the features need; wider than 2:1 its shorter side keeps the working side")
    func wholeImageDecodeSize() throws {
        // A photo: 96 px on its longer side, 64 on its shorter, whichever asks more.
        #expect(FeaturePipeline.wholeImageScale(of: PixelSize(width: 1000, height: 750)) == 96.0 / 1000)
        #expect(FeaturePipeline.wholeImageScale(of: PixelSize(width: 1000, height: 500)) == 64.0 / 500)
        // A banner or a strip (either way up): a product proposed on it is at most its shorter side square.
        #expect(FeaturePipeline.wholeImageScale(of: PixelSize(width: 1599, height: 533)) == 128.0 / 533)
        #expect(FeaturePipeline.wholeImageScale(of: PixelSize(width: 533, height: 1599)) == 128.0 / 533)
        #expect(FeaturePipeline.wholeImageScale(of: PixelSize(width: 60, height: 20)) == 1)
        // A 1536 × 512 JPEG banner: its DCT-scaled decode keeps 128 px of height (at 64 the product halved).
        let photo = try ImageDecoder.decode(Repository.bytes("coffee_cup.jpg"), source: "coffee").pixels
        let (banner, _) = Canvas.banner(photo)
        let large = try ImageProcessors.Resize(to: PixelSize(width: 1536, height: 512)).process(banner)
        let jpeg = try ImageEncoders.JPEG(quality: JPEGQuality(0.97)).encode(large)
        let plan = try FeaturePipeline().plan(jpeg, box: nil)
        #expect(plan.minimumSize == PixelSize(width: 384, height: 128))
        #expect(try ImageDecoder.decode(jpeg, source: "banner", options: DecodingOptions(minimumSize: plan.minimumSize)).pixels.size
                == PixelSize(width: 384, height: 128))
    }

    @Test("a box query has one vector: the box is the user's region, nothing is proposed inside it")
    func boxQuery() throws {
        let photo = try ImageDecoder.decode(Repository.bytes("coffee_cup.jpg"), source: "coffee").pixels
        let (banner, _) = Canvas.banner(photo)
        let box = PixelBox(x1: 0, y1: 0, x2: banner.width, y2: banner.height)
        let query = try FeaturePipeline().query(try Self.png(banner), box: box)
        #expect(query.vectors.count == 1)
        // A one-pixel-high box decodes at the box's longer side, and still gives one vector.
        let thin = try FeaturePipeline().query(try Self.png(banner), box: PixelBox(x1: 0, y1: 60, x2: banner.width, y2: 61))
        #expect(thin.vectors.count == 1 && thin.region.height == 1)
    }

    @Test("`model embed`'s pixels are the catalog's: learnedContent decodes exactly as describe does, without the colour side")
    func learnedContentIsTheCatalogs() throws {
        // A model that fits the picture inside 224 (as EfficientNet-Lite0's `pad` does): on wide pictures the
        // colour side's 128 on the shorter side asks for more, and both decodes must take the larger.
        let model = PadModel(side: 224)
        for file in try FileManager.default.contentsOfDirectory(atPath: Repository.images).sorted() {
            let bytes = Repository.bytes(file)
            let described = try FeaturePipeline(learned: model).describe(named: "x", bytes: bytes, source: file, metadata: [:])
            let content = try FeaturePipeline(learned: model).learnedContent(of: bytes, source: file)
            #expect(described.content == content, "\(file)")
        }
    }

    @Test("the same bytes give the same vector when indexed and when searched without a box")
    func indexAndQueryAgree() throws {
        for file in try FileManager.default.contentsOfDirectory(atPath: Repository.images).sorted() {
            let bytes = Repository.bytes(file)
            let indexed = try Self.catalogVector(bytes)
            let searched = try FeaturePipeline().query(bytes, box: nil).primary
            #expect(Similarity.score(dot: Canvas.dot(indexed, searched)) == 1, "\(file)")
        }
    }

    @Test("a plain page gives no second vector: the proposal would be the trimmed drawing again")
    func noDuplicateProposal() throws {
        let drawing = try ImageDecoder.decode(Repository.bytes("oc_cattle.jpg"), source: "cattle").pixels
        let page = Canvas.paste(drawing, at: 60, 60, width: drawing.width + 120, height: drawing.height + 120, color: (255, 255, 255))
        #expect(try FeaturePipeline().query(try Self.png(page), box: nil).vectors.count == 1)
        // Framed, the proposal would be the white page holding the drawing: dropped too.
        let framed = Canvas.paste(page, at: 20, 20, width: page.width + 40, height: page.height + 40, color: (30, 58, 138))
        #expect(try FeaturePipeline().query(try Self.png(framed), box: nil).vectors.count == 1)
    }

    @Test("a mirrored copy has the vector of its original: the histogram and the layout are blind to left and right")
    func mirrored() throws {
        for file in ["chelsea_cat.jpg", "oc_cattle.jpg", "tp_clothes_t_jacket.jpg"] {
            let photo = try ImageDecoder.decode(Repository.bytes(file), source: file).pixels
            let original = ColorFeatures.vector(of: photo), flipped = ColorFeatures.vector(of: try ImageProcessors.Orient(.upMirrored).process(photo))
            #expect(Similarity.score(dot: Canvas.dot(original, flipped)) > 0.98, "\(file)")
        }
        // Top and bottom still differ: an upside-down copy is another picture.
        let cat = try ImageDecoder.decode(Repository.bytes("chelsea_cat.jpg"), source: "cat").pixels
        let turned = try ImageProcessors.Orient(.down).process(cat)
        #expect(Similarity.score(dot: Canvas.dot(ColorFeatures.vector(of: cat), ColorFeatures.vector(of: turned))) < 0.95)
    }

    @Test("the stored content hash carries the features version; a bare hash (an older vsearch) is stale")
    func fingerprint() {
        let bytes = Repository.bytes("chelsea_cat.jpg")
        let stored = StoredContentHash.fingerprint(of: bytes)
        #expect(stored == ContentHash.of(bytes) + "-f\(ColorFeatures.version)")
        #expect(StoredContentHash.isCurrent(stored))
        #expect(!StoredContentHash.isCurrent(ContentHash.of(bytes)))
    }
}

/// A stand-in for a learned model that needs `side` pixels on the picture's longer side (nothing is embedded).
struct PadModel: ImageEmbedder {
    var side: Int
    var descriptor: EmbeddingDescriptor {
        EmbeddingDescriptor(name: "pad-model", version: "1", dimension: 1, preprocessing: "none", contentHash: String(repeating: "cd", count: 32))
    }
    func decodeScale(for size: PixelSize) -> Double { min(1, Double(side) / Double(max(1, max(size.width, size.height)))) }
    func embed(_ images: [PixelBuffer]) throws(EmbeddingError) -> [[Float]] { images.map { _ in [1] } }
}
