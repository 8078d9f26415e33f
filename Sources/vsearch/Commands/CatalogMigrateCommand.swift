import ArgumentParser
import Foundation
import SearchEngine
import VisualSearch
import CatalogStores

extension CatalogCommand {
    /// `vsearch catalog migrate FROM TO`: a catalog copied between SQLite and PostgreSQL.
    struct Migrate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Copy a catalog to another store (SQLite ⇄ PostgreSQL), then verify the copy.",
            discussion: """
                Copies the declared fields, every image (vector, palette, source, size, content hash, metadata) \
                and the collector's events, in batches of one transaction each, then checks counts and content \
                hashes on both sides. FROM must exist; TO is created when missing, and may hold a part of this \
                same catalog (an interrupted migrate is simply run again), but not other images. \
                The PostgreSQL password comes from the URL, $PGPASSWORD or ~/.pgpass and is never printed.

                FROM may be in use meanwhile (`vsearch serve`, `vsearch index`): every read of it comes from \
                one snapshot — one SQLite read transaction, or one PostgreSQL REPEATABLE READ transaction — \
                so the copy is the catalog as it was when the migrate began; what is written to FROM later \
                is not in it (run migrate again to add it). TO should not be written to until it ends.

                Example:
                  vsearch catalog migrate .vsearch/catalog.sqlite postgresql://db:5432/shop
                """)

        @Argument(help: ArgumentHelp("The catalog to copy: a SQLite file or a postgresql:// URL.", valueName: "from"))
        var from: String
        @Argument(help: ArgumentHelp("Where to copy it: a SQLite file or a postgresql:// URL.", valueName: "to"))
        var to: String
        @Option(help: "Images per transaction on the target.") var batchSize = 500
        @Flag(help: "Print the summary as JSON.") var json = false
        @Flag(help: "Print only errors.") var quiet = false

        func validate() throws {
            guard CatalogLocation(parsing: from) != CatalogLocation(parsing: to) else {
                throw ValidationError("FROM and TO are the same catalog")
            }
            guard (1...10_000).contains(batchSize) else { throw ValidationError("--batch-size must be 1 to 10000") }
        }

        func run() async throws {
            let progress = ProgressReporter(quiet: quiet || json)
            do {
                let batchSize = batchSize
                // Both catalogs open for the copy's length (a database's pool runs in its scope).
                let summary = try await CatalogLocation(parsing: from).withCatalog { source in
                    try await CatalogLocation(parsing: to).withCatalog(creating: true) { destination in
                        let target = destination.store
                        return try await source.withSnapshot { snapshot throws(CatalogStoreError) in
                            var copy = CatalogCopy(from: snapshot, to: target)
                            copy.batchSize = batchSize
                            var begun = false
                            return try await copy.run { done, total in
                                if !begun { progress.begin(total: total, noun: "images"); begun = true }
                                progress.item(completed: done, failed: false, line: "copied \(done) of \(total)")
                            }
                        }
                    }
                }
                progress.end()
                if json { Terminal.json(summary); return }
                Terminal.out("copied \(Terminal.count(summary.images, "image")), \(Terminal.count(summary.values, "metadata value")), \(Terminal.count(summary.fields, "field")) and "
                             + "\(summary.events) events from \(summary.from) to \(summary.to) "
                             + "(\(String(format: "%.1f", summary.seconds)) s); verified: counts and content hashes match")
            } catch {
                progress.end()
                throw CLIError.report(error)
            }
        }
    }
}
