import Foundation
import TestSupport
import Testing
@testable import ImageOps

/// Issue 37: a 92-byte animated WebP with a 5600×5600 canvas cost 360 MB a
/// decode (libwebp's animation decoder kept two canvases beside the copy
/// returned) while the pixel budget charged it as a still shrunk on load,
/// 1/64 of its canvas. Animations now say in their header what decoding
/// them holds (the canvas and the first frame's buffer), are charged that,
/// unshrunk, and are refused before anything is allocated when it exceeds
/// the pixel limit — with a typed error naming the canvas and the frames.
@Suite("Animations: charged and limited by what decoding them holds")
struct AnimationLimitTests {
    static let limit = ImageLimits(maxPixels: 32_000_000, maxSide: 32_767, maxInputBytes: 32 << 20)

    @Test("the bitstream builder makes lossless WebPs that decode to their colour")
    func builder() throws {
        let decoded = try ImageDecoder.decode(AnimationBombs.stillWebP(width: 37, height: 11, color: (10, 20, 30, 255)), source: "still.webp")
        #expect(decoded.pixels == PixelBuffer(width: 37, height: 11, hasAlpha: false, fill: (10, 20, 30, 255)))
    }

    @Test("the first frame lies on a transparent canvas at its offset, as libwebp's animation decoder composes it")
    func firstFrameOnCanvas() throws {
        let bytes = AnimationBombs.webp(canvas: (8, 8), frames: [(x: 2, y: 4, width: 3, height: 2), (x: 0, y: 0, width: 8, height: 8)],
                                        color: (90, 160, 220, 128))
        let decoded = try ImageDecoder.decode(bytes, source: "small.webp")
        #expect(decoded.pixels.size == PixelSize(width: 8, height: 8) && decoded.pixels.hasAlpha)
        for y in 0..<8 {
            for x in 0..<8 {
                let inside = (2..<5).contains(x) && (4..<6).contains(y)
                let pixel = decoded.pixels.pixel(x: x, y: y)
                #expect(inside ? pixel == (90, 160, 220, 128) : pixel == (0, 0, 0, 0), "pixel \(x),\(y): \(pixel)")
            }
        }
        let header = try ImageDecoder.readHeader(bytes, source: "small.webp")
        #expect(header.animation == ImageHeader.Animation(frames: 2, firstFrame: PixelRect(x: 2, y: 4, width: 3, height: 2),
                                                          canvas: PixelSize(width: 8, height: 8)))
        #expect(header.animation?.pixelsHeld == 64 + 6)
    }

    @Test("a 5600×5600 canvas is charged its canvas and first frame, unshrunk (the budget charged 1/64 of the canvas)")
    func chargedWhole() throws {
        let bytes = AnimationBombs.webp(canvas: (5600, 5600), frames: [(x: 0, y: 0, width: 1, height: 1), (x: 0, y: 0, width: 1, height: 1)])
        #expect(bytes.count < 150, "\(bytes.count) bytes")
        let header = try ImageDecoder.readHeader(bytes, source: "tiny.webp", limits: Self.limit)
        #expect(header.storedSize == PixelSize(width: 5600, height: 5600))
        #expect(header.animation?.frames == 2 && header.animation?.pixelsHeld == 5600 * 5600 + 1)
        let charged = ShrinkOnLoad.decodedPixelCount(of: header, minimumSize: PixelSize(width: 128, height: 128))
        #expect(charged == 5600 * 5600 + 1, "charged \(charged) pixels")
    }

    @Test("canvas and frame together beyond the pixel limit: refused before decoding, the error naming canvas, frames and pixels held")
    func refusedBeforeDecoding() throws {
        let bytes = AnimationBombs.webp(canvas: (5600, 5600), frames: [(x: 0, y: 0, width: 5600, height: 5600), (x: 0, y: 0, width: 2, height: 2)])
        #expect(bytes.count < 150, "\(bytes.count) bytes")
        let expected = ImageOpsError.limitExceeded(source: "bomb.webp", limit: .animation(width: 5600, height: 5600, frames: 2,
                                                                                          pixelsHeld: 2 * 5600 * 5600, maximum: 32_000_000))
        #expect(throws: expected) { _ = try ImageDecoder.decode(bytes, source: "bomb.webp", options: DecodingOptions(limits: Self.limit)) }
        #expect(throws: expected) { _ = try ImageDecoder.readHeader(bytes, source: "bomb.webp", limits: Self.limit) }
        #expect(expected.description.contains("2 frames on a 5600×5600 canvas holds 62720000 pixels"), "\(expected.description)")
        #expect(expected.description.contains("limit of 32000000 pixels"))
    }

    @Test("a canvas beyond the limit on its own is refused by the pixel limit: a 13000×13000 WebP canvas, a 13000×13000 GIF screen")
    func hugeCanvases() throws {
        let webp = AnimationBombs.webp(canvas: (13_000, 13_000), frames: [(x: 0, y: 0, width: 1, height: 1), (x: 2, y: 2, width: 1, height: 1)])
        let gif = AnimationBombs.gif(screen: (13_000, 13_000))
        #expect(webp.count < 150 && gif.count < 40, "\(webp.count), \(gif.count) bytes")
        for (bytes, name) in [(webp, "canvas.webp"), (gif, "screen.gif")] {
            let expected = ImageOpsError.limitExceeded(source: name, limit: .pixels(width: 13_000, height: 13_000, maximum: 32_000_000))
            #expect(throws: expected) { _ = try ImageDecoder.decode(bytes, source: name, options: DecodingOptions(limits: Self.limit)) }
            #expect(throws: expected) { _ = try ImageDecoder.readHeader(bytes, source: name, limits: Self.limit) }
        }
    }

    @Test("a GIF's small logical screen decodes: the builder's GIF is valid")
    func gifBuilder() throws {
        let decoded = try ImageDecoder.decode(AnimationBombs.gif(screen: (3, 2)), source: "small.gif")
        #expect(decoded.pixels.size == PixelSize(width: 3, height: 2))
        #expect(decoded.pixels.pixel(x: 0, y: 0) == (200, 40, 30, 255) && decoded.pixels.pixel(x: 2, y: 1) == (0, 0, 0, 0))
    }
}
