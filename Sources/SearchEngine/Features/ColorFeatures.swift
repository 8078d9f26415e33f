import Foundation
import ImageOps

/// The colour signature vsearch indexes and compares: 112 `Float`s of unit
/// length, so similarity is a dot product.
///
/// Design (see docs/decisions.md, "Colour features"):
/// - **Global HSV histogram, 64 bins, soft-binned.** 48 chromatic bins
///   (12 hues × 2 saturations × 2 values, trilinear interpolation, hue
///   circular) and 16 grey levels for pixels without reliable hue (low
///   saturation or very dark: a smooth ramp moves a pixel's weight from
///   grey to chromatic). Soft binning keeps JPEG recompression and small
///   brightness shifts from moving mass across bin edges. The histogram is
///   normalised to sum 1 and square-rooted (Hellinger), which damps a
///   dominant background colour and makes the dot product the
///   Bhattacharyya coefficient.
/// - **Layout, 48 dims:** the mean L\*a\*b\* colour of a 4×4 grid, with the
///   image's mean lightness subtracted (brightness-shift invariant), made
///   mirror-invariant (``mirrorInvariant(_:)``) and scaled to unit length. It
///   separates images with the same colours in different places, which a
///   histogram alone cannot.
/// - The two parts are weighted √(1 − 0.35²) ≈ 0.94 and 0.35, so the whole
///   vector has unit length; transparent pixels are ignored (weighted by
///   alpha). The layout weight was chosen on bench/quality.py's copy-detection
///   set (0.6 → 0.35 raised off-centre-crop recall@1 from 0.87 to 0.95 while
///   keeping every other transform ≥ 0.95) — tuned on that set, so treat its
///   figures as optimistic for other catalogs.
/// - **Exposure normalisation** first (``exposureGain(_:)``): darkened copies
///   match their originals.
///
/// Compute it from a small image: a 96–128 px thumbnail carries all the
/// colour information, which is why indexing decodes with shrink-on-load.
public enum ColorFeatures {
    /// Vector length.
    public static let dimensions = 112
    /// The version of the features pipeline (``FeaturePipeline``): 1 computed
    /// the vector of the whole image; 2 trims uniform margins first; 3 sees
    /// colour-managed pixels (embedded profiles converted to sRGB — untagged and
    /// sRGB sources give the same vectors as 2, tagged ones change); 4 decodes
    /// a whole image at the size the features need (``decodeSide`` on its
    /// longer side, ``decodeShortSide`` on its shorter, where 3 kept
    /// ``workingSide`` on the shorter side and reduced twice); 5 keeps version
    /// 3's decode for images longer than ``wideAspect`` times their shorter side
    /// (version 4 halved a banner's product: held-out `banner` recall@1 0.922 →
    /// 0.823). A catalog row records the version that computed it
    /// (``StoredContentHash/fingerprint(of:)``), so `vsearch serve` and
    /// `catalog stats` report rows to re-index.
    public static let version = 5
    /// Histogram part length.
    static let histogramBins = 64
    /// Weights of the two parts.
    static let layoutWeight: Float = 0.35
    static let histogramWeight: Float = (1 - layoutWeight * layoutWeight).squareRoot()
    /// The longest side features are computed at.
    public static let workingSide = 128
    /// The longer side a whole image is decoded to at least (JPEG's DCT
    /// scaling, WebP's scaled decode): three quarters of ``workingSide``, so a
    /// 1000 × 750 photo decodes at 1/8 (125 × 94) and is described as it comes,
    /// not at 1/4 and reduced. Chosen a priori, not tuned on a benchmark set.
    public static let decodeSide = 96
    /// The shorter side a whole image is decoded to at least: half of
    /// ``workingSide``, for images up to ``wideAspect``:1 (a 1200 × 600 picture
    /// decodes to ≥ 128 × 64). Chosen a priori, like ``decodeSide``.
    public static let decodeShortSide = 64
    /// The aspect beyond which a whole image is decoded as version 3 did
    /// (``workingSide`` on its shorter side): a product proposed on a 3:1
    /// banner is at most its height square, and at ``decodeShortSide`` it
    /// kept too few pixels for its own vectors. 2:1 was chosen from that
    /// geometry (a proposal is at most half of such an image), not tuned on a
    /// benchmark set; photos (4:3, 3:2, 16:9) keep the smaller decode.
    public static let wideAspect: Double = 2

