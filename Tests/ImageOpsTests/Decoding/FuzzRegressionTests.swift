import Foundation
import Testing
@testable import ImageOps

/// Inputs that crashed a decoder under the fuzz harnesses (docs/fuzzing.md). The memory errors
/// behind them (a double free, a use-after-free, a leak) are certain to show only under
/// AddressSanitizer (`scripts/sanitizers.sh`, `--leaks` for the leak); in a plain run the double
/// free usually aborts the process.
@Suite("Decoder inputs found by fuzzing (Fuzz/Regressions)")
struct FuzzRegressionTests {
    /// `Fuzz/Regressions/<target>`.
    static func regressions(_ target: String) -> String {
        URL(fileURLWithPath: Fixtures.root).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fuzz/Regressions/\(target)").path
    }

    /// A 4×4 GIF whose only frame is `width`×4 at (0, 0), with a two-colour global table or none.
    static func gif(frameWidth width: UInt8, globalColorTable: Bool) -> [UInt8] {
        var bytes = Array("GIF89a".utf8) + [4, 0, 4, 0, globalColorTable ? 0x80 : 0x00, 0, 0]
        if globalColorTable { bytes += [0, 0, 0, 255, 255, 255] }
        bytes += [0x2C, 0, 0, 0, 0, width, 0, 4, 0, 0x00]  // image descriptor, no local table
        bytes += [0x02, 0x02, 0x44, 0x01, 0x00, 0x3B]       // LZW data, trailer
        return bytes
    }

    @Test("a GIF frame of width 0 is invalidDimensions, and the file is closed once (was a double free)")
    func gifZeroWidthFrame() {
        let bytes = Self.gif(frameWidth: 0, globalColorTable: true)
        #expect(throws: ImageOpsError.invalidDimensions(source: "gif", width: 0, height: 4)) {
            try ImageDecoder.decode(bytes, source: "gif")
        }
        #expect(throws: ImageOpsError.invalidDimensions(source: "gif", width: 0, height: 4)) {
            try ImageDecoder.readHeader(bytes, source: "gif")
        }
    }

    @Test("a GIF without any colour table is corrupt, and the file is closed once (was a double free)")
    func gifWithoutColorTable() {
        let bytes = Self.gif(frameWidth: 4, globalColorTable: false)
        #expect(throws: ImageOpsError.corrupt(source: "gif", format: .gif, reason: "no colour table for the first frame")) {
            try ImageDecoder.decode(bytes, source: "gif")
        }
    }

    @Test("a HEIF libheif cannot parse is refused with libheif's message, read before the context is freed (was a use-after-free)")
    func heifErrorMessage() throws {
        let bytes = try Fixtures.bytes("formats/heic_trunc_100B.heic")
        let result = Result { () throws(ImageOpsError) in try ImageDecoder.decode(bytes, source: "heic") }
        switch result {
        case .failure(.truncated(_, .heif, let reason)), .failure(.corrupt(_, .heif, let reason)):
            #expect(!reason.isEmpty && reason.unicodeScalars.allSatisfy { $0.isASCII && $0.value >= 0x20 }, "\(reason)")
        default:
            Issue.record("expected a truncated or corrupt HEIF, got \(result)")
        }
    }

    @Test("every saved input of the gif, heif and avif harnesses decodes consistently or is refused with a typed error",
          arguments: ["gif", "heif", "avif"])
    func savedInputs(target: String) throws {
        let directory = Self.regressions(target)
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
        #expect(!files.isEmpty)
        for file in files {
            let bytes = try FileIO.read(directory + "/" + file)
            // The finding was a memory error (ASan) or a leak (LeakSanitizer); the outcome itself
            // only has to be one of the two normal ones.
            if let image = try? ImageDecoder.decode(bytes, source: file) {
                #expect(image.pixels.bytes.count == image.pixels.width * image.pixels.height * 4, "\(target)/\(file)")
            }
        }
    }
}
