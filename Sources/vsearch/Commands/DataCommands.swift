import ArgumentParser
import Foundation
import SearchEngine
import VisualSearch

/// `vsearch insert|insert-status|remove`: the data API, on a ViSearch
/// service (`--endpoint URL`) or on the local catalog (`--catalog`), answered
/// by the same code either way: a ``VisualSearchService``.
struct InsertCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "insert", abstract: "Add or replace images (data API /insert) on a ViSearch service (--endpoint) or the local catalog.",
        discussion: """
        Each image is IM_NAME=URL (http(s)://, file:// or, on the local catalog, a path). Metadata \
        fields apply to every image given. With --endpoint, indexing runs on the service and --wait polls \
        /insert/status until it is done; on the local catalog (--catalog, the default) the command indexes \
        the images itself and ends when they are committed. A folder of images is quicker with `vsearch index`. \
        Exit code 1 when the finished insert failed some images (insert-status says the same).

        Examples:
          vsearch insert dress_1=https://cdn.example/dress_1.jpg --field brand=acme \\
            --endpoint http://127.0.0.1:8080 --wait
          vsearch insert dress_2=photos/dress_2.jpg --catalog shop.sqlite
        """)
    @Argument(help: ArgumentHelp("Images as IM_NAME=URL.", valueName: "im_name=url")) var images: [String]
    @Option(name: .customLong("field"), help: ArgumentHelp("Metadata for every image. Repeatable. On the local catalog the field must be "
                                                           + "declared: by an earlier `vsearch index`, or with --schema.", valueName: "field=value"))
    var fields: [String] = []
    @Option(help: ArgumentHelp("Local catalog: declare new fields before inserting (as `vsearch index --schema`). A --field the catalog "
                               + "does not declare is refused, as fq, fl and facets refuse one.", valueName: "field:type,..."))
    var schema: String?
    @Flag(help: "With --endpoint: poll /insert/status until indexing is done (a local insert always ends with its work).") var wait = false
    @Flag(help: "Print the API's JSON responses.") var json = false
    @OptionGroup(title: "Local catalog") var catalog: CatalogOptions
    @OptionGroup(title: "Learned model") var model: ModelOptions
    @OptionGroup(title: "Remote") var service: ServiceOptions

    func validate() throws {
        _ = try items()
        if let schema {
            guard service.endpointURL == nil else {
                throw ValidationError("--schema declares fields of the local catalog; a ViSearch service's fields are set on the service")
            }
            do { _ = try FieldSchema(parsing: schema) } catch { throw ValidationError(error.message) }
        }
    }

    /// The local catalog's schema with --schema's fields declared; every --field must be in it (a typo is not a new field).
    func declareFields(in engine: VisualSearchEngine) async throws {
        let stored = try await engine.catalog.schema()
        let declared = try schema.map { (text) throws(VisualSearchError) in try FieldSchema(parsing: text) } ?? FieldSchema()
        let named = Set(try fieldValues().keys)
        if let unknown = named.sorted().first(where: { stored.fields[$0] == nil && declared.fields[$0] == nil }) {
            let known = stored.fields.keys.sorted()
            throw VisualSearchError.invalidParameter(name: "field", reason: "\(unknown) is not a field of this catalog ("
                + (known.isEmpty ? "it declares none" : "it declares \(known.joined(separator: ", "))")
                + "); check the spelling, or declare it: --schema \(unknown):string (or text, int, float)")
        }
        if !declared.fields.isEmpty { try await engine.catalog.declare(declared) }
    }

    /// --field's values by field name: one parse for the fields declared and the items inserted.
    func fieldValues() throws -> [String: String] {
        var metadata: [String: String] = [:]
        for field in fields {
            guard let equals = field.firstIndex(of: "="), equals != field.startIndex else { throw ValidationError("--field \(field) is not field=value") }
            metadata[String(field[..<equals])] = String(field[field.index(after: equals)...])
        }
        return metadata
    }

    /// The images to insert; with `local`, a relative path is read from the working directory.
    func items(local: Bool = false) throws -> [InsertItem] {
        let metadata = try fieldValues()
        return try images.map { text in
            guard let equals = text.firstIndex(of: "="), equals != text.startIndex, text.index(after: equals) != text.endIndex else {
                throw ValidationError("\(text) is not IM_NAME=URL")
            }
            var source = String(text[text.index(after: equals)...])
            if local && !source.contains("://") && !source.hasPrefix("/") {
                source = FileManager.default.currentDirectoryPath + "/" + source
            }
            return InsertItem(imageName: String(text[..<equals]), imageURL: source, metadata: metadata)
        }
    }

    func run() async throws {
        do {
            if let url = service.endpointURL {
                try await insert(into: service.client(endpoint: url), items: try items(), waits: wait)
            } else {
                try await catalog.withEngineUnreported(model: model) { engine in
                    try await declareFields(in: engine)
                    // The command owns the engine's inserts while it waits for its own.
                    try await engine.withInserts { () async throws in
                        try await insert(into: engine, items: try items(local: true), waits: true) { await engine.finishInserts() }
                    }
                }
            }
        } catch let error as ExitCode {
            throw error
        } catch {
            throw CLIError.report(error)
        }
    }

    /// Sends the insert to `service`; when `waits`, reports its end (after
    /// `finished`, or polling the status every half second).
    func insert<Service: VisualSearchService>(into service: Service, items: [InsertItem], waits: Bool,
                                               finished: (() async -> Void)? = nil) async throws {
        let response = try await service.insert(InsertRequest(items: items))
        if json && !waits { Terminal.json(response) }
        if !json { Terminal.out("insert accepted \(Terminal.count(response.total, "image")): trans_id \(response.transactionID ?? "-")") }
        guard waits, let id = response.transactionID else { return }
        await finished?()
        while true {
            let status = try await service.insertStatus(InsertStatusRequest(transactionID: id))
            if let progress = status.result.first, progress.isFinished {
                if json { Terminal.json(status) } else { InsertStatusCommand.print(progress) }
                if progress.failCount > 0 { throw ExitCodes.partialFailure }
                return
            }
            try await Task.sleep(for: .milliseconds(500))
        }
    }
}

