import ImageOps

/// How an encoded image becomes the vectors the catalog compares — the same
/// way for what is indexed and what is queried. One value, built from the
/// ``ImageLimits`` images are decoded under and the embedders that describe
/// them (``embedders``: colour, always; the learned model, when one is
/// installed); whoever decodes or describes an image holds one and nothing else.
///
/// Its stages:
/// 1. **plan** the decode from the header alone (``plan(_:box:source:)``):
///    limits checked, shrink-on-load to what every embedder needs
///    (``wholeImageScale(of:)``, ``ImageEmbedder/decodeScale(for:)``);
/// 2. **decode** once, and **reduce** to a ≤ ``ColorFeatures/workingSide`` px copy;
/// 3. **trim** uniform margins (``MarginTrimmer``): borders, bars, white page;
/// 4. **embed** the content with ``color`` (``ColorEmbedder``), from the
///    decoded pixels under the trimmed rectangle, so trimming loses no
///    resolution, and with ``learned`` from the whole picture (margins are
///    trimmed for colour only).
///
/// A query without a box also proposes where a product placed on a page is
/// (``ObjectProposal``) and, unless that is the trimmed content again or holds
/// it, describes that region too: ``QueryFeatures`` holds both vectors and a
/// catalog image scores the better of the two.
///
/// ```swift
/// let features = FeaturePipeline(limits: .default, learned: installedModel)
/// let item = try features.catalogItem(named: "shoe-1", bytes: bytes, source: "shoe-1.jpg", metadata: [:])
/// let query = try features.query(uploaded, box: nil)
/// ```
public struct FeaturePipeline: Sendable {
    /// What images are decoded under: their size and bytes, checked before anything is decoded.
    public let limits: ImageLimits
    /// The colour descriptor's embedder. Not a parameter: the catalog's colour
    /// column and every stored fingerprint name its version (``StoredContentHash``).
    public let color: any ImageEmbedder = ColorEmbedder()
    /// The learned model's embedder; nil for colour only.
    public let learned: (any ImageEmbedder)?

    /// A pipeline decoding under `limits`, embedding with colour and, when given, `learned`.
    public init(limits: ImageLimits = .default, learned: (any ImageEmbedder)? = nil) {
        self.limits = limits
        self.learned = learned
    }

    /// The embedders, in the order of the catalog's vector columns: colour, then learned when there is one.
    public var embedders: [any ImageEmbedder] { [color] + (learned.map { [$0] } ?? []) }

    /// The same limits with another learned embedder (nil: colour only).
    public func with(learned: (any ImageEmbedder)?) -> FeaturePipeline {
        FeaturePipeline(limits: limits, learned: learned)
    }

    // MARK: - Catalog images

    /// A catalog row for one encoded image (with its learned vector when there is a learned embedder).
    /// - Throws: ``FeaturesError`` naming `source`: the image's problem, or the model's.
    public func catalogItem(named name: String, bytes: [UInt8], source: String, metadata: [String: String]) throws(FeaturesError) -> CatalogItem {
        let described = try describe(named: name, bytes: bytes, source: source, metadata: metadata)
        guard let learned, let content = described.content else { return described.item }
        var item = described.item
        do { item.learned = try learned.embed(content) } catch { throw .embedding(error) }
        return item
    }

    /// A catalog row without its learned vector, and — when there is a learned
    /// embedder — the pixels that vector is computed from (so a batch of
    /// images runs through the model at once, ``LearnedEmbedder/embed(_:)``).
    public struct Described: Sendable {
        /// The row: colour vector, palette, size, fingerprint (tagged with the learned model when there is one).
        public var item: CatalogItem
        /// The whole picture at the decoded resolution, when a learned model will embed it.
        public var content: PixelBuffer?
    }

    /// Decodes once (shrink-on-load to what both vectors need), trims, and computes the colour side.
    /// - Throws: ``FeaturesError`` naming `source`.
    public func describe(named name: String, bytes: [UInt8], source: String, metadata: [String: String]) throws(FeaturesError) -> Described {
        try FeaturesError.catching {
            let decoded = try catalogDecode(bytes, source: source)
            // One small copy serves the trimming, the palette and (untrimmed images) the colour vector.
            let small = ColorFeatures.workingCopy(of: decoded.pixels)
            let content = MarginTrimmer.content(of: small)
            let item = CatalogItem(imageName: name, source: source, width: decoded.header.size.width,
                                   height: decoded.header.size.height, contentHash: StoredContentHash.fingerprint(of: bytes, learned: learned?.descriptor),
                                   features: try color.embed(Self.colorContent(decoded.pixels, small: small, content: content)),
                                   palette: DominantColors.palette(of: small), metadata: metadata)
            // The learned vector sees the whole picture: trimming margins cost it copy-detection recall
            // (bench/RESULTS.md, issue 25 table (a): 25 % downscales 0.98 → 0.94).
            return Described(item: item, content: learned == nil ? nil : decoded.pixels)
        }
    }

