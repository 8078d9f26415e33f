import ImageOps

/// Features of an encoded image, the same way for what is indexed and what
/// is queried — the visible stages of the features pipeline:
///
/// 1. **decode** with shrink-on-load to what the features need
///    (``wholeImageScale(of:)``);
/// 2. **reduce** to a ≤ ``ColorFeatures/workingSide`` px copy;
/// 3. **trim** uniform margins (``MarginTrimmer``): borders, bars, white page;
/// 4. **describe** the content (``ColorFeatures``), from the decoded pixels
///    under the trimmed rectangle, so trimming loses no resolution;
/// 5. **embed** the same content with the learned model, when one is given
///    (``ImageEmbedder``; the decode then keeps its input side), from the
///    whole picture: margins are trimmed for colour only.
///
/// A query without a box also proposes where a product placed on a page is
/// (``ObjectProposal``) and, unless that is the trimmed content again or holds
/// it, describes that region too: ``QueryFeatures`` holds both vectors and a
/// catalog image scores the better of the two.
public enum ImageFeatures {
    /// A catalog row for one encoded image.
    /// - Throws: ``ImageOpsError`` naming `source`.
    /// - Parameter learned: the learned embedder; without one the item has no learned vector.
    /// - Throws: ``FeaturesError`` naming `source`: the image's problem, or the model's.
    public static func catalogItem(named name: String, bytes: [UInt8], source: String, metadata: [String: String],
                                   limits: ImageLimits = .default,
                                   learned: (any ImageEmbedder)? = nil) throws(FeaturesError) -> CatalogItem {
        let described: Described
        do { described = try describe(named: name, bytes: bytes, source: source, metadata: metadata, limits: limits, learned: learned) } catch {
            throw .image(error)
        }
        guard let learned, let content = described.content else { return described.item }
        var item = described.item
        do { item.learned = try learned.embed(content) } catch { throw .embedding(error) }
        return item
    }

    /// A catalog row without its learned vector, and — when `learned` is given —
    /// the pixels that vector is computed from (so a batch of images runs through
    /// the model at once, ``LearnedEmbedder/embed(_:)``).
    public struct Described: Sendable {
        /// The row: colour vector, palette, size, fingerprint (tagged with the learned model when one is given).
        public var item: CatalogItem
        /// The trimmed content at the decoded resolution, when a learned model will embed it.
        public var content: PixelBuffer?
    }

    /// Decodes once (shrink-on-load to what both vectors need), trims, and computes the colour side.
    /// - Throws: ``ImageOpsError`` naming `source`.
    public static func describe(named name: String, bytes: [UInt8], source: String, metadata: [String: String],
                                limits: ImageLimits = .default, learned: (any ImageEmbedder)? = nil) throws(ImageOpsError) -> Described {
        let decoded = try catalogDecode(bytes, source: source, limits: limits, learned: learned)
        // One small copy serves the trimming, the palette and (untrimmed images) the features.
        let small = ColorFeatures.workingCopy(of: decoded.pixels)
        let content = MarginTrimmer.content(of: small)
        let item = CatalogItem(imageName: name, source: source, width: decoded.header.size.width,
                               height: decoded.header.size.height, contentHash: StoredContentHash.fingerprint(of: bytes, learned: learned?.descriptor),
                               features: trimmedVector(decoded.pixels, small: small, content: content),
                               palette: DominantColors.palette(of: small), metadata: metadata)
        // The learned vector sees the whole picture: trimming margins cost it copy-detection recall
        // (bench/RESULTS.md, issue 25 table (a): 25 % downscales 0.98 → 0.94).
        return Described(item: item, content: learned == nil ? nil : decoded.pixels)
    }

    /// The pixels a catalog image's learned vector is computed from — exactly
    /// those ``describe(named:bytes:source:metadata:limits:learned:)`` hands
    /// over (the same decode, shrink-on-load included) — without computing the
    /// colour side or the fingerprint: for `vsearch model embed`, which prints
    /// only the learned vector.
    /// - Throws: ``ImageOpsError`` naming `source`.
    public static func learnedContent(of bytes: [UInt8], source: String, limits: ImageLimits = .default,
                                      learned: any ImageEmbedder) throws(ImageOpsError) -> PixelBuffer {
        try catalogDecode(bytes, source: source, limits: limits, learned: learned).pixels
    }

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

    /// A catalog image's one decode, planned as a query without a box is
    /// (``plan(_:box:source:limits:learned:)``): shrink-on-load to what the
    /// colour side needs and, with a learned embedder, to what its input needs too.
    static func catalogDecode(_ bytes: [UInt8], source: String, limits: ImageLimits,
                              learned: (any ImageEmbedder)?) throws(ImageOpsError) -> DecodedImage {
        let plan = try plan(bytes, box: nil, source: source, limits: limits, learned: learned)
        return try ImageDecoder.decode(bytes, source: source, options: DecodingOptions(minimumSize: plan.minimumSize, limits: limits))
    }