    /// The feature vector of an image (any size; it is reduced to ``workingSide`` first).
    public static func vector(of image: PixelBuffer) -> [Float] {
        let small = workingCopy(of: image)
        let gain = exposureGain(small)
        // One accumulator array, read through a raw pointer in the per-pixel loop (no bounds or
        // uniqueness checks): the histogram's bins, then the 16 cells' RGB sums, then their weights.
        let sumsStart = histogramBins, weightsStart = histogramBins + 16 * 3
        var accumulators = [Float](repeating: 0, count: weightsStart + 16)
        var totalWeight: Float = 0
        var lightnessSum: Float = 0
        let width = small.width, height = small.height
        small.bytes.withUnsafeBufferPointer { pixels in
            gain.withUnsafeBufferPointer { gain in
                accumulators.withUnsafeMutableBufferPointer { accumulators in
                    let histogram = accumulators.baseAddress!, sums = histogram + sumsStart, weights = histogram + weightsStart
                    for y in 0..<height {
                        let cellY = min(3, y * 4 / height)
                        for x in 0..<width {
                            let index = (y * width + x) * 4
                            let weight = small.hasAlpha ? Float(pixels[index + 3]) / 255 : 1
                            if weight <= 0 { continue }
                            let r = gain[Int(pixels[index])], g = gain[Int(pixels[index + 1])], b = gain[Int(pixels[index + 2])]
                            accumulateHSV(r, g, b, weight: weight, into: histogram)
                            // Cell means are taken in sRGB and converted to Lab once per cell
                            // (a per-pixel Lab conversion cost a third of indexing time).
                            let cell = cellY * 4 + min(3, x * 4 / width)
                            sums[cell * 3] += Float(r) * weight
                            sums[cell * 3 + 1] += Float(g) * weight
                            sums[cell * 3 + 2] += Float(b) * weight
                            weights[cell] += weight
                            totalWeight += weight
                        }
                    }
                }
            }
        }
        let histogram = Array(accumulators[..<sumsStart])
        var layoutSums = Array(accumulators[sumsStart..<weightsStart])
        let layoutWeights = Array(accumulators[weightsStart...])
        // Convert each cell's mean colour to Lab; lightness is then taken relative to the image mean.
        for cell in 0..<16 where layoutWeights[cell] > 0 {
            let w = layoutWeights[cell]
            let lab = LabColor(red: UInt8(min(255, (layoutSums[cell * 3] / w).rounded())),
                               green: UInt8(min(255, (layoutSums[cell * 3 + 1] / w).rounded())),
                               blue: UInt8(min(255, (layoutSums[cell * 3 + 2] / w).rounded())))
            layoutSums[cell * 3] = lab.l * w
            layoutSums[cell * 3 + 1] = lab.a * w
            layoutSums[cell * 3 + 2] = lab.b * w
            lightnessSum += lab.l * w
        }
        var vector = [Float](repeating: 0, count: dimensions)
        guard totalWeight > 0 else { return vector }  // fully transparent: no colour at all

        // Histogram: sum 1, square root (unit length), weighted.
        let histogramTotal = histogram.reduce(0, +)
        for bin in 0..<histogramBins {
            vector[bin] = (histogram[bin] / histogramTotal).squareRoot() * histogramWeight
        }
        // Layout: cell means, lightness relative to the image mean; empty cells borrow the mean.
        let meanL = lightnessSum / totalWeight
        var layout = [Float](repeating: 0, count: 48)
        for cell in 0..<16 where layoutWeights[cell] > 0 {
            layout[cell * 3] = (layoutSums[cell * 3] / layoutWeights[cell] - meanL)
            layout[cell * 3 + 1] = layoutSums[cell * 3 + 1] / layoutWeights[cell]
            layout[cell * 3 + 2] = layoutSums[cell * 3 + 2] / layoutWeights[cell]
        }
        layout = mirrorInvariant(layout)
        let norm = layout.reduce(0) { $0 + $1 * $1 }.squareRoot()
        if norm > 1e-3 {
            for i in 0..<48 { vector[histogramBins + i] = layout[i] / norm * layoutWeight }
        } else {
            // A flat grey image has no layout; give the histogram the whole length.
            for bin in 0..<histogramBins { vector[bin] /= histogramWeight }
        }
        return vector
    }

    /// The 4×4 layout made blind to left and right: each row's cell pairs
    /// (0, 3) and (1, 2) become their mean and half their absolute difference,
    /// both unchanged when the image is mirrored (product photos are often
    /// flipped). Top and bottom stay apart. Same length (48).
    static func mirrorInvariant(_ layout: [Float]) -> [Float] {
        var symmetric = [Float](repeating: 0, count: 48)
        for row in 0..<4 {
            for column in 0..<2 {
                let a = (row * 4 + column) * 3, b = (row * 4 + 3 - column) * 3, out = (row * 2 + column) * 3
                for channel in 0..<3 {
                    symmetric[out + channel] = (layout[a + channel] + layout[b + channel]) / 2
                    symmetric[24 + out + channel] = abs(layout[a + channel] - layout[b + channel]) / 2
                }
            }
        }
        return symmetric
    }

