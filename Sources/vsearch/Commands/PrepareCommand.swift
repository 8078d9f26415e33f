import ArgumentParser
import Foundation
import ImageOps

/// `vsearch prepare INPUT OUTPUT`: resize and re-encode an image for upload search.
struct PrepareCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prepare",
        abstract: "Prepare an image for upload search, as the ViSearch SDKs do.",
        discussion: """
        Fits the image inside 512×512 (or 1024×1024 with --high-quality, or --size N up to 1024), \
        shrinking only and keeping the aspect ratio, applies EXIF orientation, and writes an \
        upright JPEG at quality 0.97 (0.985 with --high-quality, or --quality).

        --box x1,y1,x2,y2 is given in the original's pixels. By default it is carried into the \
        prepared image's pixels (scaled, truncated: what the hosted service expects); with \
        --crop the image is cropped to the box before resizing and no box is reported. \
        OUTPUT may be - for stdout.

        When INPUT is a folder, every JPEG and PNG under it is prepared into OUTPUT (a folder), \
        mirroring the tree with a .jpg extension, on --jobs threads; the exit code is 1 when \
        any image failed (each failure is listed with its reason).
        """
    )

    @Argument(help: "The JPEG or PNG image to prepare, or a folder of them.")
    var input: String

    @Argument(help: "Where to write the prepared JPEG (- for stdout), or a folder when INPUT is one.")
    var output: String

    @Option(name: [.customShort("j"), .customLong("jobs")], help: "Worker threads when INPUT is a folder. Default the number of cores.")
    var requestedJobs: Int?
    var jobs: Int { requestedJobs ?? ProcessInfo.processInfo.activeProcessorCount }

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
        if ImageFiles.isDirectory(input) {
            if box != nil { throw ValidationError("--box applies to one image, not to a folder") }
            if output == "-" { throw ValidationError("a folder of images needs an output folder, not -") }
            if FileManager.default.fileExists(atPath: output) && !ImageFiles.isDirectory(output) {
                throw ValidationError("\(output) is a file, but INPUT \(input) is a folder: give an output folder")
            }
            if !FileManager.default.fileExists(atPath: output),
               ImageFormat.imageFileExtensions.contains((output as NSString).pathExtension.lowercased()) {
                throw ValidationError("\(output) looks like an image file name, but INPUT \(input) is a folder: give an output folder (it is created)")
            }
        }
        guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
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

        var error: String?

        enum CodingKeys: String, CodingKey {
            case input, output, width, height, bytes, quality, scale, box, error
            case originalWidth = "original_width", originalHeight = "original_height"
        }

        init(input: String, output: String, prepared: PreparedUpload, settings: UploadSettings) {
            self.input = input
            self.output = output
            width = prepared.size.width
            height = prepared.size.height
            bytes = prepared.jpeg.count
            quality = settings.quality.fraction
            originalWidth = prepared.originalSize.width
            originalHeight = prepared.originalSize.height
            scale = prepared.scale
            box = prepared.box?.description
        }

        init(input: String, error: String) {
            self.input = input
            output = ""
            width = 0; height = 0; bytes = 0; quality = 0; originalWidth = 0; originalHeight = 0; scale = 0
            self.error = error
        }
    }

    /// Prepares one file of a folder run; failures become a report with an error.
    static func prepare(_ relative: String, from input: String, into output: String,
                        settings: UploadSettings, boxHandling: BoxHandling) -> Report {
        let source = (input as NSString).appendingPathComponent(relative)
        let target = (output as NSString).appendingPathComponent((relative as NSString).deletingPathExtension + ".jpg")
        do {
            let bytes = try FileIO.read(source, maxBytes: ImageLimits.default.maxInputBytes)
            let prepared = try UploadPreparation.prepare(bytes, source: source, settings: settings, boxHandling: boxHandling)
            try FileIO.makeDirectory((target as NSString).deletingLastPathComponent)
            try FileIO.writeAtomically(prepared.jpeg, to: target)
            return Report(input: source, output: target, prepared: prepared, settings: settings)
        } catch {
            return Report(input: source, error: error.description)
        }
    }

    /// Prepares every image of a folder into an output folder, in parallel.
    func runFolder() throws {
        let settings: UploadSettings
        let sources: [String]
        do {
            try InputError.checkHasImages(input, excluding: output, outcome: "nothing was written")
            try InputError.checkNames(in: input, excluding: output)  // every output is NAME.jpg
            settings = try self.settings()
            sources = try ImageFiles.find(in: input, excluding: output)
            try FileIO.makeDirectory(output)
        } catch {
            throw CLIError.report(error)
        }
        let reporter = ProgressReporter()
        reporter.begin(total: sources.count, noun: "images")
        Interrupt.install()
        let (input, output, handling) = (self.input, self.output, crop ? BoxHandling.crop : .scale)
        let onResult: @Sendable (Int, Report, Int) -> Void = { _, report, completed in
            let line: String
            if let error = report.error { line = "FAIL  " + error } else { line = "ok    \(report.input) -> \(report.width)x\(report.height)" }
            reporter.item(completed: completed, failed: report.error != nil, line: line)
        }
        let work: @Sendable (Int) -> Report = { index in
            Self.prepare(sources[index], from: input, into: output, settings: settings, boxHandling: handling)
        }
        let reports = WorkerPool(workers: jobs)
            .map(count: sources.count, isCancelled: { Interrupt.isRequested }, onResult: onResult, work)
            .compactMap { $0 }
        reporter.end()
        let failed = reports.filter { $0.error != nil }
        if json {
            Terminal.json(reports)
        } else {
            // Failures were printed as they happened.
            Terminal.err("\(Terminal.count(reports.count, "image")): \(reports.count - failed.count) prepared, \(failed.count) failed; "
                + "\(Terminal.grouped(reports.reduce(0) { $0 + $1.bytes })) bytes written to \(output)\n")
        }
        if Interrupt.isRequested {
            Terminal.err("interrupted: finished the images in progress; run the same command again to continue\n")
            throw ExitCodes.interrupted
        }
        if !failed.isEmpty { throw ExitCodes.partialFailure }
    }

    func settings() throws(ImageOpsError) -> UploadSettings {
        let base: UploadSettings = highQuality ? .highQuality : .standard
        var chosenQuality = base.quality
        if let quality { chosenQuality = try JPEGQuality(parsing: quality) }
        return try UploadSettings(maxSide: size ?? base.maxSide, quality: chosenQuality)
    }

    func parsedBox() throws(ImageOpsError) -> PixelBox? {
        guard let box else { return nil }
        return try PixelBox(parsing: box)
    }

    func run() throws {
        if ImageFiles.isDirectory(input) { return try runFolder() }
        do {
            try InputError.checkNotFolder(output, role: "OUTPUT")   // one image is written to a file (a folder of images to a folder)
            let settings = try settings()
            let bytes = try FileIO.read(input, maxBytes: ImageLimits.default.maxInputBytes)
            let prepared = try UploadPreparation.prepare(bytes, source: input, settings: settings,
                                                         box: try parsedBox(),
                                                         boxHandling: crop ? .crop : .scale)
            if output == "-" {
                Terminal.outBytes(prepared.jpeg)
                return
            }
            try FileIO.writeAtomically(prepared.jpeg, to: output)
            let report = Report(input: input, output: output, prepared: prepared, settings: settings)
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
        } catch let error as InputError {
            throw CLIError.report(error)
        }
    }
}
