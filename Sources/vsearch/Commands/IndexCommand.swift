import ArgumentParser
import Foundation
import ImageOps
import VisualSearch

/// `vsearch index IMAGES_DIR`: builds or updates the local catalog.
struct IndexCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "index",
        abstract: "Index a folder of images into the local catalog (upsert by im_name).",
        discussion: """
        im_name is each file's path relative to IMAGES_DIR without its extension; --metadata rows
        (CSV with a header, or JSON lines) join on an im_name column. Field types are inferred from
        the metadata (int, float, string, or text for long values) and can be set with --schema.
        Unchanged images (same content hash) are not decoded again. Batches are committed in
        transactions: after a crash or kill, every acknowledged batch is kept and a re-run finishes.
        Without --json, a line "committed N" follows each durable batch.
        """
    )

    @Argument(help: "The folder of images (searched recursively).") var directory: String
    @OptionGroup var catalog: CatalogOptions
    @Option(help: ArgumentHelp("Metadata: catalog.csv or items.jsonl, with an im_name column.", valueName: "file")) var metadata: String?
    @Option(help: ArgumentHelp("Field types, overriding inference.", valueName: "field:type,...")) var schema: String?
    @Option(name: .customLong("batch-size"), help: "Images per transaction.") var batchSize = 64
    @Option(name: .shortAndLong, help: "Decoding threads. Default: the number of cores.") var jobs = ProcessInfo.processInfo.activeProcessorCount
    @Flag(help: "Print the summary as JSON.") var json = false

    func validate() throws {
        guard batchSize >= 1 else { throw ValidationError("--batch-size must be at least 1") }
        guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
        if let schema { do { _ = try FieldSchema(parsing: schema) } catch { throw ValidationError(error.message) } }
    }

    func run() throws {
        var configuration = Indexer.Configuration()
        configuration.batchSize = batchSize
        configuration.jobs = jobs
        let reporter = ProgressReporter()
        let json = self.json
        Interrupt.install()
        let summary: Indexer.Summary
        do {
            let table = try metadata.map { (path) throws(VisualSearchError) in try MetadataTable(contentsOf: path) }
            let overrides = try schema.map { (text) throws(VisualSearchError) in try FieldSchema(parsing: text) } ?? FieldSchema()
            let indexer = Indexer(catalog: try catalog.open(), configuration: configuration)
            summary = try indexer.run(directory: directory, metadata: table, schema: overrides,
                                      isCancelled: { Interrupt.isRequested }) { event in
                switch event {
                case .started(let total): reporter.begin(total: total, noun: "images")
                case .file(let name, let error, let done, _):
                    reporter.item(completed: done, failed: error != nil, line: error.map { "FAIL  \($0)" } ?? "ok    \(name)")
                case .committed(let count):
                    if !json { Terminal.out("committed \(count)") }
                }
            }
        } catch let error as VisualSearchError {
            reporter.end()
            Terminal.err("error: \(error.description)\n")
            throw ExitCodes.code(for: error)
        }
        reporter.end()
        if json {
            Terminal.json(summary)
        } else {
            Terminal.out("\(summary.files) files: \(summary.indexed) indexed, \(summary.unchanged) unchanged, \(summary.failed) failed; "
                + "catalog \(catalog.path) has \(summary.catalogCount) images (\(String(format: "%.2f", summary.seconds)) s)")
            for failure in summary.failures { Terminal.err("  \(failure)\n") }
        }
        if Interrupt.isRequested { throw ExitCodes.interrupted }
        if summary.failed > 0 { throw ExitCodes.partialFailure }
    }
}

/// `vsearch catalog stats|remove|export`.
struct CatalogCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "catalog",
        abstract: "Inspect or change the local catalog.",
        subcommands: [Stats.self, Remove.self, Export.self]
    )

    struct Stats: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Images, fields and integrity of the catalog.")
        @OptionGroup var catalog: CatalogOptions
        @Flag(help: "Print JSON.") var json = false

        struct Report: Encodable {
            var path: String
            var images: Int
            var fields: [String: String]
            var integrity: String
            var bytes: Int
        }

        func run() throws {
            do {
                let opened = try catalog.open()
                let size = (try? FileManager.default.attributesOfItem(atPath: opened.path)[.size] as? Int) ?? 0
                let report = Report(path: opened.path, images: try opened.count(),
                                    fields: try opened.schema().fields.mapValues(\.rawValue),
                                    integrity: try opened.integrityCheck(), bytes: size ?? 0)
                if json { Terminal.json(report); return }
                Terminal.out("catalog   \(report.path)\nimages    \(report.images)\nbytes     \(Terminal.grouped(report.bytes))\nintegrity \(report.integrity)")
                for (name, type) in report.fields.sorted(by: { $0.key < $1.key }) { Terminal.out("field     \(name): \(type)") }
            } catch let error as VisualSearchError {
                Terminal.err("error: \(error.description)\n")
                throw ExitCodes.code(for: error)
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove images by im_name.")
        @OptionGroup var catalog: CatalogOptions
        @Argument(help: "im_names to remove.") var names: [String]

        func run() throws {
            do {
                let removed = try catalog.open().remove(names)
                Terminal.out("removed \(removed) of \(names.count)")
                if removed < names.count { throw ExitCodes.partialFailure }
            } catch let error as VisualSearchError {
                Terminal.err("error: \(error.description)\n")
                throw ExitCodes.code(for: error)
            }
        }
    }

    struct Export: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print every image and its metadata as JSON lines.")
        @OptionGroup var catalog: CatalogOptions

        func run() throws {
            do {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
                for row in try catalog.open().export() {
                    var object = row.metadata
                    object["im_name"] = row.name
                    object["source"] = row.source
                    object["width"] = String(row.width)
                    object["height"] = String(row.height)
                    if let data = try? encoder.encode(object) { Terminal.out(String(decoding: data, as: UTF8.self)) }
                }
            } catch let error as VisualSearchError {
                Terminal.err("error: \(error.description)\n")
                throw ExitCodes.code(for: error)
            }
        }
    }
}