    /// What decoding a query image will take, read from its header alone:
    /// the region searched, the shrink-on-load target and the pixels the
    /// decode produces — so a server can budget a query before it decodes.
    public struct QueryPlan: Sendable, Hashable {
        /// The image's header (limits already checked).
        public var header: ImageHeader
        /// The region searched, in the image's upright pixels.
        public var region: PixelRect
        /// The smallest decoded size that keeps ``ColorFeatures/workingSide`` pixels in the region.
        public var minimumSize: PixelSize
        /// Pixels the decode produces (after DCT or WebP scaling): its memory cost is about 4 bytes each.
        public var decodedPixels: Int { ShrinkOnLoad.decodedPixelCount(of: header, minimumSize: minimumSize) }
    }

    /// Plans a query's decode: reads the header, checks `limits` and picks
    /// the shrink-on-load target.
    /// - Throws: ``ImageOpsError`` naming `source`; a declared size beyond `limits` before anything is decoded.
    /// - Parameter learned: a learned embedder whose input the decode must also keep.
    public static func plan(_ bytes: [UInt8], box: PixelBox?, source: String = "query image",
                            limits: ImageLimits = .default, learned: (any ImageEmbedder)? = nil) throws(ImageOpsError) -> QueryPlan {
        let header = try ImageDecoder.readHeader(bytes, source: source, limits: limits)
        let full = header.size
        let region = try box?.region(in: full) ?? PixelRect(x: 0, y: 0, width: full.width, height: full.height)
        // Without a box, decoded as catalog images are (``wholeImageScale(of:)``): the same bytes give
        // the same vector indexed and searched. Inside a box, just large enough that the box keeps
        // ColorFeatures.workingSide pixels on its longer side (a thin box never asks for a full-size decode).
        let colorScale = box == nil ? wholeImageScale(of: full)
            : min(1, Double(ColorFeatures.workingSide) / Double(max(1, max(region.width, region.height))))
        let scale = max(colorScale, learned?.decodeScale(for: PixelSize(width: region.width, height: region.height)) ?? 0)
        return QueryPlan(header: header, region: region, minimumSize: full.scaled(by: scale))
    }

    /// The query vectors of an encoded image, inside `box` when given (in the
    /// image's upright pixels; clamped; a point selects its neighbourhood),
    /// and the region searched.
    /// - Throws: ``ImageOpsError`` naming `source`.
    public static func query(_ bytes: [UInt8], box: PixelBox?, source: String = "query image",
                             limits: ImageLimits = .default, learned: (any ImageEmbedder)? = nil) throws(FeaturesError) -> QueryFeatures {
        let plan: QueryPlan
        do { plan = try self.plan(bytes, box: box, source: source, limits: limits, learned: learned) } catch { throw .image(error) }
        return try query(bytes, box: box, plan: plan, source: source, limits: limits, learned: learned)
    }

    /// The query vectors of an encoded image whose decode was planned by ``plan(_:box:source:limits:)``.
    /// - Throws: ``ImageOpsError`` naming `source`.
    /// - Parameter learned: the learned embedder; with one, every query vector has its learned twin.
    public static func query(_ bytes: [UInt8], box: PixelBox?, plan: QueryPlan, source: String = "query image",
                             limits: ImageLimits = .default, learned: (any ImageEmbedder)? = nil) throws(FeaturesError) -> QueryFeatures {
        try featuresWork { try describeQuery(bytes, box: box, plan: plan, source: source, limits: limits, learned: learned) }
    }

    static func describeQuery(_ bytes: [UInt8], box: PixelBox?, plan: QueryPlan, source: String, limits: ImageLimits,
                              learned: (any ImageEmbedder)?) throws -> QueryFeatures {
        let decoded = try ImageDecoder.decode(bytes, source: source, options: DecodingOptions(minimumSize: plan.minimumSize, limits: limits))
        return try describeRegion(of: decoded.pixels, full: plan.header.size, box: box, region: plan.region, learned: learned)
    }

    /// Plans the decode of a query image whose objects are to be detected:
    /// large enough that the picture's longer side keeps `side` pixels (a
    /// small object's crop still has pixels for its own vector), and at least
    /// what a whole-image query keeps.
    /// - Throws: ``ImageOpsError`` naming `source`; a declared size beyond `limits` before anything is decoded.
    public static func detectionPlan(_ bytes: [UInt8], side: Int, source: String = "query image", limits: ImageLimits = .default,
                                     learned: (any ImageEmbedder)? = nil) throws(ImageOpsError) -> QueryPlan {
        var plan = try plan(bytes, box: nil, source: source, limits: limits, learned: learned)
        let full = plan.header.size
        let scale = min(1, Double(side) / Double(max(1, max(full.width, full.height))))
        plan.minimumSize = plan.minimumSize.covering(full.scaled(by: scale))
        return plan
    }

