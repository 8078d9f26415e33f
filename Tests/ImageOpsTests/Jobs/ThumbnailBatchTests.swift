import Foundation
import Testing
@testable import ImageOps

@Suite("Thumbnail batch job")
struct ThumbnailBatchTests {
    /// A small tree: a large JPEG in a sub-folder, a PNG with alpha, a small image, and a corrupt file.
    static func makeTree() throws -> (input: String, output: String) {
        let root = Fixtures.temporaryDirectory()
        let input = root + "/in", output = root + "/out"
        try FileIO.makeDirectory(input + "/shoes")
        let big = Fixtures.quadrants(width: 900, height: 600)
        try FileIO.write(try ImageEncoders.JPEG().encode(big), to: input + "/shoes/big.jpg")
        let alpha = Fixtures.image(width: 500, height: 1000, alpha: true) { x, y in (UInt8(x % 256), UInt8(y % 256), 90, UInt8((x + y) % 256)) }
        try FileIO.write(try ImageEncoders.PNG().encode(alpha), to: input + "/logo.png")
        try FileIO.write(try ImageEncoders.JPEG().encode(Fixtures.quadrants(width: 300, height: 200)), to: input + "/small.jpg")
        try FileIO.write(Array("this is not an image".utf8), to: input + "/broken.jpg")
        try FileIO.write(Array("notes".utf8), to: input + "/notes.txt")
        return (input, output)
    }

    static func files(under path: String) -> [String] {
        (FileManager.default.enumerator(atPath: path)?.allObjects as? [String] ?? []).sorted()
    }

    @Test("makes every planned size, mirrors the tree, reports the bad file and writes the manifest")
    func fullRun() throws {
        let (input, output) = try Self.makeTree()
        var configuration = ThumbnailBatch.Configuration()
        configuration.jobs = 2
        let summary = try ThumbnailBatch(input: input, output: output, configuration: configuration).run()
        #expect(summary.sources == 4)
        #expect(summary.created == 3)
        #expect(summary.failed == 1)
        #expect(summary.results.first { $0.source == "broken.jpg" }?.error?.contains("broken.jpg") == true)

        let files = Self.files(under: output)
        #expect(files.contains("shoes/big_thumb_400x267.jpg"))
        #expect(files.contains("shoes/big_thumb_800x533.jpg"))
        #expect(files.contains("logo_thumb_200x400.png"))
        #expect(files.contains("logo_thumb_400x800.png"))
        #expect(!files.contains { $0.hasPrefix("small_thumb") })
        #expect(!files.contains { $0.contains(".tmp-") }, "no temporary file is left behind")

        let thumb = try ImageDecoder.decode(fileAt: output + "/logo_thumb_400x800.png")
        #expect(thumb.pixels.size == PixelSize(width: 400, height: 800) && thumb.pixels.hasAlpha)

        let manifest = try String(contentsOfFile: output + "/manifest.jsonl", encoding: .utf8)
        let lines = manifest.split(separator: "\n")
        #expect(lines.count == 3)
        let first = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any]
        #expect(first?["image"] as? String == "logo.png")
        #expect(first?["image_thumbs"] as? [String] == ["logo_thumb_200x400.png", "logo_thumb_400x800.png"])
    }

    @Test("a second run skips sources whose outputs are newer; --force redoes them")
    func resume() throws {
        let (input, output) = try Self.makeTree()
        _ = try ThumbnailBatch(input: input, output: output).run()
        let again = try ThumbnailBatch(input: input, output: output).run()
        #expect(again.upToDate == 2)
        #expect(again.thumbnailsWritten == 0)

        // Touch one source: it is redone, the other stays skipped.
        let future = Date().addingTimeInterval(5)
        try FileManager.default.setAttributes([.modificationDate: future], ofItemAtPath: input + "/logo.png")
        let third = try ThumbnailBatch(input: input, output: output).run()
        #expect(third.results.first { $0.source == "logo.png" }?.status == .created)
        #expect(third.results.first { $0.source == "shoes/big.jpg" }?.status == .upToDate)

        // A deleted output makes its source run again.
        try FileManager.default.removeItem(atPath: output + "/shoes/big_thumb_400x267.jpg")
        let fourth = try ThumbnailBatch(input: input, output: output).run()
        #expect(fourth.results.first { $0.source == "shoes/big.jpg" }?.status == .created)

        var configuration = ThumbnailBatch.Configuration()
        configuration.skipsUpToDate = false
        let forced = try ThumbnailBatch(input: input, output: output, configuration: configuration).run()
        #expect(forced.upToDate == 0 && forced.created == 3)
    }

    @Test("format, fit and sizes options are honoured; originals can be copied")
    func options() throws {
        let (input, output) = try Self.makeTree()
        var configuration = ThumbnailBatch.Configuration()
        configuration.format = .jpeg
        configuration.rule = ThumbnailRule(sizes: [100, 450], fit: .width)
        configuration.copiesOriginals = true
        let summary = try ThumbnailBatch(input: input, output: output, configuration: configuration).run()
        let files = Self.files(under: output)
        #expect(files.contains("logo_thumb_100x200.jpg"))
        #expect(files.contains("logo_thumb_450x900.jpg"))
        #expect(files.contains("shoes/big_thumb_450x300.jpg"))
        #expect(files.contains("small_thumb_100x67.jpg"))
        #expect(files.contains("logo.png") && files.contains("shoes/big.jpg"))
        #expect(summary.failed == 1)
    }

    @Test("an output folder inside the input folder is not read as input, nor are thumbnails")
    func outputInsideInput() throws {
        let (input, _) = try Self.makeTree()
        _ = try ThumbnailBatch(input: input, output: input + "/thumbs").run()
        let second = try ThumbnailBatch(input: input, output: input + "/thumbs").run()
        #expect(second.sources == 4)
        _ = try ThumbnailBatch(input: input, output: input).run()
        #expect(try ThumbnailBatch(input: input, output: input).run().sources == 4)
    }

    @Test("a missing input is a job-level error")
    func missingInput() {
        #expect(throws: ImageOpsError.self) { try ThumbnailBatch(input: "/nonexistent/vsearch", output: Fixtures.temporaryDirectory()).run() }
    }

    @Test("every bad input of the fixture set is reported and the job finishes")
    func badInputFolder() throws {
        let output = Fixtures.temporaryDirectory()
        var configuration = ThumbnailBatch.Configuration()
        configuration.jobs = 2
        let summary = try ThumbnailBatch(input: Fixtures.badInput + "/truncated", output: output, configuration: configuration).run()
        #expect(summary.sources == 16)
        #expect(summary.failed == 16)
        #expect(Self.files(under: output) == ["manifest.jsonl"])
    }
}
