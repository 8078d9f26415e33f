import ConcurrencyToolkit

/// Separable, fixed-point image resampling — the hot loop of thumbnails,
/// upload preparation and indexing.
///
/// - Two passes, in whichever order costs less (vertical first on
///   reductions, so the slower horizontal pass only sees output rows). A
///   pass whose size does not change is skipped.
/// - Weights are precomputed once per axis (start, count and
///   14-bit fixed-point taps (`Int16`) per output pixel, normalised to sum to exactly
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
    /// Fixed-point precision of the weights: 14 bits, so every weight fits in
    /// an `Int16`. Pixel × weight products then have both factors within 16
    /// bits, which lets LLVM use SSE2's `pmaddwd` for the 32-bit multiplies
    /// (baseline x86-64 has no `pmulld`; emulating it cost 2× the whole pass).
    static let precisionBits: Int32 = 14

    /// Per-axis weight table.
    struct Weights {
        /// First source index for each output index.
        var starts: [Int32]
        /// Number of taps for each output index.
        var counts: [Int32]
        /// `taps` fixed-point weights per output index (unused tail is 0).
        var values: [Int16]
        /// Stride of ``values``.
        var taps: Int

        init(inSize: Int, outSize: Int, filter: ResamplingFilter) {
            let scale = Double(inSize) / Double(outSize)
            let filterScale = Swift.max(scale, 1)
            let support = filter.support * filterScale
            let taps = Swift.max(1, Int((support * 2).rounded(.up)) + 2)
            var starts = [Int32](repeating: 0, count: outSize)
            var counts = [Int32](repeating: 0, count: outSize)
            var values = [Int16](repeating: 0, count: outSize * taps)
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
                var sum = 0
                var largest = lower
                for tap in lower..<upper {
                    let fixed = Int((floats[tap] / total * one).rounded())
                    values[index * taps + tap - lower] = Int16(clamping: fixed)
                    sum += Int(Int16(clamping: fixed))
                    if floats[tap] > floats[largest] { largest = tap }
                }
                values[index * taps + largest - lower] = Int16(clamping: Int(values[index * taps + largest - lower]) + Int(one) - sum)
                starts[index] = Int32(first + lower)
                counts[index] = Int32(upper - lower)
            }
            self.starts = starts
            self.counts = counts
            self.values = values
            self.taps = taps
        }
    }

    struct WeightsKey: Hashable {
        var inSize: Int
        var outSize: Int
        var filter: ResamplingFilter
    }

    /// At most this many weight tables are kept; the cache is emptied when
    /// full. A catalog's pictures come in a handful of sizes, so most images
    /// reuse the tables of an earlier one (a Lanczos-3 table costs two `sin`
    /// per tap: a tenth of a millisecond per 1-MP picture indexed).
    static let weightsCapacity = 32
    private static let weightsCache = Locked<[WeightsKey: Weights]>([:])

    /// The weight table for one axis, made on first use.
    static func weights(inSize: Int, outSize: Int, filter: ResamplingFilter) -> Weights {
        let key = WeightsKey(inSize: inSize, outSize: outSize, filter: filter)
        if let cached = weightsCache.withLock({ $0[key] }) { return cached }
        let weights = Weights(inSize: inSize, outSize: outSize, filter: filter)
        weightsCache.withLock { tables in
            if tables.count >= weightsCapacity { tables.removeAll(keepingCapacity: true) }
            tables[key] = weights
        }
        return weights
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
        let inSize = working.size
        let horizontal = size.width != inSize.width ? weights(inSize: inSize.width, outSize: size.width, filter: filter) : nil
        let vertical = size.height != inSize.height ? weights(inSize: inSize.height, outSize: size.height, filter: filter) : nil
        if let horizontal, let vertical, verticalFirstIsCheaper(from: inSize, to: size, horizontal: horizontal, vertical: vertical) {
            working = verticalPass(working, height: size.height, weights: vertical)
            working = horizontalPass(working, width: size.width, weights: horizontal)
        } else {
            if let horizontal { working = horizontalPass(working, width: size.width, weights: horizontal) }
            if let vertical { working = verticalPass(working, height: size.height, weights: vertical) }
        }
        return hasAlpha ? unpremultiplied(working) : working
    }

    /// Whether doing the vertical pass first costs less. A horizontal tap
    /// handles one pixel per `SIMD4` operation, a vertical tap 16 bytes (four
    /// pixels) per `SIMD16` operation, so on reductions the vertical-first
    /// order — which leaves the horizontal pass only the output rows — wins.
    static func verticalFirstIsCheaper(from input: PixelSize, to output: PixelSize,
                                       horizontal: Weights, vertical: Weights) -> Bool {
        let horizontalTap = 4.0, verticalTap = 1.0  // relative cost per pixel-tap
        let tapsX = Double(horizontal.taps), tapsY = Double(vertical.taps)
        let horizontalFirst = Double(input.height * output.width) * tapsX * horizontalTap
            + Double(output.height * output.width) * tapsY * verticalTap
        let verticalFirst = Double(output.height * input.width) * tapsY * verticalTap
            + Double(output.height * output.width) * tapsX * horizontalTap
        return verticalFirst < horizontalFirst
    }

    /// Fixed-point accumulators to bytes: shift, then clamp to 0...255 with
    /// lane-wise bit operations (the generic `clamped` is not inlined and
    /// runs lane by lane).
    @inline(__always)
    static func bytes<V: SIMD>(_ accumulator: V) -> V where V.Scalar == Int32 {
        var value = accumulator &>> precisionBits
        value &= ~(value &>> 31)                                 // negative -> 0
        value |= (V(repeating: 255) &- value) &>> 31              // above 255 -> all ones (255 as a byte)
        return value
    }

    @inline(__always)
    static func store(_ accumulator: SIMD4<Int32>, to pointer: UnsafeMutableRawPointer) {
        pointer.storeBytes(of: SIMD4<UInt8>(truncatingIfNeeded: bytes(accumulator)), as: SIMD4<UInt8>.self)
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
                                        accumulator &+= value &* SIMD4<Int32>(repeating: Int32(truncatingIfNeeded: taps[tap]))
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
                        while offset + 32 <= rowBytes {
                            // Two 16-byte accumulators per step (SIMD32 is not lowered well).
                            var low = SIMD16<Int32>(repeating: halfValue), high = low
                            var pointer = first + offset
                            for tap in 0..<count {
                                let weight = SIMD16<Int32>(repeating: Int32(truncatingIfNeeded: taps[tap]))
                                low &+= SIMD16<Int32>(truncatingIfNeeded: pointer.loadUnaligned(as: SIMD16<UInt8>.self)) &* weight
                                high &+= SIMD16<Int32>(truncatingIfNeeded: pointer.loadUnaligned(fromByteOffset: 16, as: SIMD16<UInt8>.self)) &* weight
                                pointer += rowBytes
                            }
                            (target + offset).storeBytes(of: SIMD16<UInt8>(truncatingIfNeeded: bytes(low)), as: SIMD16<UInt8>.self)
                            (target + offset + 16).storeBytes(of: SIMD16<UInt8>(truncatingIfNeeded: bytes(high)), as: SIMD16<UInt8>.self)
                            offset += 32
                        }
                        while offset + 16 <= rowBytes {
                            var accumulator = SIMD16<Int32>(repeating: halfValue)
                            var pointer = first + offset
                            for tap in 0..<count {
                                let value = SIMD16<Int32>(truncatingIfNeeded: pointer.loadUnaligned(as: SIMD16<UInt8>.self))
                                accumulator &+= value &* SIMD16<Int32>(repeating: Int32(truncatingIfNeeded: taps[tap]))
                                pointer += rowBytes
                            }
                            (target + offset).storeBytes(of: SIMD16<UInt8>(truncatingIfNeeded: bytes(accumulator)), as: SIMD16<UInt8>.self)
                            offset += 16
                        }
                        while offset < rowBytes {
                            var accumulator = SIMD4<Int32>(repeating: halfValue)
                            var pointer = first + offset
                            for tap in 0..<count {
                                accumulator &+= SIMD4<Int32>(truncatingIfNeeded: pointer.loadUnaligned(as: SIMD4<UInt8>.self))
                                    &* SIMD4<Int32>(repeating: Int32(truncatingIfNeeded: taps[tap]))
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