    /// The plan of one decode that serves several regions of the same image
    /// (a discover search's box and points): the largest of their
    /// shrink-on-load targets, so every region keeps the pixels its own plan
    /// asked for. Its ``QueryPlan/decodedPixels`` is what the one decode costs.
    /// - Precondition: `plans` is not empty and every plan is of the same image.
    public static func combined(_ plans: [QueryPlan]) -> QueryPlan {
        precondition(!plans.isEmpty, "at least one region")
        let header = plans[0].header
        let minimum = plans.dropFirst().reduce(plans[0].minimumSize) { $0.covering($1.minimumSize) }
        return QueryPlan(header: header, region: PixelRect(x: 0, y: 0, width: header.size.width, height: header.size.height),
                         minimumSize: minimum)
    }

    /// The query vectors of several regions of one encoded image, decoded
    /// once (``combined(_:)``), each described as ``query(_:box:plan:source:limits:learned:)``
    /// describes its one region. Between regions `shouldStop` is asked
    /// whether the request still wants the rest (its answer was sent, or its
    /// deadline passed); when it says so, the regions described so far are
    /// returned. `described` is told after each region (progress, tests).
    /// - Parameter plans: one per box, from ``plan(_:box:source:limits:learned:)``.
    /// - Throws: ``FeaturesError`` naming `source`.
    public static func queries(_ bytes: [UInt8], boxes: [PixelBox?], plans: [QueryPlan], source: String = "query image",
                               limits: ImageLimits = .default, learned: (any ImageEmbedder)? = nil,
                               shouldStop: () -> Bool = { false }, described: (Int) -> Void = { _ in }) throws(FeaturesError) -> [QueryFeatures] {
        precondition(boxes.count == plans.count, "one plan per box")
        guard !plans.isEmpty, !shouldStop() else { return [] }
        return try featuresWork {
            let plan = combined(plans)
            let decoded = try ImageDecoder.decode(bytes, source: source, options: DecodingOptions(minimumSize: plan.minimumSize, limits: limits))
            var features: [QueryFeatures] = []
            for (box, plan) in zip(boxes, plans) {
                if shouldStop() { break }
                features.append(try describeRegion(of: decoded.pixels, full: plan.header.size, box: box, region: plan.region, learned: learned))
                described(features.count)
            }
            return features
        }
    }

    /// Runs decoding and embedding work, its failures as ``FeaturesError``:
    /// image errors and model errors wrapped, anything else a failed inference.
    static func featuresWork<T>(_ work: () throws -> T) throws(FeaturesError) -> T {
        do {
            return try work()
        } catch let error as FeaturesError {
            throw error
        } catch let error as ImageOpsError {
            throw .image(error)
        } catch let error as EmbeddingError {
            throw .embedding(error)
        } catch {
            throw .embedding(.inference(reason: "\(error)"))
        }
    }

    /// One query region's vectors from the decoded picture (`decoded`: the
    /// image of upright size `full` after shrink-on-load). `regionVector` is
    /// the region's own learned vector when the caller already has it (the
    /// detector embedded that crop): only a proposal inside it is embedded then.
    static func describeRegion(of decoded: PixelBuffer, full: PixelSize, box: PixelBox?, region: PixelRect,
                               learned: (any ImageEmbedder)?, regionVector: [Float]? = nil) throws -> QueryFeatures {
        let sx = Double(decoded.width) / Double(full.width), sy = Double(decoded.height) / Double(full.height)
        let x = min(decoded.width - 1, Int(Double(region.x) * sx)), y = min(decoded.height - 1, Int(Double(region.y) * sy))
        let crop = PixelRect(x: x, y: y,
                             width: max(1, min(decoded.width - x, Int((Double(region.width) * sx).rounded()))),
                             height: max(1, min(decoded.height - y, Int((Double(region.height) * sy).rounded()))))
        let pixels = try ImageProcessors.Crop(crop).process(decoded)
        let small = ColorFeatures.workingCopy(of: pixels)
        let content = MarginTrimmer.content(of: small)
        var vectors = [trimmedVector(pixels, small: small, content: content)]
        var regions = [pixels]  // the learned vector sees the whole region, as catalog images are embedded
        // A box is the user's own region: no proposal inside it. A proposal that is the trimmed
        // content again, or holds it (the page inside a frame), would add nothing but false matches.
        if box == nil, let proposal = ObjectProposal.region(in: small), !proposal.contains(content),
           proposal.overlap(with: content) < 0.9 {
            let cropped = try ImageProcessors.Crop(mapped(proposal, from: small.size, to: pixels.size)).process(pixels)
            vectors.append(ColorFeatures.vector(of: cropped))
            regions.append(cropped)
        }
        let learnedVectors = try learned.map { (embedder) throws(EmbeddingError) -> [[Float]] in
            guard let regionVector else { return try embedder.embed(regions) }
            return try [regionVector] + (regions.count > 1 ? embedder.embed(Array(regions.dropFirst())) : [])
        }
        return QueryFeatures(vectors: vectors, learned: learnedVectors, region: region)
    }

