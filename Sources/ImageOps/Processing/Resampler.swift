/// Separable, fixed-point image resampling — the hot loop of thumbnails,
/// upload preparation and indexing.
///
/// - Two passes: horizontal into an intermediate of `outWidth × inHeight`,
///   then vertical. A pass whose size does not change is skipped.
/// - Weights are precomputed once per axis (start, count and
///   22-bit fixed-point taps per output pixel, normalised to sum to exactly
///   1.0), so the inner loops are integer multiply-adds on whole pixels
///   (`SIMD4<Int32>` horizontally, `SIMD16<Int32>` across 16 bytes vertically).
/// - The filter support widens with the reduction factor, so every source
///   pixel contributes to a strong reduction.
/// - Images with alpha are premultiplied while filtering and un-premultiplied
///   after, so transparent pixels' colours do not bleed into edges.
///
/// ```swift
/// let small = Resampler.resample(image, to: PixelSize(width: 400, height: 300))
/// ```
public enum Resampler {
    /// Fixed-point precision of the weights.
    static let precisionBits: Int32 = 22

    /// Per-axis weight table.
    struct Weights {
        /// First source index for each output index.
        var starts: [Int32]
        /// Number of taps for each output index.
        var counts: [Int32]
        /// `taps` fixed-point weights per output index (unused tail is 0).
        var values: [Int32]
        /// Stride of ``values``.
        var taps: Int

        init(inSize: Int, outSize: Int, filter: ResamplingFilter) {
            let scale = Double(inSize) / Double(outSize)
            let filterScale = Swift.max(scale, 1)
            let support = filter.support * filterScale
            let taps = Swift.max(1, Int((support * 2).rounded(.up)) + 2)
            var starts = [Int32](repeating: 0, count: outSize)
            var counts = [Int32](repeating: 0, count: outSize)
            var values = [Int32](repeating: 0, count: outSize * taps)
            var floats = [Double](repeating: 0, count: taps)
            let one = Double(1 << Resampler.precisionBits)
            for index in 0..<outSize {
                let center = (Double(index) + 0.5) * scale
                var first = Int((center - support).rounded(.down))
                var last = Int((center + support).rounded(.up))
                first = Swift.max(first, 0)
                last = Swift.min(last, inSize)
                if last - first > taps { last = first + taps }
                var total = 0.0
                for tap in 0..<(last - first) {
                    let weight = filter.weight((Double(first + tap) + 0.5 - center) / filterScale)
                    floats[tap] = weight
                    total += weight
                }
                // Drop zero-weight taps at both ends so loops do no useless work.
                var lower = 0, upper = last - first
                while upper - lower > 1 && floats[lower] == 0 { lower += 1 }
                while upper - lower > 1 && floats[upper - 1] == 0 { upper -= 1 }
                if total == 0 { total = 1; floats[lower] = 1 }
                // Round to fixed point and put the rounding error on the largest tap: the sum is exactly `one`.
                var sum: Int32 = 0
                var largest = lower
                for tap in lower..<upper {
                    let fixed = Int32((floats[tap] / total * one).rounded())
                    values[index * taps + tap - lower] = fixed
                    sum += fixed
                    if floats[tap] > floats[largest] { largest = tap }
                }
                values[index * taps + largest - lower] += Int32(one) - sum
                starts[index] = Int32(first + lower)
                counts[index] = Int32(upper - lower)
            }
            self.starts = starts
            self.counts = counts
            self.values = values
            self.taps = taps
        }
    }

    /// Resamples to exactly `size` (aspect is the caller's business).
    /// Returns the input unchanged when the size already matches.
    ///
    /// The input is `consuming`: a caller that passes its last reference
    /// (`resample(consume image, …)`) lets an image with alpha be
    /// premultiplied in place instead of copied — a 20-MP RGBA source then
    /// costs one full-size buffer, not two.
    public static func resample(_ image: consuming PixelBuffer, to size: PixelSize,
                                filter: ResamplingFilter = .lanczos3) -> PixelBuffer {
        precondition(size.width > 0 && size.height > 0, "resample target must be at least 1×1")
        if size == image.size { return image }
        let hasAlpha = image.hasAlpha
        var working = hasAlpha ? premultiplied(image) : image
        if size.width != working.width {
            working = horizontalPass(working, width: size.width, weights: Weights(inSize: working.width, outSize: size.width, filter: filter))
        }
        if size.height != working.height {
            working = verticalPass(working, height: size.height, weights: Weights(inSize: working.height, outSize: size.height, filter: filter))
        }
        return hasAlpha ? unpremultiplied(working) : working
    }

    @inline(__always)
    static func store(_ accumulator: SIMD4<Int32>, to pointer: UnsafeMutableRawPointer) {
        let shifted = accumulator &>> precisionBits
        let clamped = shifted.clamped(lowerBound: SIMD4(repeating: 0), upperBound: SIMD4(repeating: 255))
        pointer.storeBytes(of: SIMD4<UInt8>(truncatingIfNeeded: clamped), as: SIMD4<UInt8>.self)
    }

