import ArgumentParser
import Foundation
import ImageOps
import SearchEngine
import Tracking
import VisualSearch

/// `vsearch index IMAGES_DIR`: builds or updates the local catalog — the only command that creates one.
struct IndexCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "index",
        abstract: "Index a folder of images into the local catalog (upsert by im_name); creates the catalog if needed.",
        discussion: """
        im_name is each file's path relative to IMAGES_DIR without its extension; --metadata rows \
        (CSV with a header, or JSON lines) join on an im_name column. Field types are inferred from \
        the metadata (int, float, string, or text for long values) and can be set with --schema. \
        Unchanged images (same content hash) are not decoded again. Batches are committed in \
        transactions: after a crash or kill, every acknowledged batch is kept and a re-run finishes. \
        Progress, "committed N" lines and the summary go to stderr (--quiet: errors only); \
        --json prints the summary to stdout.

        --shard i/n indexes part i (from 0) of the folder split n ways by a stable hash of each \
        file's relative path: n machines (or processes) index one folder into one catalog at once — \
        into PostgreSQL, or into SQLite one after another. Metadata rows are unmatched only when no \
        file of any part has their im_name.

        With the learned similarity model installed (`vsearch model install`), each image also gets \
        its learned vector, from the same decode; the catalog records the model, and indexing with \
        another model recomputes every image. Without it (or with --color-only) only colour vectors \
        are computed, and learned vectors already in the catalog are kept.
        """
    )

    @Argument(help: "The folder of images (searched recursively).") var directory: String
    @OptionGroup var catalog: CatalogOptions
    @OptionGroup var model: ModelOptions
    @Option(help: ArgumentHelp("Metadata: catalog.csv or items.jsonl, with an im_name column.", valueName: "file")) var metadata: String?
    @Option(help: ArgumentHelp("Field types, overriding inference.", valueName: "field:type,...")) var schema: String?
    @Option(name: .customLong("batch-size"), help: "Images per transaction.") var batchSize = 64
    @Option(name: [.customShort("j"), .customLong("jobs")], help: "Decoding threads. Default the number of cores.") var requestedJobs: Int?
    var jobs: Int { requestedJobs ?? ProcessInfo.processInfo.activeProcessorCount }
    @Option(help: Shard.help, transform: Shard.argument) var shard: Shard = .whole
    @Flag(name: .customLong("color-only"), help: "Compute only colour vectors, even with the learned model installed.") var colorOnly = false
    @Flag(help: "Print the summary as JSON on stdout.") var json = false
    @Flag(name: .shortAndLong, help: "Print only errors.") var quiet = false

    func validate() throws {
        guard batchSize >= 1 else { throw ValidationError("--batch-size must be at least 1") }
        guard jobs >= 1 else { throw ValidationError("--jobs must be at least 1") }
        if let schema { do { _ = try FieldSchema(parsing: schema) } catch { throw ValidationError(error.message) } }
    }

    func run() async throws {
        var configuration = Indexer.Configuration()
        configuration.batchSize = batchSize
        configuration.jobs = jobs
        configuration.shard = shard
        let reporter = ProgressReporter(quiet: quiet)
        let quiet = self.quiet
        Interrupt.install()
        let summary: Indexer.Summary
        let location = catalog.location
        // A SQLite catalog this run creates is removed again when the run fails before any image is in it
        // (a --schema naming a field the metadata lacks): no empty catalog is left to answer "Image not found" later.
        var created: (path: String, store: (any CatalogStore & CollectorStore)?)?
        if case .sqlite(let path) = location, !FileManager.default.fileExists(atPath: path) { created = (path, nil) }
        do {
            var excluded: String?
            if case .sqlite(let path) = location { excluded = (path as NSString).deletingLastPathComponent }
            try checkInputs(excluding: excluded ?? "/dev/null")
            let table = try metadata.map { (path) throws(VisualSearchError) in try MetadataTable(contentsOf: path) }
            let overrides = try schema.map { (text) throws(VisualSearchError) in try FieldSchema(parsing: text) } ?? FieldSchema()
            // The model loads (checksum, runtime) before the catalog is opened: a damaged model writes nothing.
            let learned = colorOnly ? nil : try model.learnedEmbedder()
            try learned?.load()
            configuration.features = FeaturePipeline(learned: learned)
            summary = try await catalog.withStoreUnreported(creating: true) { store in
                if created != nil { created?.store = store }
                try await Self.noteModel(learned, catalog: try await store.learnedModel(), colorOnly: colorOnly, quiet: quiet)
                let indexer = Indexer(store: store, configuration: configuration)
                return try await indexer.run(directory: directory, metadata: table, schema: overrides, excluding: excluded,
                                             isCancelled: { Interrupt.isRequested }) { event in
                    switch event {
                    case .started(let total): reporter.begin(total: total, noun: "images")
                    case .image(let name, _, let error, let done, _):
                        reporter.item(completed: done, failed: error != nil, line: error.map { "FAIL  \($0)" } ?? "ok    \(name)")
                    case .unchanged(_, _, let done, _):
                        reporter.item(completed: done, failed: false, line: nil)  // counted in the summary, not listed
                    case .committed(let count):
                        if count > 0 { reporter.note("committed \(count)") }   // a re-run with nothing new commits nothing: no line
                    }
                }
            }
        } catch {
            reporter.end()
            if let created { await Self.removeIfEmpty(created.path, store: created.store) }
            throw CLIError.report(error)
        }
        reporter.end()
        if !summary.unmatchedMetadata.isEmpty {
            let shown = summary.unmatchedMetadata.prefix(5).joined(separator: ", ")
            let count = summary.unmatchedMetadata.count
            Terminal.err("warning: \(Terminal.count(count, "metadata row")) \(count == 1 ? "matches" : "match") no image file "
                + "and \(count == 1 ? "was" : "were") not used"
                + " (\(shown)\(summary.unmatchedMetadata.count > 5 ? ", …" : ""))\n")
        }
        let interrupted = Interrupt.isRequested
        if json {
            Terminal.json(summary)
        } else if !quiet {
            // Failures were printed as they happened (even with --quiet); the summary counts them.
            let done = summary.indexed + summary.unchanged + summary.failed
            let files = interrupted ? "interrupted after \(done) of \(Terminal.count(summary.files, "file"))" : Terminal.count(summary.files, "file")
            Terminal.err("\(files): \(summary.indexed) indexed, \(summary.unchanged) unchanged, \(summary.failed) failed; "
                + "catalog \(location) has \(Terminal.count(summary.catalogCount, "image")) (\(String(format: "%.2f", summary.seconds)) s)\n")
        }
        if interrupted {
            Terminal.err("interrupted: every committed batch is kept; run the same command again to continue\n")
            throw ExitCodes.interrupted
        }
        if case .sqlite(let path) = location, summary.indexed > 0 || GraphFiles(besideCatalog: path).manifest(.color) == nil {
            // The saved HNSW index follows the catalog (built once it is large enough for `auto` to use it).
            _ = try await CatalogCommand.HNSW.update(catalog, quiet: quiet || json, always: false)
        }
        if summary.failed > 0 { throw ExitCodes.partialFailure }
    }

    /// Removes a SQLite catalog this run created (with its `-wal`/`-shm`
    /// files) when it holds no image; one with images is kept.
    static func removeIfEmpty(_ path: String, store: (any CatalogStore & CollectorStore)?) async {
        if let store, (try? await store.count()) != 0 { return }
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }

    /// Says on stderr what the learned vectors will be: none (no model, or
    /// --color-only, when the catalog has some), or recomputed with another model.
    static func noteModel(_ learned: LearnedEmbedder?, catalog recorded: EmbeddingDescriptor?, colorOnly: Bool, quiet: Bool) async throws {
        guard !quiet else { return }
        if let learned {
            if let recorded, !learned.descriptor.makesSameVectors(as: recorded) {
                Terminal.err("note: the catalog's learned vectors were made by \(recorded.tag); every image is recomputed with \(learned.descriptor.tag)\n")
            }
        } else if !colorOnly {
            Terminal.err("note: the learned similarity model is not installed, so only colour vectors are computed"
                + (recorded != nil ? " (the learned vectors already in the catalog are kept)" : "")
                + "; `\(EmbeddingError.installCommand)` adds similarity by what things are\n")
        }
    }

    /// Refuses, before a catalog is opened or created: a missing folder or
    /// metadata file, a folder with no image files, files that differ only in extension.
    func checkInputs(excluding excluded: String) throws(InputError) {
        guard FileManager.default.fileExists(atPath: directory) else { throw .missing(path: directory, role: "IMAGES_DIR") }
        if let metadata, !FileManager.default.fileExists(atPath: metadata) { throw .missing(path: metadata, role: "--metadata") }
        try InputError.checkNotFolder(metadata, role: "--metadata")
        let files = (try? ImageFiles.find(in: directory, excluding: excluded)) ?? []
        if files.isEmpty { throw .noImages(path: directory, outcome: "nothing was indexed and no catalog was created") }
        let groups = ImageFiles.sameNameGroups(files)
        if !groups.isEmpty { throw .sameName(groups: groups) }
    }
}