    /// The colour vector of `pixels` inside `content`, the uniform margins found on `small` (their reduced copy).
    static func trimmedVector(_ pixels: PixelBuffer, small: PixelBuffer, content: PixelRect) -> [Float] {
        if content.width == small.width && content.height == small.height { return ColorFeatures.vector(of: small) }
        return ColorFeatures.vector(of: trimmed(pixels, small: small, content: content))
    }

    /// `pixels` inside `content`, the uniform margins found on `small` (their reduced copy).
    static func trimmed(_ pixels: PixelBuffer, small: PixelBuffer, content: PixelRect) -> PixelBuffer {
        if content.width == small.width && content.height == small.height { return pixels }
        let rect = mapped(insetTrimmedSides(content, of: small.size), from: small.size, to: pixels.size)
        // `mapped` stays inside `pixels`, so the crop cannot fail.
        return (try? ImageProcessors.Crop(rect).process(pixels)) ?? pixels
    }

    /// `content` less one pixel on each side where a margin was trimmed: the
    /// first line inside a margin is, in the reduced copy, a blend of the
    /// margin and the picture (kept when the content is too small to spare it).
    static func insetTrimmedSides(_ content: PixelRect, of size: PixelSize) -> PixelRect {
        let left = content.x > 0 ? 1 : 0, top = content.y > 0 ? 1 : 0
        let right = content.x + content.width < size.width ? 1 : 0, bottom = content.y + content.height < size.height ? 1 : 0
        guard content.width - left - right >= 4, content.height - top - bottom >= 4 else { return content }
        return PixelRect(x: content.x + left, y: content.y + top, width: content.width - left - right,
                         height: content.height - top - bottom)
    }

    /// A rectangle of an image of size `from` in the pixels of the same image
    /// at size `to`: the pixels wholly inside it (a trimmed border's blended
    /// edge stays out), at least one.
    static func mapped(_ rect: PixelRect, from: PixelSize, to: PixelSize) -> PixelRect {
        let sx = Double(to.width) / Double(from.width), sy = Double(to.height) / Double(from.height)
        let x0 = min(to.width - 1, Int((Double(rect.x) * sx).rounded(.up)))
        let y0 = min(to.height - 1, Int((Double(rect.y) * sy).rounded(.up)))
        let x1 = max(x0 + 1, min(to.width, Int((Double(rect.x + rect.width) * sx).rounded(.down))))
        let y1 = max(y0 + 1, min(to.height, Int((Double(rect.y + rect.height) * sy).rounded(.down))))
        return PixelRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }
}

/// What a query image is searched with: one vector for the whole image (its
/// margins trimmed) and, when ``ObjectProposal`` finds a product placed on a
/// page, one for that region. A catalog image's score is the better of its
/// scores against each.
public struct QueryFeatures: Sendable, Hashable {
    /// The whole image's vector first, then the proposal's; never empty.
    public let vectors: [[Float]]
    /// The learned vectors of the same regions, in the same order, when a learned embedder was given.
    public let learned: [[Float]]?
    /// The region of the image searched (the box, or the whole image).
    public let region: PixelRect

    /// The whole image's vector.
    public var primary: [Float] { vectors[0] }

    /// Creates query features.
    public init(vectors: [[Float]], learned: [[Float]]? = nil, region: PixelRect) {
        precondition(!vectors.isEmpty, "a query has at least one vector")
        precondition(learned == nil || learned?.count == vectors.count, "a learned vector for each region")
        self.vectors = vectors
        self.learned = learned
        self.region = region
    }
}

extension PixelSize {
    /// This size scaled by `factor`, rounded up, at least 1×1.
    func scaled(by factor: Double) -> PixelSize {
        PixelSize(width: max(1, Int((Double(width) * factor).rounded(.up))), height: max(1, Int((Double(height) * factor).rounded(.up))))
    }

    /// The smallest size at least as large as both.
    func covering(_ other: PixelSize) -> PixelSize {
        PixelSize(width: max(width, other.width), height: max(height, other.height))
    }
}
