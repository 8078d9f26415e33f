import ArgumentParser
import Foundation
import ImageOps

/// `vsearch thumbs`: the thumbnail job (`make`, the default) and the merge of a sharded job's manifests.
struct ThumbsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "thumbs",
        abstract: "Make 400/800/1200/1600 px thumbnails of every image in a folder.",
        discussion: "`vsearch thumbs INPUT OUTPUT` runs `make`; see `vsearch thumbs make --help`.",
        subcommands: [Make.self, MergeManifests.self],
        defaultSubcommand: Make.self
    )
}

extension ThumbsCommand {
/// `vsearch thumbs [make] INPUT OUTPUT`: the Rezolve thumbnail set for every image under INPUT.
struct Make: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "make",
        abstract: "Make 400/800/1200/1600 px thumbnails of every image in a folder (the default).",
        discussion: """
        For each image under INPUT (recursively: JPEG, PNG, WebP, HEIC/HEIF, AVIF, GIF) whose \
        longer side M exceeds a size N, \
        writes OUTPUT/<same sub-folder>/NAME_thumb_{w}x{h}.{ext} whose longer side is N \
        (the Rezolve rule; --fit width makes the width N, as the rule's example does). \
        Sources of 400 px or less get no thumbnail. Aspect ratio is always kept.

        Each source is decoded once, at the smallest JPEG scale that covers the largest \
        thumbnail; smaller sizes are made from larger ones. Every file is written to a \
        temporary name and renamed into place, so an interrupted run leaves no partial \
        files, and a re-run skips sources whose outputs are newer (use --force to redo).

        OUTPUT/manifest.jsonl gets one line per source: {"image": ..., "image_thumbs": [...]}.

        Formats (--format): same keeps the source's format (GIF gives PNG, HEIC gives JPEG); \
        auto writes WebP, lossless for graphics (256 colours or fewer) and lossy for photos; \
        webp, avif, jpeg, png force one. Measured on the bench photos: lossy WebP q80 is 45% \
        smaller than JPEG q85 and costs 2.3x its CPU; AVIF (quality 50, speed 8) is 78% smaller \
        and costs 2.1x (lower --avif-speed for smaller files, much slower). Colour: embedded ICC profiles (and PNG gAMA/cHRM, HEIF nclx) are converted to \
        sRGB; --keep-profile keeps the source's pixels and embeds its profile instead (exact in \
        colour-managed viewers, wrong in those that ignore profiles). Thumbnails carry no \
        metadata (no EXIF, GPS, XMP); --keep-metadata copyright keeps Artist and Copyright.

        --shard i/n does part i (from 0) of a job split n ways by a stable hash of each file's \
        path, for n machines under a scheduler (Kubernetes Indexed Job, Slurm array, GNU \
        parallel); each part writes OUTPUT/manifest.shard-i-of-n.jsonl, and \
        `vsearch thumbs merge-manifests OUTPUT` joins them once all parts are done. \
        Bad sources are reported with their reason and skipped; the exit code is then 1.
        """
    )

    @Argument(help: "A folder of images (searched recursively) or a single image file.")
    var input: String

    @Argument(help: "The folder to write thumbnails and manifest.jsonl into (created if missing).")
    var output: String

    @Option(name: [.customShort("j"), .customLong("jobs")], help: "Worker threads (each holds one image in memory). Default the number of cores.")
    var requestedJobs: Int?
    var jobs: Int { requestedJobs ?? ProcessInfo.processInfo.activeProcessorCount }

    @Option(name: .customLong("memory-budget-mb"),
            help: "Megabytes the workers' sources may hold at once (file, decode, first resample); a large source waits for another to finish, one alone always runs. Default 120 per job.")
    var memoryBudgetMB: Int?

    @Option(help: ArgumentHelp("Comma-separated thumbnail sizes in pixels.", valueName: "n,n,..."))
    var sizes: String = ThumbnailRule.defaultSizes.map(String.init).joined(separator: ",")

    @Option(help: "Which side a size constrains: max (longer side, the rule as written) or width (the rule's example).")
    var fit: ThumbnailRule.Fit = .max

    @Option(help: "Output format: same (as the source), jpeg, png, webp, avif, or auto (WebP: lossless for graphics, lossy for photos).")
    var format: ThumbnailBatch.OutputFormat = .same

    @Option(help: "JPEG quality, 0...1 (0.85) or 2...100 (85).")
    var quality: String = "0.85"

    @Option(name: .customLong("webp-quality"), help: "Lossy WebP quality 0...100.")
    var webpQuality: Int = 80

    @Option(name: .customLong("webp-effort"), help: "WebP effort 0 (fastest) ... 6 (smallest files).")
    var webpEffort: Int = 4

    @Option(name: .customLong("avif-quality"), help: "AVIF quality 0...100 (50 looks about like JPEG 80).")
    var avifQuality: Int = 50

    @Option(name: .customLong("avif-speed"), help: "AVIF encoder speed 0 (slowest, smallest) ... 10 (fastest).")
    var avifSpeed: Int = 8

    @Flag(name: .customLong("keep-profile"), help: "Keep the source's pixels and embed its ICC profile instead of converting to sRGB.")
    var keepProfile = false

    @Option(name: .customLong("keep-metadata"), help: "Metadata to keep: none, or copyright (EXIF Artist and Copyright only).")
    var keepMetadata: MetadataPolicy = .none

    @Option(name: .customLong("png-level"),
            help: "PNG compression level 0...12 (libdeflate's; higher: smaller files, more CPU — see README \"PNG output\").")
    var pngLevel: Int = ImageEncoders.PNG().compressionLevel

    @Option(name: .customLong("png-filter"), help: "PNG row filter: none, sub, up, paeth or adaptive.")
    var pngFilter: ImageEncoders.PNG.Filter = ImageEncoders.PNG().filter

    @Option(name: .customLong("max-image-megapixels"),
            help: ArgumentHelp("Refuse sources declaring more than this many megapixels. Default \(Double(ImageLimits.default.maxPixels) / 1_000_000).",
                               valueName: "megapixels"))
    var maxImageMegapixels: Double?
    /// `--max-pixels N` (pixels), this option's spelling before 0.3.0 (`vsearch serve` said `--max-image-megapixels`); hidden, for one release.
    @Option(name: .customLong("max-pixels"), help: .hidden)
    var legacyMaxPixels: Int?
    /// The pixel limit in effect.
    var maxPixels: Int {
        maxImageMegapixels.map { Int(($0 * 1_000_000).rounded()) } ?? legacyMaxPixels ?? ImageLimits.default.maxPixels
    }

    @Flag(help: "Redo every source, even when its outputs are up to date.")
    var force = false

    @Flag(name: .customLong("copy-originals"), help: "Also copy each original into OUTPUT, so OUTPUT is self-contained.")
    var copyOriginals = false

    @Flag(help: "Accept images with recoverable damage (e.g. a truncated JPEG) instead of failing them.")
    var lenient = false

    @Option(help: Shard.help, transform: Shard.argument)
    var shard: Shard = .whole

    @Flag(help: "Print the summary and every source's result as JSON on stdout.")
    var json = false

    @Flag(name: .shortAndLong, help: "Print a line for every source, even on a terminal.")
    var verbose = false

    func validate() throws {
        guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
        if let memoryBudgetMB, memoryBudgetMB < 1 { throw ValidationError("--memory-budget-mb must be at least 1") }
        guard (0...12).contains(pngLevel) else { throw ValidationError("--png-level must be 0...12") }
        if let maxImageMegapixels, !(maxImageMegapixels > 0) || !maxImageMegapixels.isFinite {
            throw ValidationError("--max-image-megapixels must be above 0")
        }
        if let legacyMaxPixels, legacyMaxPixels < 1 { throw ValidationError("--max-pixels must be at least 1") }
        if legacyMaxPixels != nil { Deprecation.warn("--max-pixels N", instead: "--max-image-megapixels M (N / 1,000,000)") }
        guard (0...100).contains(webpQuality) else { throw ValidationError("--webp-quality must be 0...100") }
        guard (0...6).contains(webpEffort) else { throw ValidationError("--webp-effort must be 0...6") }
        guard (0...100).contains(avifQuality) else { throw ValidationError("--avif-quality must be 0...100") }
        guard (0...10).contains(avifSpeed) else { throw ValidationError("--avif-speed must be 0...10") }
        _ = try parsedSizes()
        do { _ = try JPEGQuality(parsing: quality) } catch { throw ValidationError(error.description) }
    }

    func parsedSizes() throws -> [Int] {
        let parts = sizes.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        let values = parts.compactMap { Int($0) }
        guard !parts.isEmpty, values.count == parts.count, values.allSatisfy({ $0 >= 1 }) else {
            throw ValidationError("--sizes must be positive integers separated by commas, e.g. 400,800,1200,1600")
        }
        return values
    }

    func run() throws {
        var configuration = ThumbnailBatch.Configuration()
        configuration.rule = ThumbnailRule(sizes: try parsedSizes(), fit: fit)
        configuration.format = format
        configuration.jpeg = ImageEncoders.JPEG(quality: try JPEGQuality(parsing: quality))
        configuration.png = ImageEncoders.PNG(compressionLevel: pngLevel, filter: pngFilter)
        configuration.encoders.webp = ImageEncoders.WebP(quality: webpQuality, effort: webpEffort)
        configuration.encoders.avif = ImageEncoders.AVIF(quality: avifQuality, speed: avifSpeed)
        configuration.colorHandling = keepProfile ? .keepSourceProfile : .convertToSRGB
        configuration.metadata = keepMetadata
        configuration.jobs = jobs
        configuration.memoryBudget = memoryBudgetMB.map { $0.multipliedReportingOverflow(by: 1_000_000).overflow ? Int.max : $0 * 1_000_000 }
        configuration.skipsUpToDate = !force
        configuration.copiesOriginals = copyOriginals
        configuration.limits.maxPixels = maxPixels
        configuration.failurePolicy = lenient ? .lenient : .strict
        configuration.shard = shard

        do {
            try InputError.checkHasImages(input, excluding: output, outcome: "nothing was written")
            try InputError.checkNames(in: input, excluding: output)
        } catch {
            throw CLIError.report(error)
        }
        let reporter = ProgressReporter(verbose: verbose)
        let batch = ThumbnailBatch(input: input, output: output, configuration: configuration)
        let summary: ThumbnailBatch.Summary
        Interrupt.install()
        do {
            summary = try batch.run(isCancelled: { Interrupt.isRequested }) { event in
                switch event {
                case .started(let total):
                    reporter.begin(total: total, noun: "images")
                case .finished(let result, let completed, _):
                    reporter.item(completed: completed, failed: result.status == .failed, line: Self.line(for: result))
                }
            }
        } catch {
            reporter.end()
            Terminal.err("error: \(error.description)\n")
            throw ExitCodes.code(for: error)
        }
        reporter.end()

        if json {
            Terminal.json(summary)
        } else {
            Terminal.err("""
            \(summary.sources) sources: \(summary.created) processed, \(summary.upToDate) up to date, \(summary.failed) failed; \
            \(summary.thumbnailsWritten) thumbnails (\(Terminal.grouped(summary.bytesWritten)) bytes) in \
            \(String(format: "%.2f", summary.seconds)) s
            manifest: \(summary.manifest)

            """)
            if summary.failed > 0 {
                Terminal.err("failed:\n")
                for result in summary.results where result.status == .failed {
                    Terminal.err("  \(result.error ?? result.source)\n")
                }
            }
        }
        if Interrupt.isRequested {
            Terminal.err("interrupted: finished the images in progress; run the same command again to continue\n")
            throw ExitCodes.interrupted
        }
        if summary.failed > 0 { throw ExitCodes.partialFailure }
    }

    static func line(for result: ThumbnailBatch.SourceResult) -> String {
        switch result.status {
        case .failed:
            return "FAIL  \(result.error ?? result.source)"
        case .upToDate:
            return "skip  \(result.source) (up to date)"
        case .created:
            let sizes = result.thumbnails.map { "\($0.width)x\($0.height)" }.joined(separator: " ")
            return "ok    \(result.source) -> \(result.thumbnails.isEmpty ? "no thumbnails (400 px or less)" : sizes)"
        }
    }
}

