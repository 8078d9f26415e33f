import Foundation
import TestSupport
@testable import ImageOps

/// Paths to the fixtures shipped with the tests, and small image factories.
enum Fixtures {
    /// `Tests/Fixtures`.
    static let root: String = {
        let here = URL(fileURLWithPath: #filePath)
        return here.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures").path
    }()

    /// `Tests/Fixtures/badinput` — malformed and unusual images (see its README.tsv).
    static let badInput = root + "/badinput"

    /// The repository's sample catalog images (`corpus/images`).
    static let corpusImages: String = {
        URL(fileURLWithPath: root).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("corpus/images").path
    }()

    static func bytes(_ relativePath: String) throws(ImageOpsError) -> [UInt8] {
        try FileIO.read(badInput + "/" + relativePath)
    }

    static func decode(_ relativePath: String, options: DecodingOptions = DecodingOptions()) throws(ImageOpsError) -> DecodedImage {
        try ImageDecoder.decode(fileAt: badInput + "/" + relativePath, options: options)
    }

    /// An opaque image from a function of (x, y) → (r, g, b).
    static func image(width: Int, height: Int, alpha: Bool = false,
                      _ color: (Int, Int) -> (UInt8, UInt8, UInt8, UInt8)) -> PixelBuffer {
        var bytes = [UInt8](repeating: 0, count: width * height * 4)
        for y in 0..<height {
            for x in 0..<width {
                let c = color(x, y)
                let i = (y * width + x) * 4
                bytes[i] = c.0; bytes[i + 1] = c.1; bytes[i + 2] = c.2; bytes[i + 3] = alpha ? c.3 : 255
            }
        }
        return PixelBuffer(width: width, height: height, hasAlpha: alpha, bytes: bytes)
    }

    /// Four flat quadrants: red (top-left), green (top-right), blue (bottom-left), white (bottom-right).
    static func quadrants(width: Int, height: Int) -> PixelBuffer {
        image(width: width, height: height) { x, y in
            switch (x < width / 2, y < height / 2) {
            case (true, true): (255, 0, 0, 255)
            case (false, true): (0, 255, 0, 255)
            case (true, false): (0, 0, 255, 255)
            case (false, false): (255, 255, 255, 255)
            }
        }
    }

    /// Mean absolute difference per channel (RGB only) between two same-sized buffers.
    static func meanAbsoluteDifference(_ a: PixelBuffer, _ b: PixelBuffer) -> Double {
        precondition(a.size == b.size)
        var total = 0
        for i in stride(from: 0, to: a.bytes.count, by: 4) {
            for c in 0..<3 { total += abs(Int(a.bytes[i + c]) - Int(b.bytes[i + c])) }
        }
        return Double(total) / Double(a.width * a.height * 3)
    }

    /// A temporary directory (removed with the test process's folder).
    static func temporaryDirectory() -> String { Repository.temporaryDirectory("imageops") }

    /// Inserts an EXIF APP1 segment with an Orientation tag right after the SOI marker.
    static func withOrientation(_ jpeg: [UInt8], _ orientation: Int) -> [UInt8] {
        // TIFF (big-endian) with IFD0 holding one entry: 0x0112 SHORT 1 = orientation.
        let tiff: [UInt8] = [0x4D, 0x4D, 0x00, 0x2A, 0x00, 0x00, 0x00, 0x08,
                             0x00, 0x01,
                             0x01, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00, 0x01, 0x00, UInt8(orientation), 0x00, 0x00,
                             0x00, 0x00, 0x00, 0x00]
        let payload: [UInt8] = Array("Exif".utf8) + [0, 0] + tiff
        let length = payload.count + 2
        let segment: [UInt8] = [0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xFF)] + payload
        return Array(jpeg[0..<2]) + segment + Array(jpeg[2...])
    }
}
