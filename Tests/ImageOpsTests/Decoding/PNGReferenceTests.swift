import CLibPNGReference
import CPNGCodec
import Foundation
import Testing
@testable import ImageOps

/// The PNG codec (CPNGCodec, on libdeflate) held to libpng: every PNG the
/// repository holds decodes to the same bytes, or fails where libpng fails;
/// and what the encoder writes, libpng reads back unchanged.
@Suite("PNG codec against libpng")
struct PNGReferenceTests {
    /// Every `.png` under Tests/Fixtures and docs/ (PngSuite, the bad-input
    /// table's files, the colour fixtures, screenshots), relative to the repository.
    static let files: [String] = {
        let repository = URL(fileURLWithPath: Fixtures.root).deletingLastPathComponent().deletingLastPathComponent()
        var found: [String] = []
        for folder in ["Tests/Fixtures", "docs", "corpus"] {
            let base = repository.appendingPathComponent(folder).path
            guard let walker = FileManager.default.enumerator(atPath: base) else { continue }
            while let path = walker.nextObject() as? String {
                if path.lowercased().hasSuffix(".png") { found.append(folder + "/" + path) }
            }
        }
        return found.sorted()
    }()

    static let repository = URL(fileURLWithPath: Fixtures.root).deletingLastPathComponent().deletingLastPathComponent().path

    enum Outcome: Equatable {
        case pixels([UInt8], damagedAfterData: Bool)
        case failed(String)

        var failed: Bool { if case .failed = self { true } else { false } }
    }

    static func ours(_ bytes: [UInt8], sixteenBit: Bool, gatherLimit: Int = 0) -> Outcome {
        var message = [CChar](repeating: 0, count: 256)
        var warning = [CChar](repeating: 0, count: 256)
        var header = vspng_header()
        guard vspng_read_header(bytes, bytes.count, &header, &message, message.count) == VSPNG_OK else {
            return .failed(String(cString: message))
        }
        guard UInt64(header.width) * UInt64(header.height) <= 40_000_000 else { return .failed("too large for the test") }
        let pixelBytes = sixteenBit ? 8 : 4
        let stride = Int(header.width) * pixelBytes
        var out = [UInt8](repeating: 0, count: vspng_decode_capacity(&header, stride))
        var warnings: Int32 = 0
        let status = vspng_decode(bytes, bytes.count, &out, out.count, stride, &header, sixteenBit ? 1 : 0, gatherLimit,
                                  &warnings, &warning, warning.count, &message, message.count)
        guard status >= 0 else { return .failed(String(cString: message)) }
        return .pixels(Array(out.prefix(stride * Int(header.height))), damagedAfterData: status == VSPNG_DAMAGED_AFTER_DATA)
    }

    static func libpng(_ bytes: [UInt8], sixteenBit: Bool) -> Outcome {
        var message = [CChar](repeating: 0, count: 256)
        var warning = [CChar](repeating: 0, count: 256)
        var info = vs_png_info()
        guard vs_png_read_info(bytes, bytes.count, &info, &message, message.count) == 0 else {
            return .failed(String(cString: message))
        }
        guard UInt64(info.width) * UInt64(info.height) <= 40_000_000 else { return .failed("too large for the test") }
        let stride = Int(info.width) * (sixteenBit ? 8 : 4)
        var out = [UInt8](repeating: 0, count: stride * Int(info.height))
        var warnings: Int32 = 0
        let status = vs_png_decode(bytes, bytes.count, &out, stride, info.width, info.height, sixteenBit ? 1 : 0,
                                   &warnings, &warning, warning.count, &message, message.count)
        guard status != VS_PNG_FAILED else { return .failed(String(cString: message)) }
        return .pixels(out, damagedAfterData: status == VS_PNG_DAMAGED_AFTER_DATA)
    }

    @Test("the repository holds the PNGs this suite is about (236: PngSuite, bad input, colour fixtures, screenshots)")
    func corpusIsThere() {
        #expect(Self.files.count >= 236, "found \(Self.files.count)")
    }