/// `vsearch thumbs merge-manifests OUTPUT`: after every part of a sharded job.
struct MergeManifests: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "merge-manifests",
        abstract: "Join the manifests of a sharded thumbs job into OUTPUT/manifest.jsonl.",
        discussion: """
        Run once every `vsearch thumbs INPUT OUTPUT --shard i/n` has finished. The merged \
        manifest is the one a single run writes (same lines, same order); the parts' files \
        are removed. A missing part is named and nothing is changed (exit 66).
        """
    )

    @Argument(help: "The OUTPUT folder the parts wrote into.")
    var output: String

    @Flag(help: "Print the result as JSON on stdout.")
    var json = false

    func run() throws {
        do {
            let summary = try ThumbnailBatch.mergeManifests(in: output)
            if json {
                Terminal.json(summary)
            } else {
                Terminal.err("merged \(summary.shards) manifests, \(summary.lines) lines: \(summary.manifest)\n"
                    + "removed the parts: \(summary.removed.joined(separator: ", "))\n")
            }
        } catch {
            Terminal.err("error: \(error.description)\n")
            throw ExitCodes.code(for: error)
        }
    }
}
}

extension ThumbnailRule.Fit: ExpressibleByArgument {}
extension ThumbnailBatch.OutputFormat: ExpressibleByArgument {}
extension ImageEncoders.PNG.Filter: ExpressibleByArgument {}
extension MetadataPolicy: ExpressibleByArgument {}