/// `vsearch insert-status TRANS_ID`: from the service, or from the local catalog's insert journal.
struct InsertStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "insert-status", abstract: "Progress of an insert (data API /insert/status/{trans_id}).",
                                                    discussion: "Exit code 1 when the insert has finished and some images failed, as `insert --wait`.")
    @Argument(help: "The trans_id an insert returned.") var transactionID: String
    @Flag(help: "Print the API's JSON response.") var json = false
    @OptionGroup(title: "Local catalog") var catalog: CatalogOptions
    @OptionGroup(title: "Remote") var service: ServiceOptions

    func run() async throws {
        do {
            let request = InsertStatusRequest(transactionID: transactionID)
            let status = if let url = service.endpointURL {
                try await service.client(endpoint: url).insertStatus(request)
            } else {
                try await catalog.withEngineUnreported(model: nil) { try await $0.insertStatus(request) }
            }
            if json { Terminal.json(status) } else { for progress in status.result { Self.print(progress) } }
            // The same rule as `insert --wait`: a finished insert with failed images exits 1.
            if status.result.contains(where: { $0.isFinished && $0.failCount > 0 }) { throw ExitCodes.partialFailure }
        } catch let error as ExitCode {
            throw error
        } catch {
            throw CLIError.report(error)
        }
    }

    static func print(_ progress: InsertStatusResponse.Progress) {
        Terminal.out("trans_id \(progress.transactionID): \(progress.processedPercent)% of \(progress.total), "
            + "\(progress.successCount) indexed, \(progress.failCount) failed")
        for error in progress.errorList { Terminal.err("  \(TerminalText.escaped(line(for: error)))\n") }
    }

    /// `name: message`, the name once: the service's message may already begin with it.
    static func line(for error: DataAPIError) -> String {
        guard let name = error.imageName else { return error.message }
        return error.message.hasPrefix(name + ":") ? error.message : "\(name): \(error.message)"
    }
}

/// `vsearch remove IM_NAME…`: on the service, or on the local catalog.
struct RemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove images (data API /remove) from a ViSearch service (--endpoint) or the local catalog.")
    @Argument(help: "im_names to remove.") var names: [String]
    @Flag(help: "Print the API's JSON response.") var json = false
    @OptionGroup(title: "Local catalog") var catalog: CatalogOptions
    @OptionGroup(title: "Remote") var service: ServiceOptions

    func validate() throws {
        guard !names.isEmpty else { throw ValidationError("give at least one im_name") }
    }

    func run() async throws {
        do {
            let request = RemoveRequest(imageNames: names)
            let response = if let url = service.endpointURL {
                try await service.client(endpoint: url).remove(request)
            } else {
                try await catalog.withEngineUnreported(model: nil) { try await $0.remove(request) }
            }
            try Self.report(response, names: names, json: json)
        } catch let error as ExitCode {
            throw error
        } catch {
            throw CLIError.report(error)
        }
    }

    /// What `remove` and `catalog remove` print: the API's JSON, or `removed N of M` and the names the catalog did
    /// not have; exit 1 when any was not removed.
    static func report(_ response: DataAPIResponse, names: [String], json: Bool) throws {
        if json {
            Terminal.json(response)
        } else {
            Terminal.out("removed \(response.total) of \(names.count)")
            let missing = response.error.compactMap(\.imageName)
            if !missing.isEmpty { Terminal.err("error: not in the catalog: \(missing.map { TerminalText.escaped($0) }.joined(separator: ", "))\n") }
        }
        if response.total < names.count { throw ExitCodes.partialFailure }
    }
}