    static func horizontalPass(_ image: PixelBuffer, width: Int, weights: Weights) -> PixelBuffer {
        let height = image.height, inRow = image.bytesPerRow, outRow = width * 4
        let half = SIMD4<Int32>(repeating: 1 << (precisionBits - 1))
        return PixelBuffer(width: width, height: height, hasAlpha: image.hasAlpha) { dst in
            image.bytes.withUnsafeBytes { src in
                weights.values.withUnsafeBufferPointer { values in
                    weights.starts.withUnsafeBufferPointer { starts in
                        weights.counts.withUnsafeBufferPointer { counts in
                            guard let srcBase = src.baseAddress, let dstBase = dst.baseAddress,
                                  let weightBase = values.baseAddress else { return }
                            let out = UnsafeMutableRawPointer(dstBase)
                            for y in 0..<height {
                                let row = srcBase + y * inRow
                                let target = out + y * outRow
                                for x in 0..<width {
                                    var accumulator = half
                                    var pixel = row + Int(starts[x]) * 4
                                    let taps = weightBase + x * weights.taps
                                    for tap in 0..<Int(counts[x]) {
                                        let value = SIMD4<Int32>(truncatingIfNeeded: pixel.loadUnaligned(as: SIMD4<UInt8>.self))
                                        accumulator &+= value &* taps[tap]
                                        pixel += 4
                                    }
                                    store(accumulator, to: target + x * 4)
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    static func verticalPass(_ image: PixelBuffer, height: Int, weights: Weights) -> PixelBuffer {
        let width = image.width, rowBytes = image.bytesPerRow
        let halfValue: Int32 = 1 << (precisionBits - 1)
        return PixelBuffer(width: width, height: height, hasAlpha: image.hasAlpha) { dst in
            image.bytes.withUnsafeBytes { src in
                weights.values.withUnsafeBufferPointer { values in
                    guard let srcBase = src.baseAddress, let dstBase = dst.baseAddress,
                          let weightBase = values.baseAddress else { return }
                    let out = UnsafeMutableRawPointer(dstBase)
                    for y in 0..<height {
                        let first = srcBase + Int(weights.starts[y]) * rowBytes
                        let count = Int(weights.counts[y])
                        let taps = weightBase + y * weights.taps
                        let target = out + y * rowBytes
                        var offset = 0
                        while offset + 16 <= rowBytes {
                            var accumulator = SIMD16<Int32>(repeating: halfValue)
                            var pointer = first + offset
                            for tap in 0..<count {
                                let value = SIMD16<Int32>(truncatingIfNeeded: pointer.loadUnaligned(as: SIMD16<UInt8>.self))
                                accumulator &+= value &* taps[tap]
                                pointer += rowBytes
                            }
                            let shifted = accumulator &>> precisionBits
                            let clamped = shifted.clamped(lowerBound: SIMD16(repeating: 0), upperBound: SIMD16(repeating: 255))
                            (target + offset).storeBytes(of: SIMD16<UInt8>(truncatingIfNeeded: clamped), as: SIMD16<UInt8>.self)
                            offset += 16
                        }
                        while offset < rowBytes {
                            var accumulator = SIMD4<Int32>(repeating: halfValue)
                            var pointer = first + offset
                            for tap in 0..<count {
                                accumulator &+= SIMD4<Int32>(truncatingIfNeeded: pointer.loadUnaligned(as: SIMD4<UInt8>.self)) &* taps[tap]
                                pointer += rowBytes
                            }
                            store(accumulator, to: target + offset)
                            offset += 4
                        }
                    }
                }
            }
        }
    }

    /// Colour channels multiplied by alpha/255 (rounded).
    static func premultiplied(_ image: consuming PixelBuffer) -> PixelBuffer {
        var copy = consume image
        copy.bytes.withUnsafeMutableBufferPointer { pixels in
            for index in stride(from: 0, to: pixels.count, by: 4) {
                let alpha = UInt32(pixels[index + 3])
                if alpha == 255 { continue }
                pixels[index] = UInt8((UInt32(pixels[index]) * alpha + 127) / 255)
                pixels[index + 1] = UInt8((UInt32(pixels[index + 1]) * alpha + 127) / 255)
                pixels[index + 2] = UInt8((UInt32(pixels[index + 2]) * alpha + 127) / 255)
            }
        }
        return copy
    }

    /// The inverse of ``premultiplied(_:)``; fully transparent pixels become transparent black.
    static func unpremultiplied(_ image: consuming PixelBuffer) -> PixelBuffer {
        var copy = consume image
        copy.bytes.withUnsafeMutableBufferPointer { pixels in
            for index in stride(from: 0, to: pixels.count, by: 4) {
                let alpha = UInt32(pixels[index + 3])
                if alpha == 255 { continue }
                if alpha == 0 {
                    pixels[index] = 0; pixels[index + 1] = 0; pixels[index + 2] = 0
                    continue
                }
                pixels[index] = UInt8(Swift.min(255, (UInt32(pixels[index]) * 255 + alpha / 2) / alpha))
                pixels[index + 1] = UInt8(Swift.min(255, (UInt32(pixels[index + 1]) * 255 + alpha / 2) / alpha))
                pixels[index + 2] = UInt8(Swift.min(255, (UInt32(pixels[index + 2]) * 255 + alpha / 2) / alpha))
            }
        }
        return copy
    }
}