    /// The pixels a catalog image's learned vector is computed from — exactly
    /// those ``describe(named:bytes:source:metadata:)`` hands over (the same
    /// decode, shrink-on-load included) — without computing the colour side
    /// or the fingerprint: for `vsearch model embed`, which prints only the learned vector.
    /// - Throws: ``ImageOpsError`` naming `source`.
    public func learnedContent(of bytes: [UInt8], source: String) throws(ImageOpsError) -> PixelBuffer {
        try catalogDecode(bytes, source: source).pixels
    }

    /// A catalog image's one decode, planned as a query without a box is
    /// (``plan(_:box:source:)``): shrink-on-load to what the colour side
    /// needs and, with a learned embedder, to what its input needs too.
    func catalogDecode(_ bytes: [UInt8], source: String) throws(ImageOpsError) -> DecodedImage {
        try decode(bytes, plan: plan(bytes, box: nil, source: source), source: source)
    }

    /// Decodes `bytes` as `plan` says, under ``limits``.
    /// - Throws: ``ImageOpsError`` naming `source`.
    public func decode(_ bytes: [UInt8], plan: QueryPlan, source: String) throws(ImageOpsError) -> DecodedImage {
        try ImageDecoder.decode(bytes, source: source, options: DecodingOptions(minimumSize: plan.minimumSize, limits: limits))
    }

    // MARK: - Planning

    /// The scale a whole image of upright size `full` is decoded at (at
    /// least; shrink-on-load rounds up to the next DCT or WebP scale), catalog
    /// image and query without a box alike: ``ColorFeatures/decodeSide`` on
    /// its longer side and ``ColorFeatures/decodeShortSide`` on its shorter;
    /// an image longer than ``ColorFeatures/wideAspect`` times its shorter
    /// side (a banner, a strip) keeps ``ColorFeatures/workingSide`` on its
    /// shorter side, because a product proposed on it is at most that side
    /// square and needs its own pixels for its vectors, colour and learned.
    static func wholeImageScale(of full: PixelSize) -> Double {
        let longer = Double(max(1, max(full.width, full.height))), shorter = Double(max(1, min(full.width, full.height)))
        if longer > ColorFeatures.wideAspect * shorter { return min(1, Double(ColorFeatures.workingSide) / shorter) }
        return min(1, max(Double(ColorFeatures.decodeSide) / longer, Double(ColorFeatures.decodeShortSide) / shorter))
    }

    /// Plans a query's decode: reads the header, checks ``limits`` and picks
    /// the shrink-on-load target (what the learned embedder's input needs too).
    /// - Throws: ``ImageOpsError`` naming `source`; a declared size beyond ``limits`` before anything is decoded.
    public func plan(_ bytes: [UInt8], box: PixelBox?, source: String = "query image") throws(ImageOpsError) -> QueryPlan {
        let header = try ImageDecoder.readHeader(bytes, source: source, limits: limits)
        let full = header.size
        let region = try box?.region(in: full) ?? PixelRect(x: 0, y: 0, width: full.width, height: full.height)
        // Without a box, decoded as catalog images are (``wholeImageScale(of:)``): the same bytes give
        // the same vector indexed and searched. Inside a box, just large enough that the box keeps
        // ColorFeatures.workingSide pixels on its longer side (a thin box never asks for a full-size decode).
        let colorScale = box == nil ? Self.wholeImageScale(of: full)
            : min(1, Double(ColorFeatures.workingSide) / Double(max(1, max(region.width, region.height))))
        let scale = max(colorScale, learned?.decodeScale(for: PixelSize(width: region.width, height: region.height)) ?? 0)
        return QueryPlan(header: header, region: region, minimumSize: full.scaled(by: scale))
    }

    /// Plans the decode of a query image whose objects are to be detected:
    /// large enough that the picture's longer side keeps `side` pixels (a
    /// small object's crop still has pixels for its own vector), and at least
    /// what a whole-image query keeps.
    /// - Throws: ``ImageOpsError`` naming `source`; a declared size beyond ``limits`` before anything is decoded.
    public func detectionPlan(_ bytes: [UInt8], side: Int, source: String = "query image") throws(ImageOpsError) -> QueryPlan {
        var plan = try plan(bytes, box: nil, source: source)
        let full = plan.header.size
        let scale = min(1, Double(side) / Double(max(1, max(full.width, full.height))))
        plan.minimumSize = plan.minimumSize.covering(full.scaled(by: scale))
        return plan
    }

