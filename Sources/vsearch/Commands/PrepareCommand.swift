import ArgumentParser
import Foundation
import ImageOps

/// `vsearch prepare INPUT OUTPUT`: resize and re-encode an image for upload search.
struct PrepareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prepare",
        abstract: "Prepare an image for upload search, as the ViSearch SDKs do.",
        discussion: """
        Fits the image inside 512×512 (or 1024×1024 with --high-quality, or --size N up to 1024),
        shrinking only and keeping the aspect ratio, applies EXIF orientation, and writes an
        upright JPEG at quality 0.97 (0.985 with --high-quality, or --quality).

        --box x1,y1,x2,y2 is given in the original's pixels. By default it is carried into the
        prepared image's pixels (scaled, truncated: what the hosted service expects); with
        --crop the image is cropped to the box before resizing and no box is reported.
        OUTPUT may be - for stdout.
        """
    )

    @Argument(help: "The JPEG or PNG image to prepare.")
    var input: String

    @Argument(help: "Where to write the prepared JPEG (- for stdout).")
    var output: String

    @Flag(name: .customLong("high-quality"), help: "Fit inside 1024 px at quality 0.985.")
    var highQuality = false

    @Option(help: "Fit inside N×N pixels (clamped to 1024).")
    var size: Int?

    @Option(help: "JPEG quality, 0...1 (0.97) or 2...100 (97).")
    var quality: String?

    @Option(help: ArgumentHelp("A selection box in the original's pixels.", valueName: "x1,y1,x2,y2"))
    var box: String?

    @Flag(help: "Crop to --box before resizing instead of scaling the box.")
    var crop = false

    @Flag(help: "Print the result as JSON.")
    var json = false

    func validate() throws {
        if highQuality && size != nil { throw ValidationError("use either --high-quality or --size, not both") }
        if let size, size < 1 { throw ValidationError("--size must be at least 1") }
        if crop && box == nil { throw ValidationError("--crop needs --box") }
        if output == "-" && json { throw ValidationError("--json prints to stdout, so OUTPUT cannot be -") }
        do {
            if let quality { _ = try JPEGQuality(parsing: quality) }
            if let box { _ = try PixelBox(parsing: box) }
        } catch {
            throw ValidationError(error.description)
        }
    }

    struct Report: Encodable {
        var input: String
        var output: String
        var width: Int
        var height: Int
        var bytes: Int
        var quality: Double
        var originalWidth: Int
        var originalHeight: Int
        var scale: Double
        var box: String?

        enum CodingKeys: String, CodingKey {
            case input, output, width, height, bytes, quality, scale, box
            case originalWidth = "original_width", originalHeight = "original_height"
        }
    }

    func run() throws {
        do {
            let base: UploadSettings = highQuality ? .highQuality : .standard
            let settings = try UploadSettings(maxSide: size ?? base.maxSide,
                                              quality: try quality.map { try JPEGQuality(parsing: $0) } ?? base.quality)
            let bytes = try FileIO.read(input, maxBytes: ImageLimits.default.maxInputBytes)
            let prepared = try UploadPreparation.prepare(bytes, source: input, settings: settings,
                                                         box: try box.map { try PixelBox(parsing: $0) },
                                                         boxHandling: crop ? .crop : .scale)
            if output == "-" {
                FileHandle.standardOutput.write(Data(prepared.jpeg))
                return
            }
            try FileIO.writeAtomically(prepared.jpeg, to: output)
            let report = Report(input: input, output: output, width: prepared.size.width, height: prepared.size.height,
                                bytes: prepared.jpeg.count, quality: settings.quality.fraction,
                                originalWidth: prepared.originalSize.width, originalHeight: prepared.originalSize.height,
                                scale: prepared.scale, box: prepared.box?.description)
            if json {
                Terminal.json(report)
            } else {
                var line = "\(output): \(report.width)×\(report.height), \(Terminal.grouped(report.bytes)) bytes, "
                    + "quality \(settings.quality.fraction) (from \(report.originalWidth)×\(report.originalHeight))"
                if let box = report.box { line += ", box \(box)" }
                Terminal.out(line)
            }
        } catch let error as ImageOpsError {
            Terminal.err("error: \(error.description)\n")
            throw ExitCodes.code(for: error)
        }
    }
}
