import Foundation
import Testing
@testable import ImageOps

@Suite("Resampling")
struct ResamplerTests {
    /// The exact area average of each output cell for an integer reduction.
    static func areaAverage(_ image: PixelBuffer, factor: Int) -> PixelBuffer {
        let width = image.width / factor, height = image.height / factor
        return Fixtures.image(width: width, height: height) { x, y in
            var sums = [0, 0, 0]
            for dy in 0..<factor {
                for dx in 0..<factor {
                    let p = image.pixel(x: x * factor + dx, y: y * factor + dy)
                    sums[0] += Int(p.r); sums[1] += Int(p.g); sums[2] += Int(p.b)
                }
            }
            let n = factor * factor
            return (UInt8((sums[0] + n / 2) / n), UInt8((sums[1] + n / 2) / n), UInt8((sums[2] + n / 2) / n), 255)
        }
    }

    /// A smooth picture with detail at several scales (no aliasing-prone frequencies).
    static let smooth = Fixtures.image(width: 240, height: 160) { x, y in
        let fx = Double(x) / 240, fy = Double(y) / 160
        let r = 127.5 + 120 * sin(fx * 6.28 * 1.5) * cos(fy * 6.28)
        let g = 255 * fx * fy
        let b = 127.5 + 120 * cos((fx + fy) * 6.28 * 2)
        return (UInt8(r), UInt8(g), UInt8(b), 255)
    }

    @Test("strong reductions match an exact area average computed independently", arguments: [2, 4, 8])
    func accuracy(factor: Int) {
        let reference = Self.areaAverage(Self.smooth, factor: factor)
        for filter in [ResamplingFilter.lanczos3, .catmullRom, .triangle] {
            let out = Resampler.resample(Self.smooth, to: reference.size, filter: filter)
            #expect(Fixtures.meanAbsoluteDifference(out, reference) < 1.5, "\(filter) at 1/\(factor)")
        }
        let box = Resampler.resample(Self.smooth, to: reference.size, filter: .box)
        #expect(Fixtures.meanAbsoluteDifference(box, reference) < 0.6, "box at 1/\(factor) is an area average")
    }

    @Test("a flat colour stays exactly flat at any size (weights sum to one)")
    func flat() {
        let flat = PixelBuffer(width: 123, height: 77, hasAlpha: false, fill: (37, 200, 91, 255))
        for size in [PixelSize(width: 40, height: 25), PixelSize(width: 1, height: 1), PixelSize(width: 200, height: 150)] {
            let out = Resampler.resample(flat, to: size)
            #expect(out == PixelBuffer(width: size.width, height: size.height, hasAlpha: false, fill: (37, 200, 91, 255)))
        }
    }

    @Test("a 1×20000 gradient shrinks to its averages: every source pixel counts")
    func longStrip() {
        let strip = Fixtures.image(width: 1, height: 20000) { _, y in (UInt8(y * 255 / 19999), 0, 0, 255) }
        let out = Resampler.resample(strip, to: PixelSize(width: 1, height: 100))
        for y in [0, 25, 50, 99] {
            let expected = (Double(y) + 0.5) / 100 * 255
            #expect(abs(Double(out.pixel(x: 0, y: y).r) - expected) < 2.5)
        }
    }

    @Test("transparent pixels do not bleed their colour into opaque ones")
    func premultipliedAlpha() {
        let image = Fixtures.image(width: 64, height: 64, alpha: true) { x, _ in
            x < 32 ? (255, 0, 0, 255) : (0, 255, 0, 0)
        }
        let out = Resampler.resample(image, to: PixelSize(width: 16, height: 16))
        #expect(out.hasAlpha)
        for x in 0..<16 {
            let p = out.pixel(x: x, y: 8)
            if p.a > 0 { #expect(p.g == 0 && p.r > 240, "pixel \(x) = \(p)") }
        }
    }

    @Test("enlarging is supported and keeps flat areas flat")
    func enlarge() {
        let out = Resampler.resample(Fixtures.quadrants(width: 8, height: 8), to: PixelSize(width: 32, height: 32))
        #expect(out.pixel(x: 2, y: 2) == (255, 0, 0, 255))
        #expect(out.pixel(x: 29, y: 29) == (255, 255, 255, 255))
    }
}

@Suite("Crop")
struct CropTests {
    let image = Fixtures.quadrants(width: 10, height: 6)

    @Test("crops exactly the rectangle, up to the edges")
    func edges() throws {
        let corner = try ImageProcessors.Crop(PixelRect(x: 5, y: 3, width: 5, height: 3)).process(image)
        #expect(corner.size == PixelSize(width: 5, height: 3))
        #expect(corner.pixel(x: 0, y: 0) == (255, 255, 255, 255))
        #expect(corner.pixel(x: 4, y: 2) == (255, 255, 255, 255))
        let whole = try ImageProcessors.Crop(PixelRect(x: 0, y: 0, width: 10, height: 6)).process(image)
        #expect(whole == image)
        let pixel = try ImageProcessors.Crop(PixelRect(x: 9, y: 0, width: 1, height: 1)).process(image)
        #expect(pixel.pixel(x: 0, y: 0) == (0, 255, 0, 255))
    }

    @Test("a rectangle outside the image is an error, not a crash")
    func outside() {
        #expect(throws: ImageOpsError.self) { try ImageProcessors.Crop(PixelRect(x: 8, y: 0, width: 5, height: 1)).process(image) }
        #expect(throws: ImageOpsError.self) { try ImageProcessors.Crop(PixelRect(x: 0, y: 0, width: 0, height: 1)).process(image) }
    }

    @Test("a user box goes through PixelBox.region: clamped, then cropped")
    func boxThenCrop() throws {
        let rect = try PixelBox(x1: 5, y1: -4, x2: 50, y2: 3).region(in: image.size)
        let out = try ImageProcessors.Crop(rect).process(image)
        #expect(out.size == PixelSize(width: 5, height: 3))
        #expect(out.pixel(x: 0, y: 0) == (0, 255, 0, 255))
    }
}
