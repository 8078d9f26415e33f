import ArgumentParser
import Foundation
import VisualSearch

/// `--catalog`, shared by every catalog command.
struct CatalogOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The catalog file. Default: $VSEARCH_CATALOG, else .vsearch/catalog.sqlite.", valueName: "path"))
    var catalog: String?

    var path: String { catalog ?? Catalog.defaultPath() }

    func open() throws -> Catalog {
        do { return try Catalog(path: path) } catch {
            Terminal.err("error: \(error.description)\n")
            throw ExitCodes.code(for: error)
        }
    }
}

/// The ViSearch query parameters, as flags.
struct QueryOptions: ParsableArguments {
    @Option(name: .customLong("fq"), help: ArgumentHelp("Filter field=value (exact for string, words for text, value or min,max for numbers). Repeatable.", valueName: "field=value"))
    var filters: [String] = []

    @Option(name: .customLong("fl"), help: ArgumentHelp("Metadata field to return. Repeatable.", valueName: "field"))
    var fields: [String] = []

    @Flag(name: .customLong("get-all-fl"), help: "Return every metadata field.")
    var allFields = false

    @Option(help: ArgumentHelp("Field to facet on (* for all). Repeatable.", valueName: "field"))
    var facets: [String] = []

    @Option(name: .customLong("facets-limit"), help: "Values per string facet.")
    var facetsLimit = 10

    @Flag(name: .customLong("facets-show-count"), help: "Show value counts in facets.")
    var facetsShowCount = false

    @Option(help: "Results per page (1...1000).")
    var limit = 10

    @Option(help: "Page number, from 1.")
    var page = 1

    @Option(name: .customLong("score-min"), help: "Keep results scoring at least this (0...1).")
    var scoreMin: Float?

    @Option(name: .customLong("score-max"), help: "Keep results scoring at most this (0...1).")
    var scoreMax: Float?

    @Flag(help: "Drop near-duplicate results.")
    var dedup = false

    @Flag(help: "Print the ViSearch JSON response.")
    var json = false

    @Option(help: ArgumentHelp("Also write a self-contained HTML page of the results.", valueName: "file.html"))
    var html: String?

    func parameters() throws -> SearchParameters {
        var parameters = SearchParameters()
        parameters.page = page
        parameters.limit = limit
        parameters.fields = fields
        parameters.returnsAllFields = allFields
        parameters.facets = facets
        parameters.facetsLimit = facetsLimit
        parameters.facetsShowCount = facetsShowCount
        parameters.scoreMin = scoreMin
        parameters.scoreMax = scoreMax
        parameters.deduplicates = dedup
        parameters.includesScore = true
        do {
            parameters.filters = try filters.map { (text) throws(VisualSearchError) in try Filter(parsing: text) }
            try parameters.validate()
        } catch {
            throw ValidationError(error.message)
        }
        return parameters
    }

    func validate() throws { _ = try parameters() }
}

/// Runs a query — against the local catalog, or with `--endpoint` through
/// the client — and prints it: a table, or JSON; optionally an HTML page.
enum QueryRunner {
    static func run(catalog: CatalogOptions, remote: RemoteOptions, options: QueryOptions, query: String, queryImage: String? = nil,
                    local: (VisualSearchEngine, SearchParameters) throws(VisualSearchError) -> SearchResponse,
                    client: @Sendable (ViSearchClient, SearchParameters) async throws(ClientError) -> SearchResponse) async throws {
        let parameters = try options.parameters()
        let response: SearchResponse
        let source: (String) -> String?
        if let url = remote.endpointURL {
            do {
                response = try await client(ViSearchClient(configuration: remote.configuration(endpoint: url)), parameters)
            } catch {
                if options.json { Terminal.json(SearchResponse(status: .fail, method: "search", error: [error.description], page: 0, limit: 0, total: 0, result: [])) }
                Terminal.err("error: \(error.description)\n")
                throw ExitCodes.code(for: error)
            }
            let urls = Dictionary(response.result.map { ($0.imageName, $0.valueMap?["im_url"]) }, uniquingKeysWith: { first, _ in first })
            source = { urls[$0] ?? nil }
        } else {
            let engine: VisualSearchEngine
            do {
                engine = try VisualSearchEngine(catalog: try catalog.open())
                response = try local(engine, parameters)
            } catch let error as VisualSearchError {
                if options.json { Terminal.json(SearchResponse.failure(method: "search", error: error)) }
                Terminal.err("error: \(error.description)\n")
                throw ExitCodes.code(for: error)
            }
            source = { engine.source(of: $0) }
        }
        if options.json {
            Terminal.json(response)
        } else {
            Terminal.out(ResultTable.render(response, query: query))
        }
        if let html = options.html {
            let page = ResultsPage.render(response, query: query, queryImage: queryImage, source: source)
            do { try FileIO.writeAtomically(Array(page.utf8), to: html) } catch {
                Terminal.err("error: \(error.description)\n")
                throw ExitCodes.ioError
            }
            Terminal.err("wrote \(html)\n")
        }
    }
}

import ImageOps