    @Test("every PNG decodes to libpng's bytes, 8-bit and 16-bit rows, or fails where libpng fails", arguments: files)
    func matchesLibpng(file: String) throws {
        let bytes = try FileIO.read(Self.repository + "/" + file)
        for sixteenBit in [false, true] {
            let ours = Self.ours(bytes, sixteenBit: sixteenBit)
            let reference = Self.libpng(bytes, sixteenBit: sixteenBit)
            switch (ours, reference) {
            case (.pixels(let a, let damagedA), .pixels(let b, let damagedB)):
                #expect(a == b, "\(file) (\(sixteenBit ? 16 : 8)-bit rows): \(zip(a, b).filter { $0 != $1 }.count) bytes differ")
                #expect(damagedA == damagedB, "\(file): damaged after the data — ours \(damagedA), libpng \(damagedB)")
            case (.failed, .failed):
                break
            case (.failed(let reason), .pixels):
                Issue.record("\(file): libpng decodes it, ours fails: \(reason)")
            case (.pixels, .failed(let reason)):
                Issue.record("\(file): libpng fails (\(reason)), ours decodes it")
            }
        }
    }

    @Test("image data streamed chunk by chunk (past the gather limit) decodes as gathered does, for every PNG", arguments: files)
    func streamingMatchesGathering(file: String) throws {
        let bytes = try FileIO.read(Self.repository + "/" + file)
        let gathered = Self.ours(bytes, sixteenBit: false)
        let streamed = Self.ours(bytes, sixteenBit: false, gatherLimit: 1)
        switch (gathered, streamed) {
        case (.pixels(let a, let damagedA), .pixels(let b, let damagedB)):
            #expect(a == b && damagedA == damagedB, "\(file)")
        case (.failed, .failed):
            break
        default:
            Issue.record("\(file): gathered \(gathered.failed ? "fails" : "decodes"), streamed \(streamed.failed ? "fails" : "decodes")")
        }
    }

    @Test("every prefix of a PNG is refused or decoded without a crash; a cut in the image data is `truncated`")
    func everyPrefix() throws {
        let bytes = try Fixtures.bytes("pngsuite/basic/basn6a08.png")
        let idatEnd = bytes.count - 12  // IEND is the last 12 bytes
        for length in 0..<bytes.count {
            let prefix = Array(bytes.prefix(length))
            let result = Result { () throws(ImageOpsError) in try ImageDecoder.decode(prefix, source: "cut.png") }
            switch result {
            case .success:
                Issue.record("a PNG cut to \(length) of \(bytes.count) bytes decoded in strict mode")
            case .failure(.truncated), .failure(.emptyInput):
                break
            case .failure(let error):
                if length < idatEnd - 4 { Issue.record("cut to \(length): expected truncated, got \(error)") }
            }
        }
    }

    @Test("what the encoder writes, libpng reads back byte for byte (RGB and RGBA, every filter, levels 0, 1, 6, 12)")
    func encoderOutputReadsBack() throws {
        let opaque = Fixtures.image(width: 97, height: 61) { x, y in
            (UInt8(x * 2 & 255), UInt8(y * 4 & 255), UInt8((x ^ y) & 255), 255)
        }
        let translucent = Fixtures.image(width: 97, height: 61, alpha: true) { x, y in
            (UInt8(x * 2 & 255), UInt8(y * 4 & 255), UInt8((x ^ y) & 255), UInt8((x * y) % 251))
        }
        for image in [opaque, translucent] {
            for filter in ImageEncoders.PNG.Filter.allCases {
                for level in [0, 1, 6, 12] {
                    let png = try ImageEncoders.PNG(compressionLevel: level, filter: filter).encode(image)
                    guard case .pixels(let read, false) = Self.libpng(png, sixteenBit: false) else {
                        Issue.record("libpng could not read the \(filter) level \(level) output")
                        continue
                    }
                    #expect(read == image.bytes, "\(filter) level \(level) alpha \(image.hasAlpha)")
                }
            }
        }
    }

    @Test("a higher level never makes a file larger on a photo-like image (levels 1 → 6 → 12)")
    func levelsShrink() throws {
        let image = Fixtures.image(width: 320, height: 200) { x, y in
            (UInt8((x * 3 + y) & 255), UInt8((x * y / 7) & 255), UInt8((x + 2 * y) & 255), 255)
        }
        let sizes = try [1, 6, 12].map { try ImageEncoders.PNG(compressionLevel: $0, filter: .up).encode(image).count }
        #expect(sizes[0] >= sizes[1] && sizes[1] >= sizes[2], "\(sizes)")
    }
}
