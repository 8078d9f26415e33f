import ImageOps

/// Two things touching on a plain background make one foreground component;
/// the network tells them apart. The component's cells of the detector's
/// ``FeatureMap`` (those its foreground covers by at least ``cellCover``) are
/// clustered in two by their unit features (2-means from the two most unlike
/// cells); when the two centres differ by at least ``separation`` (1 − cosine)
/// every foreground pixel of the box joins the cluster of the nearest member
/// cell, and when both clusters hold at least ``minimumPart`` of the pixels
/// the component becomes their two boxes. Only components whose box covers
/// between ``minimumBox`` and ``maximumBox`` of the picture are tried: a
/// product filling the picture stays one object.
public struct ComponentSplit: Sendable, Hashable {
    public var minimumBox = 0.04
    public var maximumBox = 0.45
    public var cellCover = 0.5
    public var minimumCells = 4
    public var separation: Float = 0.6
    public var minimumPart = 0.2
    /// The detector input's longer side.
    public var inputSide = 384

    public init() {}

    /// Whether a proposal is one this split looks at.
    func applies(to proposal: ForegroundProposals.Proposal, picture: PixelSize) -> Bool {
        let share = Double(proposal.region.width * proposal.region.height) / Double(picture.width * picture.height)
        return share >= minimumBox && share < maximumBox
    }

    /// The proposal's parts: two boxes (picture pixels) when it holds two unlike things, else nil.
    func parts(of proposal: ForegroundProposals.Proposal, analysis: ForegroundProposals.Analysis, map: FeatureMap,
               cells unit: [[Float]], picture: PixelSize) -> [PixelRect]? {
        let mask = analysis.mask, box = proposal.workingBox
        // A cell's size in working-copy pixels.
        let cellWidth = map.cellSize.width * analysis.scale, cellHeight = map.cellSize.height * analysis.scale
        func cell(_ x: Int, _ y: Int) -> Int {
            min(Int(Double(y) / cellHeight), map.rows - 1) * map.columns + min(Int(Double(x) / cellWidth), map.columns - 1)
        }
        var covered = [Int](repeating: 0, count: map.columns * map.rows), all = covered
        for y in 0..<mask.height { for x in 0..<mask.width { all[cell(x, y)] += 1 } }
        var pixels: [(x: Int, y: Int)] = []
        for y in box.y..<(box.y + box.height) {
            for x in box.x..<(box.x + box.width) where mask[x, y] {
                covered[cell(x, y)] += 1
                pixels.append((x, y))
            }
        }
        let members = covered.indices.filter { all[$0] > 0 && Double(covered[$0]) / Double(all[$0]) >= cellCover }
        guard members.count >= minimumCells else { return nil }
        let vectors = members.map { unit[$0] }
        let (labels, centres) = Self.twoMeans(vectors)
        guard 1 - FeatureMap.dot(centres.0, centres.1) >= separation else { return nil }
        // Each pixel to the nearest member cell's cluster.
        let centreX = members.map { (Double($0 % map.columns) + 0.5) * cellWidth }
        let centreY = members.map { (Double($0 / map.columns) + 0.5) * cellHeight }
        var bounds = [(minX: Int.max, minY: Int.max, maxX: -1, maxY: -1, count: 0), (minX: Int.max, minY: Int.max, maxX: -1, maxY: -1, count: 0)]
        for pixel in pixels {
            var best = 0, distance = Double.infinity
            for index in members.indices {
                let dx = Double(pixel.x) - centreX[index], dy = Double(pixel.y) - centreY[index]
                let d = dx * dx + dy * dy
                if d < distance { distance = d; best = index }
            }
            let part = labels[best]
            bounds[part].minX = min(bounds[part].minX, pixel.x); bounds[part].maxX = max(bounds[part].maxX, pixel.x + 1)
            bounds[part].minY = min(bounds[part].minY, pixel.y); bounds[part].maxY = max(bounds[part].maxY, pixel.y + 1)
            bounds[part].count += 1
        }
        guard bounds.allSatisfy({ Double($0.count) >= minimumPart * Double(pixels.count) }) else { return nil }
        return bounds.map { part in
            PixelRect(x: part.minX, y: part.minY, width: part.maxX - part.minX, height: part.maxY - part.minY)
                .unscaled(by: analysis.scale, within: picture)
        }
    }

    /// 2-means on unit vectors: started from the two least alike, ten rounds
    /// of each vector to the centre it is more alike, each centre the
    /// normalised mean of its vectors. The labels (0 or 1) and the two centres.
    static func twoMeans(_ vectors: [[Float]]) -> (labels: [Int], centres: ([Float], [Float])) {
        var first = 0, second = 0, least = Float.infinity
        for i in vectors.indices {
            for j in vectors.indices where j != i {
                let similarity = FeatureMap.dot(vectors[i], vectors[j])
                if similarity < least { least = similarity; first = i; second = j }
            }
        }
        var centres = [vectors[first], vectors[second]]
        var labels = [Int](repeating: 0, count: vectors.count)
        for _ in 0..<10 {
            labels = vectors.map { FeatureMap.dot($0, centres[0]) >= FeatureMap.dot($0, centres[1]) ? 0 : 1 }
            for k in 0..<2 {
                let members = vectors.indices.filter { labels[$0] == k }
                guard !members.isEmpty else { continue }
                var mean = [Float](repeating: 0, count: vectors[0].count)
                for member in members { for d in mean.indices { mean[d] += vectors[member][d] } }
                let length = max(1e-6, mean.reduce(0) { $0 + $1 * $1 }.squareRoot())
                centres[k] = mean.map { $0 / length }
            }
        }
        return (labels, (centres[0], centres[1]))
    }
}
