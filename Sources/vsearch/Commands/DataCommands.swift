import ArgumentParser
import Foundation
import VisualSearch

/// `vsearch insert|insert-status|remove --endpoint URL`: the data API of a
/// ViSearch service (locally, `vsearch index` and `vsearch catalog remove` do this).
struct InsertCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "insert", abstract: "Add or replace images on a ViSearch service (data API /insert).",
        discussion: """
        Each image is IM_NAME=URL (http(s):// or, for a vsearch serve with --image-root, file://). Metadata \
        fields apply to every image given. Indexing runs on the service; with --wait the command polls \
        /insert/status until it is done. Locally, use `vsearch index`. \
        Exit code 1 when the finished insert failed some images (insert-status says the same).

        Example:
          vsearch insert dress_1=https://cdn.example/dress_1.jpg --field brand=acme \\
            --endpoint http://127.0.0.1:8080 --wait
        """)
    @Argument(help: ArgumentHelp("Images as IM_NAME=URL.", valueName: "im_name=url")) var images: [String]
    @Option(name: .customLong("field"), help: ArgumentHelp("Metadata for every image. Repeatable.", valueName: "field=value")) var fields: [String] = []
    @Flag(help: "Poll /insert/status until indexing is done.") var wait = false
    @Flag(help: "Print the API's JSON responses.") var json = false
    @OptionGroup(title: "Remote") var service: ServiceOptions

    func validate() throws {
        guard service.endpointURL != nil else { throw ValidationError("insert needs --endpoint URL (locally, use `vsearch index`)") }
        _ = try items()
    }

    func items() throws -> [InsertItem] {
        var metadata: [String: String] = [:]
        for field in fields {
            guard let equals = field.firstIndex(of: "="), equals != field.startIndex else { throw ValidationError("--field \(field) is not field=value") }
            metadata[String(field[..<equals])] = String(field[field.index(after: equals)...])
        }
        return try images.map { text in
            guard let equals = text.firstIndex(of: "="), equals != text.startIndex, text.index(after: equals) != text.endIndex else {
                throw ValidationError("\(text) is not IM_NAME=URL")
            }
            return InsertItem(imageName: String(text[..<equals]), imageURL: String(text[text.index(after: equals)...]), metadata: metadata)
        }
    }

    func run() async throws {
        guard let url = service.endpointURL else { throw ExitCodes.usage }
        let client = service.client(endpoint: url)
        do {
            let response = try await client.insert(InsertRequest(items: try items()))
            if json { Terminal.json(response) } else { Terminal.out("insert accepted \(Terminal.count(response.total, "image")): trans_id \(response.transactionID ?? "-")") }
            guard wait, let id = response.transactionID else { return }
            while true {
                let status = try await client.insertStatus(InsertStatusRequest(transactionID: id))
                if let progress = status.result.first, progress.isFinished {
                    if json { Terminal.json(status) } else { InsertStatusCommand.print(progress) }
                    if progress.failCount > 0 { throw ExitCodes.partialFailure }
                    return
                }
                try await Task.sleep(nanoseconds: 500_000_000)
            }
        } catch let error as ExitCode {
            throw error
        } catch {
            throw CLIError.report(error)
        }
    }
}

/// `vsearch insert-status TRANS_ID --endpoint URL`.
struct InsertStatusCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "insert-status", abstract: "Progress of an insert (data API /insert/status/{trans_id}).",
                                                    discussion: "Exit code 1 when the insert has finished and some images failed, as `insert --wait`.")
    @Argument(help: "The trans_id an insert returned.") var transactionID: String
    @Flag(help: "Print the API's JSON response.") var json = false
    @OptionGroup(title: "Remote") var service: ServiceOptions

    func validate() throws {
        guard service.endpointURL != nil else { throw ValidationError("insert-status needs --endpoint URL") }
    }

    func run() async throws {
        guard let url = service.endpointURL else { throw ExitCodes.usage }
        do {
            let status = try await service.client(endpoint: url).insertStatus(InsertStatusRequest(transactionID: transactionID))
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
        for error in progress.errorList { Terminal.err("  \(line(for: error))\n") }
    }

    /// `name: message`, the name once: the service's message may already begin with it.
    static func line(for error: DataAPIError) -> String {
        guard let name = error.imageName else { return error.message }
        return error.message.hasPrefix(name + ":") ? error.message : "\(name): \(error.message)"
    }
}

/// `vsearch remove IM_NAME… --endpoint URL`.
struct RemoveCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove images from a ViSearch service (data API /remove). Locally: `vsearch catalog remove`.")
    @Argument(help: "im_names to remove.") var names: [String]
    @Flag(help: "Print the API's JSON response.") var json = false
    @OptionGroup(title: "Remote") var service: ServiceOptions

    func validate() throws {
        guard service.endpointURL != nil else { throw ValidationError("remove needs --endpoint URL (locally, use `vsearch catalog remove`)") }
        guard !names.isEmpty else { throw ValidationError("give at least one im_name") }
    }

    func run() async throws {
        guard let url = service.endpointURL else { throw ExitCodes.usage }
        do {
            let response = try await service.client(endpoint: url).remove(RemoveRequest(imageNames: names))
            if json { Terminal.json(response) } else { Terminal.out("removed \(response.total) of \(names.count)") }
            if response.total < names.count { throw ExitCodes.partialFailure }
        } catch let error as ExitCode {
            throw error
        } catch {
            throw CLIError.report(error)
        }
    }
}