/// `vsearch catalog stats|remove|export|migrate|backup`.
struct CatalogCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "catalog",
        abstract: "Inspect or change the local catalog.",
        subcommands: [Stats.self, Remove.self, Export.self, Migrate.self, Backup.self, HNSW.self]
    )

    struct Stats: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Images, fields and integrity of the catalog.")
        @OptionGroup var catalog: CatalogOptions
        @OptionGroup var model: ModelOptions
        @Flag(help: "Print JSON.") var json = false

        struct Report: Encodable {
            var location: String
            var images: Int
            var fields: [String: String]
            var integrity: String
            var bytes: Int?
            /// Images whose vectors an older vsearch's features computed: `vsearch index` again recomputes them.
            var staleFeatures: Int
            /// What made the learned vectors; nil for a colour-only catalog.
            var learnedModel: EmbeddingDescriptor?
            /// Images holding a learned vector of that model.
            var learnedImages: Int
            /// Whether the installed model (if any) made the catalog's learned vectors.
            var installedModel: String?

            enum CodingKeys: String, CodingKey {
                case location, images, fields, integrity, bytes
                case staleFeatures = "stale_features", learnedModel = "learned_model", learnedImages = "learned_images"
                case installedModel = "installed_model"
            }
        }

        func run() async throws {
            do {
                try await catalog.withStoreUnreported { store in
                    var bytes: Int?
                    if case .sqlite(let path) = catalog.location {
                        bytes = (try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? Int
                    }
                    let census = try await store.featureCensus()
                    let installed = (try? model.learnedEmbedder()) ?? nil
                    let report = Report(location: catalog.location.description, images: try await store.count(),
                                        fields: try await store.schema().fields.mapValues(\.rawValue),
                                        integrity: try await store.integrityCheck(), bytes: bytes, staleFeatures: census.stale,
                                        learnedModel: try await store.learnedModel(), learnedImages: census.learned,
                                        installedModel: installed?.descriptor.tag)
                    if json { Terminal.json(report); return }
                    Terminal.out("catalog   \(report.location)\nimages    \(report.images)\nbytes     \(report.bytes.map(Terminal.grouped) ?? "-")\nintegrity \(report.integrity)")
                    if let model = report.learnedModel {
                        let matches = installed.map { $0.descriptor.makesSameVectors(as: model) ? " (the installed model)" : " (the installed model is \($0.descriptor.tag): re-index to use it)" }
                            ?? " (not installed here: `\(EmbeddingError.installCommand)`)"
                        Terminal.out("learned   \(report.learnedImages) of \(report.images) images have \(model.dimension)-float vectors of \(model.tag)\(matches)")
                    } else {
                        Terminal.out("learned   none: colour similarity only" + (installed != nil ? "; run `vsearch index` again to add learned vectors" : ""))
                    }
                    if census.stale > 0 {
                        Terminal.out("features  \(census.stale) images indexed by an older vsearch: run `vsearch index` on their folder again to recompute them")
                    }
                    for (name, type) in report.fields.sorted(by: { $0.key < $1.key }) { Terminal.out("field     \(TerminalText.escaped(name)): \(type)") }
                }
            } catch {
                throw CLIError.report(error)
            }
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove images by im_name.")
        @OptionGroup var catalog: CatalogOptions
        @Argument(help: "im_names to remove.") var names: [String]
        @Flag(help: "Print JSON.") var json = false

        func validate() throws {
            guard !names.isEmpty else { throw ValidationError("give at least one im_name") }
        }

        /// The same removal and the same output as `vsearch remove` on the local catalog.
        func run() async throws {
            let response: DataAPIResponse
            do { response = try await catalog.withEngineUnreported(model: nil) { try await $0.remove(RemoveRequest(imageNames: names)) } } catch {
                throw CLIError.report(error)
            }
            try RemoveCommand.report(response, names: names, json: json)
        }
    }

    struct Export: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print every image's im_name and metadata as JSON lines, the form `index --metadata` reads.",
            discussion: """
            One object per image: im_name and each metadata value, int and float fields as JSON numbers. \
            `vsearch catalog export > items.jsonl`, then `vsearch index IMAGES_DIR --metadata items.jsonl` \
            into a new catalog gives the same fields, types and values.
            """)
        @OptionGroup var catalog: CatalogOptions

        func run() async throws {
            let images: [ExportedImage], schema: FieldSchema
            do {
                (schema, images) = try await catalog.withStoreUnreported { store in (try await store.schema(), try await store.export()) }
            } catch { throw CLIError.report(error) }
            for image in images { Terminal.out(MetadataLine.render(image, schema: schema)) }
        }
    }
}