    /// The ≤ ``workingSide`` px copy features are computed from (the image itself when small enough).
    static func workingCopy(of image: PixelBuffer) -> PixelBuffer {
        image.size.maxDimension > workingSide
            ? Resampler.resample(image, to: image.size.fitting(inside: workingSide), filter: .triangle)
            : image
    }

    /// Exposure normalisation: a lookup table scaling values so the 99.5th
    /// percentile of max(R, G, B) becomes 255 (gain at most 4). A darkened
    /// copy — whose white background turned grey — then lands in the same
    /// bins as its original; catalog and query go through the same step.
    static func exposureGain(_ image: PixelBuffer) -> [UInt8] {
        var counts = [Int](repeating: 0, count: 256)
        var total = 0
        image.bytes.withUnsafeBufferPointer { pixels in
            for index in stride(from: 0, to: pixels.count, by: 4) where !image.hasAlpha || pixels[index + 3] >= 128 {
                counts[Int(max(pixels[index], pixels[index + 1], pixels[index + 2]))] += 1
                total += 1
            }
        }
        var level = 255
        var above = 0
        let allowance = total / 200  // 0.5%
        while level > 0 && above + counts[level] <= allowance {
            above += counts[level]
            level -= 1
        }
        let gain = min(4, 255 / Float(max(level, 1)))
        return (0..<256).map { UInt8(min(255, (Float($0) * gain).rounded())) }
    }

    /// Adds one pixel to the soft HSV histogram.
    @inline(__always)
    static func accumulateHSV(_ r: UInt8, _ g: UInt8, _ b: UInt8, weight: Float, into histogram: UnsafeMutablePointer<Float>) {
        let rf = Float(r) / 255, gf = Float(g) / 255, bf = Float(b) / 255
        let maxC = max(rf, gf, bf), minC = min(rf, gf, bf)
        let value = maxC
        let delta = maxC - minC
        let saturation = maxC > 0 ? delta / maxC : 0
        // How much of the pixel has a reliable hue: 0 below s 0.12 or v 0.12, 1 above s 0.3 and v 0.25.
        let chroma = ramp(saturation, 0.12, 0.3) * ramp(value, 0.12, 0.25)

        if chroma < 1 {
            // 16 grey levels by value, linear between neighbours.
            let position = value * 15
            let lower = min(14, Int(position))
            let t = position - Float(lower)
            histogram[48 + lower] += weight * (1 - chroma) * (1 - t)
            histogram[48 + lower + 1] += weight * (1 - chroma) * t
        }
        if chroma > 0 {
            var hue: Float
            if delta == 0 {
                hue = 0
            } else if maxC == rf {
                hue = (gf - bf) / delta
            } else if maxC == gf {
                hue = 2 + (bf - rf) / delta
            } else {
                hue = 4 + (rf - gf) / delta
            }
            hue = hue < 0 ? hue + 6 : hue                 // 0..<6
            let hPosition = hue * 2 - 0.5                   // 12 bins, centres at 0.5, 1.5, ...
            let hLower = hPosition < 0 ? 11 : Int(hPosition)
            let ht = hPosition < 0 ? hPosition + 1 : hPosition - Float(hLower)
            let hUpper = (hLower + 1) % 12
            let sPosition = min(max((saturation - 0.3) / 0.7 * 2 - 0.5, 0), 1)   // two bins over 0.3...1
            let vPosition = min(max((value - 0.25) / 0.75 * 2 - 0.5, 0), 1)       // two bins over 0.25...1
            let w = weight * chroma
            // Trilinear weights over (hue, saturation, value), written out: no temporaries per pixel.
            let s0 = 1 - sPosition, s1 = sPosition, v0 = 1 - vPosition, v1 = vPosition
            let lowerBase = hLower * 4, upperBase = hUpper * 4
            let wl = w * (1 - ht), wu = w * ht
            histogram[lowerBase] += wl * s0 * v0
            histogram[lowerBase + 1] += wl * s0 * v1
            histogram[lowerBase + 2] += wl * s1 * v0
            histogram[lowerBase + 3] += wl * s1 * v1
            histogram[upperBase] += wu * s0 * v0
            histogram[upperBase + 1] += wu * s0 * v1
            histogram[upperBase + 2] += wu * s1 * v0
            histogram[upperBase + 3] += wu * s1 * v1
        }
    }

    @inline(__always)
    static func ramp(_ x: Float, _ low: Float, _ high: Float) -> Float {
        min(max((x - low) / (high - low), 0), 1)
    }
}
