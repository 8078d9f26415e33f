import ArgumentParser
import CatalogStores
import Foundation
import SearchEngine
import VisualSearch

extension CatalogCommand {
    /// `vsearch catalog hnsw`: builds, catches up and saves a SQLite catalog's HNSW index.
    struct HNSW: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "hnsw",
            abstract: "Build or catch up the SQLite catalog's HNSW index (approximate k-NN) and save it beside the catalog.",
            discussion: """
                The embedded catalog answers a query by scanning every image — exact, and about 50 ms a query at \
                a million images. Its HNSW index (hnswlib) finds the likely nearest in about a millisecond; the \
                engine scores those exactly. `--knn auto` (the default) uses it above 1000 images; see \
                `vsearch serve --help` (--knn, --ef-search, --exact-below) and the README's scaling section.

                The index is saved in CATALOG.hnsw/ (a graph file and a manifest per vector space: colour, and \
                learned when the catalog has a model) with the catalog version it reflects, its size and its \
                CRC-32. `vsearch index` and `vsearch serve` keep it up to date themselves (a server builds a \
                missing one at start); this command is for building one ahead of time, after a bulk load, or \
                from scratch (--rebuild: removals leave holes in a graph until it is rebuilt).

                Whatever the saved index's version, it is compared with the catalog row by row before it \
                answers: what changed is added or removed; a damaged file (size, checksum, structure) is rebuilt.

                Examples:
                  vsearch catalog hnsw
                  vsearch catalog hnsw --catalog shop.sqlite --rebuild --threads 2 --json
                """)

        @OptionGroup var catalog: CatalogOptions
        @Flag(help: "Delete the saved index and build it from scratch.") var rebuild = false
        @Option(help: "Threads adding vectors (default: the processor count).") var threads = ProcessInfo.processInfo.activeProcessorCount
        @Flag(help: "Print the report as JSON on stdout.") var json = false

        func validate() throws {
            guard threads >= 1 else { throw ValidationError("--threads \(threads) is below 1") }
            if case .postgreSQL = catalog.location {
                throw ValidationError("a PostgreSQL catalog keeps its HNSW index in the database (pgvector, made by `vsearch index`); "
                                      + "this command builds the embedded (SQLite) catalog's")
            }
        }

        struct Report: Encodable {
            var catalog: String
            var directory: String
            var kernel: String
            var seconds: Double
            var spaces: [Space]

            struct Space: Encodable {
                var space: String
                var count: Int
                var built: Bool
                var loaded: Bool
                var added: Int
                var replaced: Int
                var removed: Int
                var memoryBytes: Int
                var fileBytes: UInt64?
                var seconds: Double
                /// Why the saved index was not used (and rebuilt), when it was not.
                var unusable: String?
                enum CodingKeys: String, CodingKey {
                    case space, count, built, loaded, added, replaced, removed, seconds, unusable
                    case memoryBytes = "memory_bytes", fileBytes = "file_bytes"
                }
            }
        }

        func run() async throws {
            Interrupt.install()
            let started = ContinuousClock.now
            let (spaces, files) = try await Self.update(catalog, rebuild: rebuild, threads: threads, quiet: json, always: true)
            let report = Report(catalog: catalog.location.description, directory: files.directory, kernel: HNSWGraph.kernel,
                                seconds: DebugCommand.seconds(since: started), spaces: spaces.map { space in
                Report.Space(space: space.space.fileName, count: space.count, built: space.built, loaded: space.loaded,
                             added: space.added, replaced: space.replaced, removed: space.removed, memoryBytes: space.memoryBytes,
                             fileBytes: files.fileBytes(space.space), seconds: space.seconds, unusable: space.unusable)
            })
            if json {
                Terminal.json(report)
            } else {
                Terminal.err("saved in \(files.directory) (\(String(format: "%.1f", report.seconds)) s, \(report.kernel) kernel)\n")
            }
        }

        /// Brings a SQLite catalog's saved HNSW index up to date (building what is missing) and saves it:
        /// for this command (`always`), and after `vsearch index` when the catalog is large enough for
        /// `auto` to use an index or already has one saved. Returns what each space's update did.
        static func update(_ catalog: CatalogOptions, rebuild: Bool = false, threads: Int = ProcessInfo.processInfo.activeProcessorCount,
                           quiet: Bool, always: Bool) async throws -> ([ApproximateIndex.Report.Space], GraphFiles) {
            let reports = Reports()
            var configuration = VisualSearchEngine.Configuration()
            configuration.nearestNeighbours.mode = .approximate  // wanted whatever the catalog's size
            configuration.graphPolicy = ApproximateIndex.Policy(builds: true, saves: true)
            configuration.graphPolicy.threads = threads
            configuration.graphPolicy.progress = quiet ? nil : GraphReporting.progress()
            configuration.graphReports = { reports.record($0) }
            let engineConfiguration = configuration
            // Where the graphs are, and whether they were brought up to date; nil for a catalog that keeps none.
            let outcome: (files: GraphFiles, updated: Bool)?
            do {
                outcome = try await catalog.location.withCatalog { opened in
                    guard let files = opened.graphFiles else { return nil }
                    if !always {
                        let size = (try? await opened.store.count()) ?? 0
                        guard size > NearestNeighbourSettings().exactBelow || files.manifest(.color) != nil else { return (files, false) }
                    }
                    if rebuild { files.removeAll() }
                    let engine = try await opened.engine(configuration: engineConfiguration)
                    try await engine.saveGraphs()
                    return (files, true)
                }
            } catch {
                throw CLIError.report(error)
            }
            guard let outcome else { return ([], GraphFiles(directory: "")) }
            let files = outcome.files
            guard outcome.updated else { return ([], files) }
            switch reports.last {
            case .failure(let error):
                if error.kind == .cancelled {
                    Terminal.err("interrupted: the HNSW index was not saved; run the same command again\n")
                    throw ExitCodes.interrupted
                }
                Terminal.err("error: the HNSW index could not be built: \(error.message)\n")
                throw error.kind == .noMemory ? ExitCodes.unavailable : ExitCodes.ioError
            case .success(let report):
                if !quiet { for line in GraphReporting.lines(.success(report), verbose: true) { Terminal.err(line + "\n") } }
                return (report.spaces, files)
            case nil:
                return ([], files)
            }
        }

        /// The engine's last graph report.
        final class Reports: @unchecked Sendable {
            let lock = NSLock()
            var stored: Result<ApproximateIndex.Report, HNSWGraphError>?
            func record(_ result: Result<ApproximateIndex.Report, HNSWGraphError>) { lock.withLock { stored = result } }
            var last: Result<ApproximateIndex.Report, HNSWGraphError>? { lock.withLock { stored } }
        }
    }
}
