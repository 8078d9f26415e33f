import Foundation
import Testing
@testable import ImageOps

/// Every file of `Tests/Fixtures/badinput/README.tsv` gets the outcome the
/// table expects — a correct decode, or a clear typed error — and the process
/// stays alive throughout.
@Suite("Malformed and unusual inputs (badinput/README.tsv)")
struct BadInputTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var file: String
        var expected: String
        var testDescription: String { file }

        enum Outcome { case decode, reject, either }

        var outcome: Outcome {
            let text = expected.lowercased()
            if text.hasPrefix("decode correctly or reject") || text.contains("supported") { return .either }
            if text.hasPrefix("decode correctly") { return .decode }
            if text.hasPrefix("reject") { return .reject }
            return .either
        }
    }

    static let cases: [Case] = {
        guard let text = try? String(contentsOfFile: Fixtures.badInput + "/README.tsv", encoding: .utf8) else { return [] }
        return text.split(separator: "\n").dropFirst().compactMap { line in
            let columns = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            return columns.count >= 4 ? Case(file: columns[0], expected: columns[3]) : nil
        }
    }()

    @Test("the table lists all 263 files (231 from shared/badinput, 32 WebP/HEIC/AVIF/GIF added for issue 13)")
    func tableIsComplete() {
        #expect(Self.cases.count == 263)
    }

    @Test("each file decodes or is rejected with a typed error, as the table says", arguments: cases)
    func outcome(of testCase: Case) throws {
        let path = Fixtures.badInput + "/" + testCase.file
        let result = Result { () throws(ImageOpsError) in try ImageDecoder.decode(fileAt: path) }
        switch (testCase.outcome, result) {
        case (.decode, .success(let image)), (.either, .success(let image)):
            #expect(image.pixels.bytes.count == image.pixels.width * image.pixels.height * 4)
            #expect(image.pixels.size == image.header.size)
        case (.decode, .failure(let error)):
            Issue.record("expected a decode, got: \(error)")
        case (.reject, .success):
            Issue.record("expected a rejection (\(testCase.expected)), but it decoded")
        case (.reject, .failure(let error)), (.either, .failure(let error)):
            #expect(error.description.contains(path), "the error names the input: \(error)")
        }
    }

    @Test("decompression bombs are rejected by the limits before any pixel memory is allocated",
          arguments: ["bombs/png_100000x100000_header_only.png", "bombs/png_bomb_100000x100000_1bit.png",
                      "bombs/png_bomb_20000x20000_1bit.png", "bombs/jpeg_65500x65500_declared.jpg"])
    func bombs(file: String) {
        let result = Result { () throws(ImageOpsError) in try Fixtures.decode(file) }
        guard case .failure(.limitExceeded) = result else {
            Issue.record("expected limitExceeded, got \(result)")
            return
        }
    }

    @Test("truncated files are reported as truncated, naming the format",
          arguments: ["truncated/trunc_2B.jpg", "truncated/trunc_10B.jpg", "truncated/trunc_25pct.jpg", "truncated/trunc_90pct.jpg",
                      "truncated/trunc_2B.png", "truncated/trunc_100B.png", "truncated/trunc_50pct.png", "truncated/trunc_minus2B.png"])
    func truncated(file: String) {
        let result = Result { () throws(ImageOpsError) in try Fixtures.decode(file) }
        guard case .failure(.truncated) = result else {
            Issue.record("expected truncated, got \(result)")
            return
        }
    }

    @Test("GIF and WebP decode; BMP and TIFF are named as unsupported formats")
    func formats() throws {
        #expect(try Fixtures.decode("wrongformat/gif_image.gif").header.format == .gif)
        #expect(try Fixtures.decode("wrongformat/webp_image.webp").header.format == .webp)
        let bmp: [UInt8] = Array("BM".utf8) + [UInt8](repeating: 0, count: 60)
        #expect(throws: ImageOpsError.unsupportedFormat(source: "x.bmp", format: .bmp)) { try ImageDecoder.decode(bmp, source: "x.bmp") }
        let tiff: [UInt8] = [0x49, 0x49, 0x2A, 0x00] + [UInt8](repeating: 0, count: 60)
        #expect(throws: ImageOpsError.unsupportedFormat(source: "x.tif", format: .tiff)) { try ImageDecoder.decode(tiff, source: "x.tif") }
    }

    @Test("format bombs are refused by the limits before decoding",
          arguments: ["formats/webp_bomb_vp8_16383x16383.webp", "formats/webp_bomb_vp8x_16383x16383.webp",
                      "formats/gif_screen_65535x65535.gif"])
    func formatBombs(file: String) {
        let limits = ImageLimits(maxPixels: 40_000_000)
        let result = Result { () throws(ImageOpsError) in try Fixtures.decode(file, options: DecodingOptions(limits: limits)) }
        guard case .failure(.limitExceeded) = result else {
            Issue.record("expected limitExceeded, got \(result)")
            return
        }
    }

    @Test("lenient decoding returns a truncated JPEG with its warning instead of failing")
    func lenientTruncatedJPEG() throws {
        let image = try Fixtures.decode("truncated/trunc_90pct.jpg", options: DecodingOptions(failurePolicy: .lenient))
        #expect(image.pixels.size == PixelSize(width: 600, height: 400))
        #expect(image.warnings.contains { $0.contains("Premature end") })
    }

    @Test("two decodes of the same damaged file give identical pixels (no uninitialised memory)")
    func deterministic() throws {
        let options = DecodingOptions(failurePolicy: .lenient)
        let first = try Fixtures.decode("truncated/trunc_50pct.jpg", options: options)
        let second = try Fixtures.decode("truncated/trunc_50pct.jpg", options: options)
        #expect(first.pixels == second.pixels)
    }

    @Test("content decides the format, not the extension")
    func sniffing() throws {
        #expect(try Fixtures.decode("wrongformat/png_named.jpg").header.format == .png)
        #expect(try Fixtures.decode("wrongformat/jpeg_named.png").header.format == .jpeg)
    }
}