    // MARK: - Queries

    /// The query vectors of an encoded image, inside `box` when given (in the
    /// image's upright pixels; clamped; a point selects its neighbourhood),
    /// and the region searched; learned ones too when there is a learned embedder.
    /// - Throws: ``FeaturesError`` naming `source`.
    public func query(_ bytes: [UInt8], box: PixelBox?, source: String = "query image") throws(FeaturesError) -> QueryFeatures {
        let plan: QueryPlan
        do { plan = try self.plan(bytes, box: box, source: source) } catch { throw .image(error) }
        return try query(bytes, box: box, plan: plan, source: source)
    }

    /// The query vectors of an encoded image whose decode was planned by ``plan(_:box:source:)``.
    /// - Throws: ``FeaturesError`` naming `source`.
    public func query(_ bytes: [UInt8], box: PixelBox?, plan: QueryPlan, source: String = "query image") throws(FeaturesError) -> QueryFeatures {
        try FeaturesError.catching {
            let decoded = try decode(bytes, plan: plan, source: source)
            return try describeRegion(of: decoded.pixels, full: plan.header.size, box: box, region: plan.region)
        }
    }

    /// The query vectors of several regions of one encoded image, decoded
    /// once (``QueryPlan/init(covering:)``), each described as
    /// ``query(_:box:plan:source:)`` describes its one region. Between regions
    /// `shouldStop` is asked whether the request still wants the rest (its
    /// answer was sent, or its deadline passed); when it says so, the regions
    /// described so far are returned. `described` is told after each region (progress, tests).
    /// - Parameter plans: one per box, from ``plan(_:box:source:)``.
    /// - Throws: ``FeaturesError`` naming `source`.
    public func queries(_ bytes: [UInt8], boxes: [PixelBox?], plans: [QueryPlan], source: String = "query image",
                        shouldStop: () -> Bool = { false }, described: (Int) -> Void = { _ in }) throws(FeaturesError) -> [QueryFeatures] {
        precondition(boxes.count == plans.count, "one plan per box")
        guard !plans.isEmpty, !shouldStop() else { return [] }
        return try FeaturesError.catching {
            let decoded = try decode(bytes, plan: QueryPlan(covering: plans), source: source)
            var features: [QueryFeatures] = []
            for (box, plan) in zip(boxes, plans) {
                if shouldStop() { break }
                features.append(try describeRegion(of: decoded.pixels, full: plan.header.size, box: box, region: plan.region))
                described(features.count)
            }
            return features
        }
    }

    /// One query region's vectors from the decoded picture (`decoded`: the
    /// image of upright size `full` after shrink-on-load). `regionVector` is
    /// the region's own learned vector when the caller already has it (the
    /// detector embedded that crop): only a proposal inside it is embedded then.
    func describeRegion(of decoded: PixelBuffer, full: PixelSize, box: PixelBox?, region: PixelRect,
                        regionVector: [Float]? = nil) throws -> QueryFeatures {
        let sx = Double(decoded.width) / Double(full.width), sy = Double(decoded.height) / Double(full.height)
        let x = min(decoded.width - 1, Int(Double(region.x) * sx)), y = min(decoded.height - 1, Int(Double(region.y) * sy))
        let crop = PixelRect(x: x, y: y,
                             width: max(1, min(decoded.width - x, Int((Double(region.width) * sx).rounded()))),
                             height: max(1, min(decoded.height - y, Int((Double(region.height) * sy).rounded()))))
        let pixels = try ImageProcessors.Crop(crop).process(decoded)
        let small = ColorFeatures.workingCopy(of: pixels)
        let content = MarginTrimmer.content(of: small)
        var forColor = [Self.colorContent(pixels, small: small, content: content)]
        var regions = [pixels]  // the learned vector sees the whole region, as catalog images are embedded
        // A box is the user's own region: no proposal inside it. A proposal that is the trimmed
        // content again, or holds it (the page inside a frame), would add nothing but false matches.
        if box == nil, let proposal = ObjectProposal.region(in: small), !proposal.contains(content),
           proposal.overlap(with: content) < 0.9 {
            let cropped = try ImageProcessors.Crop(Self.mapped(proposal, from: small.size, to: pixels.size)).process(pixels)
            forColor.append(cropped)
            regions.append(cropped)
        }
        let vectors = try color.embed(forColor)
        let learnedVectors = try learned.map { (embedder) throws(EmbeddingError) -> [[Float]] in
            guard let regionVector else { return try embedder.embed(regions) }
            return try [regionVector] + (regions.count > 1 ? embedder.embed(Array(regions.dropFirst())) : [])
        }
        return QueryFeatures(vectors: vectors, learned: learnedVectors, region: region)
    }
}
