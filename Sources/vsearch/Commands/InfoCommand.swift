import ArgumentParser
import Foundation
import ImageOps

/// `vsearch info FILE...`: what each file is and whether it decodes.
struct InfoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "info",
        abstract: "Show each image's format, size and orientation, and whether it decodes.",
        discussion: """
        The format is recognised from the file's bytes, not its name. Each file's line gives its format, size, \
        orientation, alpha (yes or no), colour profile (or none), artist and copyright when present, and any \
        decoding warnings; --json gives the same as JSON lines. Errors go to stderr. Exit code 66 when a file \
        does not exist, else 1 when any file fails to decode.
        """
    )

    @Argument(help: "Image files.")
    var files: [String]

    @Flag(help: "Print JSON lines, one per file.")
    var json = false

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

    func run() throws {
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
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                if let data = try? encoder.encode(report) { Terminal.out(String(decoding: data, as: UTF8.self)) }
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
