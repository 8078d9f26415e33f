import ArgumentParser
import Foundation
import ImageOps
import SearchEngine
import VisualSearch

/// The ViSearch query parameters, as flags, and how the answer is printed.
struct QueryOptions: ParsableArguments {
    @Option(name: .customLong("fq"), help: ArgumentHelp("Filter field:value or field=value (exact for string, words for text, value or min,max for numbers). Repeatable.", valueName: "field:value"))
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

    @Option(help: "Results per page (1...1000). Default 10.")
    var limit: Int?

    @Option(help: "Page number, from 1.")
    var page = 1

    @Option(name: .customLong("score-min"), help: "Keep results scoring at least this (0...1).")
    var scoreMin: Float?

    @Option(name: .customLong("score-max"), help: "Keep results scoring at most this (0...1).")
    var scoreMax: Float?

    @Option(help: ArgumentHelp("What \"alike\" means: visual (a learned model: the same kind of thing), color (the same colours) "
                               + "or fused. Default visual for a catalog indexed with the model installed, else color.",
                               valueName: "visual|color|fused"))
    var similarity: String?

    @Option(help: ArgumentHelp("How the nearest images are found: exact (score every image the filters leave), approximate (the "
                               + "catalog's HNSW index chooses candidates, scored exactly) or auto (exact for small catalogs, selective "
                               + "filters, score ranges and deep pages). Default the catalog's setting (auto). On a SQLite catalog the "
                               + "index is the one `vsearch index`, `vsearch serve` or `vsearch catalog hnsw` saved; without one, exact.",
                               valueName: "auto|exact|approximate"))
    var knn: String?

    @Option(name: .customLong("ef-search"), help: ArgumentHelp("Candidates an approximate search keeps (1...1000): more is slower and "
                                                               + "nearer exact. Default the catalog's setting (100).", valueName: "n"))
    var efSearch: Int?

    @Flag(help: "Drop near-duplicate results from the page (the match count is counted before they are dropped).")
    var dedup = false

    @Flag(help: "Print the API's JSON response (machine output) instead of the table.")
    var json = false

    @Option(help: ArgumentHelp("Also write a self-contained HTML page of the results.", valueName: "file.html"))
    var html: String?

    func parameters() throws -> SearchParameters {
        var parameters = SearchParameters()
        parameters.page = page
        parameters.limit = limit ?? 10
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
            parameters.similarity = try similarity.map { (text) throws(VisualSearchError) in try SimilarityMode(parsing: text) }
            parameters.nearestNeighbours = try knn.map { (text) throws(VisualSearchError) in try NearestNeighbourMode(parsing: text) }
            parameters.efSearch = efSearch
            parameters.filters = try filters.map { (text) throws(VisualSearchError) in try Filter(parsing: text, acceptsEquals: true) }
            try parameters.validate()
        } catch {
            throw ValidationError(error.message)
        }
        return parameters
    }

    func validate() throws { _ = try parameters() }

    /// The parameters, once ``validate()`` has passed.
    var searchParameters: SearchParameters { (try? parameters()) ?? SearchParameters() }
}

/// A query command: asks the service one thing and prints the search answer.
protocol QueryCommand: ServiceCall where Answer == SearchResponse {
    var catalog: CatalogOptions { get }
    var model: ModelOptions { get }
    var options: QueryOptions { get }
    var service: ServiceOptions { get }
    /// What the results page shows as the query.
    var resultsQuery: ResultsPage.Query { get }
}

extension QueryCommand {
    var namedFields: [String] { options.searchParameters.fields + options.searchParameters.facets }

    /// Runs the call locally or remotely and prints the answer.
    func runQuery() async throws {
        try await ServiceRunner.run(self, catalog: catalog, model: model, service: service, json: options.json) { response, engine in
            try await QueryOutput.print(response, query: resultsQuery, options: options, engine: engine)
        }
    }
}

/// Prints a search answer: a table, or the API's JSON; optionally an HTML page.
enum QueryOutput {
    static func print(_ response: SearchResponse, query: ResultsPage.Query, options: QueryOptions, engine: VisualSearchEngine?) async throws {
        if options.json {
            Terminal.json(response)
        } else {
            Terminal.out(ResultTable.render(response, query: query.title, deduplicated: options.dedup))
            // A service's warning (an unknown facet field on a remote catalog) is never silent.
            for message in response.error where response.status == .warning { Terminal.err("warning: \(message)\n") }
        }
        // A learned catalog answered by colour (no model here, or another one) says so on every query, --json or not.
        if let note = response.similarityNote { Terminal.err("warning: \(note)\n") }
        guard let html = options.html else { return }
        let results = response.result + (response.objects ?? []).flatMap(\.result)
        var sources = await engine?.sources(of: results.map(\.imageName)) ?? [:]
        for result in results where sources[result.imageName] == nil {
            if let url = result.valueMap?["im_url"] { sources[result.imageName] = url }
        }
        let page = ResultsPage.render(response, query: query, parameters: try options.parameters(), sources: sources)
        do throws(ImageOpsError) { try FileIO.writeAtomically(Array(page.utf8), to: html) } catch {
            throw CLIError.report(error)
        }
        Terminal.err("wrote \(html)\n")
    }
}
