import Foundation
import ImageOps

/// The main colours of an image and how much of it each covers, for colour
/// search ("shop by colour").
///
/// k-means (k ≤ 8) in L\*a\*b\* over a ≤ 48 px thumbnail, seeded
/// deterministically (farthest-point), at most 8 iterations (stopping when no
/// pixel changes cluster); clusters that end up within ΔE 8 of each other are
/// merged. Pixels are converted through ``LabColor/approximate(red:green:blue:)``.
/// Transparent pixels are ignored.
///
/// ```swift
/// let palette = DominantColors.palette(of: image)
/// palette.first?.color.hex   // "f4f4f2"
/// palette.coverage(of: try LabColor(hex: "ff0000")) // 0...1
/// ```
public struct DominantColors: Sendable, Hashable, Codable {
    /// One colour and the fraction of (opaque) pixels it stands for.
    public struct Entry: Sendable, Hashable, Codable {
        /// The cluster's mean colour.
        public var color: LabColor
        /// Fraction of the image, 0...1.
        public var fraction: Float

        /// Creates an entry.
        public init(color: LabColor, fraction: Float) {
            self.color = color
            self.fraction = fraction
        }
    }

    /// The colours, largest first.
    public var entries: [Entry]

    /// Creates a palette from entries.
    public init(entries: [Entry]) { self.entries = entries }

    /// The colour distance (ΔE76) at which a colour no longer counts as
    /// "near" a query colour; coverage falls linearly from 1 at distance 0
    /// to 0 at this distance.
    public static let nearDistance: Float = 30

    /// How much of the image is near `query`, perceptually: Σ fraction ×
    /// max(0, 1 − ΔE / ``nearDistance``). 1 means the whole image is exactly that colour.
    public func coverage(of query: LabColor) -> Float {
        entries.reduce(0) { total, entry in
            total + entry.fraction * max(0, 1 - entry.color.distance(to: query) / DominantColors.nearDistance)
        }
    }

    /// Computes the palette of an image.
    public static func palette(of image: PixelBuffer, maxColors: Int = 8) -> DominantColors {
        let small = image.size.maxDimension > 48
            ? Resampler.resample(image, to: image.size.fitting(inside: 48), filter: .triangle)
            : image
        // Pixels of one cell of the 32×32×32 Lab table are one weighted point
        // (in the order first seen): the same clustering over far fewer points, up to float
        // rounding (sums taken in another order).
        var points: [LabColor] = []
        var weights: [Float] = []
        var slot = [Int32](repeating: -1, count: 32768)
        small.bytes.withUnsafeBufferPointer { bytes in
            for index in stride(from: 0, to: bytes.count, by: 4) {
                let alpha = small.hasAlpha ? Float(bytes[index + 3]) / 255 : 1
                if alpha < 0.5 { continue }
                let cell = LabColor.tableIndex(red: bytes[index], green: bytes[index + 1], blue: bytes[index + 2])
                if slot[cell] < 0 {
                    slot[cell] = Int32(points.count)
                    points.append(LabColor.table[cell])
                    weights.append(alpha)
                } else {
                    weights[Int(slot[cell])] += alpha
                }
            }
        }
        guard !points.isEmpty else { return DominantColors(entries: []) }

        // Farthest-point seeding from the mean: deterministic and spread out.
        var centres: [LabColor] = [points[0]]
        var nearest = points.map { $0.distance(to: points[0]) }
        while centres.count < maxColors {
            guard let (far, distance) = nearest.enumerated().max(by: { $0.element < $1.element }).map({ ($0.offset, $0.element) }),
                  distance > 4 else { break }
            centres.append(points[far])
            for i in points.indices { nearest[i] = min(nearest[i], points[i].distance(to: points[far])) }
        }
        var assignment = [Int](repeating: 0, count: points.count)
        for iteration in 0..<8 {
            var changed = false
            for i in points.indices {
                var best = 0, bestDistance = Float.infinity
                for (c, centre) in centres.enumerated() {
                    let dl = points[i].l - centre.l, da = points[i].a - centre.a, db = points[i].b - centre.b
                    let d = dl * dl + da * da + db * db  // squared: same ordering, no square root
                    if d < bestDistance { bestDistance = d; best = c }
                }
                if assignment[i] != best || iteration == 0 { changed = true }
                assignment[i] = best
            }
            if !changed { break }
            var sums = [(Float, Float, Float, Float)](repeating: (0, 0, 0, 0), count: centres.count)
            for i in points.indices {
                let w = weights[i], p = points[i]
                sums[assignment[i]].0 += p.l * w
                sums[assignment[i]].1 += p.a * w
                sums[assignment[i]].2 += p.b * w
                sums[assignment[i]].3 += w
            }
            for c in centres.indices where sums[c].3 > 0 {
                centres[c] = LabColor(l: sums[c].0 / sums[c].3, a: sums[c].1 / sums[c].3, b: sums[c].2 / sums[c].3)
            }
        }
        var fractions = [Float](repeating: 0, count: centres.count)
        for i in points.indices { fractions[assignment[i]] += weights[i] }
        let total = fractions.reduce(0, +)
        var entries = centres.indices.filter { fractions[$0] > 0 }.map { Entry(color: centres[$0], fraction: fractions[$0] / total) }
        // Merge near-identical clusters.
        entries.sort { $0.fraction > $1.fraction }
        var merged: [Entry] = []
        for entry in entries {
            if let index = merged.firstIndex(where: { $0.color.distance(to: entry.color) < 8 }) {
                merged[index].fraction += entry.fraction
            } else {
                merged.append(entry)
            }
        }
        return DominantColors(entries: merged.sorted { $0.fraction > $1.fraction })
    }
}
