import ArgumentParser
import Foundation
import ImageOps
import SearchEngine
import VisualSearch

/// `vsearch info FILE...`: what each file is and whether it decodes; with no
/// file, what this vsearch has: the catalog, its vectors and the learned model.
struct InfoCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show each image's format, size and orientation, and whether it decodes; with no file, the catalog and the learned model.",
        discussion: """
        With no file: vsearch's version, the catalog (--catalog, else $VSEARCH_CATALOG, else \
        .vsearch/catalog.sqlite) — its images, whether they have learned vectors and of which model — and \
        the learned model installed here (or how to install it). --json gives the same as one object.


        The format is recognised from the file's bytes, not its name. Each file's line gives its format, size, \
        orientation, alpha (yes or no), colour profile (or none), artist and copyright when present, and any \
        decoding warnings; --json gives the same as JSON lines. Errors go to stderr. Exit code 66 when a file \
        does not exist, else 1 when any file fails to decode.
        """
    )

    @Argument(help: "Image files.")
    var files: [String] = []

    @OptionGroup var catalog: CatalogOptions
    @OptionGroup var model: ModelOptions

    @Flag(help: "Print JSON lines, one per file.")
    var json = false

    /// What `vsearch info` with no file reports.
    struct Setup: Encodable {
        var version: String
        var catalog: String
        var images: Int?
        var catalogError: String?
        var learnedModel: EmbeddingDescriptor?
        var learnedImages: Int?
        var installedModel: EmbeddingDescriptor?
        var modelProblem: String?
        var defaultSimilarity: SimilarityMode?

        enum CodingKeys: String, CodingKey {
            case version, catalog, images
            case catalogError = "catalog_error", learnedModel = "learned_model", learnedImages = "learned_images"
            case installedModel = "installed_model", modelProblem = "model_problem", defaultSimilarity = "default_similarity"
        }
    }

    /// The catalog and the model, for `vsearch info` without files.
    func setup() async -> Setup {
        var report = Setup(version: VSearch.version, catalog: catalog.location.description)
        do {
            report.installedModel = try model.learnedEmbedder()?.descriptor
            if report.installedModel == nil { report.modelProblem = "not installed: `\(EmbeddingError.installCommand)`" }
        } catch {
            report.modelProblem = error.description
        }
        do {
            (report.images, report.learnedModel, report.learnedImages) = try await catalog.withStoreUnreported { store in
                (try await store.count(), try await store.learnedModel(), try await store.learnedVectorCount())
            }
            let matches = report.installedModel?.makesSameVectors(as: report.learnedModel) ?? false
            report.defaultSimilarity = matches ? VisualSearchEngine.defaultLearnedMode : .color
        } catch {
            report.catalogError = CLIError.searchError(error)?.description ?? "\(error)"
        }
        return report
    }

    func printSetup() async {
        let report = await setup()
        if json { Terminal.json(report); return }
        Terminal.out("vsearch   \(report.version)")
        if let error = report.catalogError {
            Terminal.out("catalog   \(report.catalog): \(error)")
        } else {
            Terminal.out("catalog   \(report.catalog): \(Terminal.count(report.images ?? 0, "image"))")
            Terminal.out("vectors   colour" + (report.learnedModel.map { " + learned (\($0.tag), \(report.learnedImages ?? 0) of \(report.images ?? 0) images)" } ?? " only"))
            Terminal.out("default   similarity \(report.defaultSimilarity?.rawValue ?? "color")")
        }
        Terminal.out("model     " + (report.installedModel.map { "\($0.tag), \($0.dimension) floats (`vsearch model info` for the details)" }
                                      ?? report.modelProblem ?? "not installed"))
    }

    struct Report: Encodable {
        var file: String
        var format: String?
        var width: Int?
        var height: Int?
        var orientation: Int?
        var alpha: Bool?
        /// The embedded colour profile's description (converted to sRGB when decoding), if any.
        var profile: String?
        var artist: String?
        var copyright: String?
        var warnings: [String]?
        var ok: Bool
        var error: String?
    }

    func run() async throws {
        guard !files.isEmpty else {
            await printSetup()
            return
        }
        var failures = 0, missing = 0
        for file in files {
            var report = Report(file: file, ok: false)
            do {
                let decoded = try ImageDecoder.decode(fileAt: file, options: DecodingOptions(colorHandling: .keepSourceProfile))
                report.format = decoded.header.format.rawValue
                report.profile = decoded.colorProfile.map { $0.name ?? "unnamed ICC profile (\($0.iccData.count) bytes)" }
                report.artist = decoded.metadata.artist
                report.copyright = decoded.metadata.copyright
                report.warnings = decoded.warnings.isEmpty ? nil : decoded.warnings
                report.width = decoded.pixels.width
                report.height = decoded.pixels.height
                report.orientation = decoded.header.orientation.rawValue
                report.alpha = decoded.header.hasAlpha
                report.ok = true
            } catch {
                report.error = error.description
                failures += 1
                if !FileManager.default.fileExists(atPath: file) { missing += 1 }
            }
            if json {
                // One file: one object, pretty like every other --json; several: one object a line (JSON lines).
                if files.count == 1 { Terminal.json(report) } else { Terminal.jsonLine(report) }
            } else if report.ok {
                Terminal.out("\(file): \(report.format ?? "?") \(report.width ?? 0)×\(report.height ?? 0)"
                    + ", orientation \(report.orientation ?? 1), alpha \(report.alpha == true ? "yes" : "no")"
                    + ", profile \(report.profile.map { "\"\($0)\"" } ?? "none")"
                    + (report.artist.map { ", artist \($0)" } ?? "")
                    + (report.copyright.map { ", © \($0)" } ?? ""))
                for warning in report.warnings ?? [] { Terminal.out("  warning: \(warning)") }
            } else {
                // The error names the file already.
                Terminal.err("error: \(report.error ?? "\(file): unknown error")\n")
            }
        }
        if missing > 0 { throw ExitCodes.noInput }
        if failures > 0 { throw ExitCodes.partialFailure }
    }
}
