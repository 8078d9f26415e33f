import ArgumentParser
import Foundation
import VisualSearch

/// `vsearch insert|insert-status|remove`: the data API, on a ViSearch
/// service (`--endpoint URL`) or on the local catalog (`--catalog`), answered
/// by the same code either way: a ``VisualSearchService``.
struct InsertCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "insert", abstract: "Add or replace images on a ViSearch service (data API /insert).",
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
    @Option(name: .customLong("field"), help: ArgumentHelp("Metadata for every image. Repeatable.", valueName: "field=value")) var fields: [String] = []
    @Flag(help: "With --endpoint: poll /insert/status until indexing is done (a local insert always ends with its work).") var wait = false
    @Flag(help: "Print the API's JSON responses.") var json = false
    @OptionGroup(title: "Local catalog") var catalog: CatalogOptions
    @OptionGroup(title: "Remote") var service: ServiceOptions

    func validate() throws {
        _ = try items()
    }

    /// The images to insert; with `local`, a relative path is read from the working directory.
    func items(local: Bool = false) throws -> [InsertItem] {
        var metadata: [String: String] = [:]
        for field in fields {
            guard let equals = field.firstIndex(of: "="), equals != field.startIndex else { throw ValidationError("--field \(field) is not field=value") }
            metadata[String(field[..<equals])] = String(field[field.index(after: equals)...])
        }
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
                let engine = try await catalog.engine()
                try await insert(into: engine, items: try items(local: true), waits: true) { await engine.finishInserts() }
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
                try await catalog.engine().insertStatus(request)
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
                try await catalog.engine().remove(request)
            }
            if json { Terminal.json(response) } else { Terminal.out("removed \(response.total) of \(names.count)") }
            if response.total < names.count { throw ExitCodes.partialFailure }
        } catch let error as ExitCode {
            throw error
        } catch {
            throw CLIError.report(error)
        }
    }
}
