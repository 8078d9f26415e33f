import ArgumentParser
import Foundation
import ImageOps
import SearchEngine
import VisualSearch

/// The query image flags shared by upload, discover and ProductSearch commands:
/// one of `--image`, `--im-url`, `--im-id`, and an optional `--box`.
struct ImageQueryOptions: ParsableArguments {
    @Option(help: "The query image file (prepared as the SDKs upload it: 512 px, JPEG 0.97).") var image: String?
    @Option(name: .customLong("im-url"), help: "The query image URL (http(s):// or file://), fetched by the service.") var imageURL: String?
    @Option(name: .customLong("url"), help: .hidden) var legacyURL: String?
    @Option(name: .customLong("im-id"), help: "An im_id from an earlier upload search.") var imageID: String?
    @Option(help: ArgumentHelp("Search inside this box of the query image (a zero-size box is a point).", valueName: "x1,y1,x2,y2"))
    var box: String?

    func validate() throws {
        if legacyURL != nil { Deprecation.warn("--url", instead: "--im-url") }
        guard [image, imageURL ?? legacyURL, imageID].compactMap({ $0 }).count == 1 else {
            throw ValidationError("give exactly one of --image FILE, --im-url URL or --im-id ID")
        }
        if let box { do { _ = try PixelBox(parsing: box) } catch { throw ValidationError(error.description) } }
    }

    var query: ImageQuery {
        let source: QueryImage = image.map { .file($0) } ?? (imageURL ?? legacyURL).map { .url($0) } ?? .imageID(imageID ?? "")
        return ImageQuery(source, box: box.flatMap { try? PixelBox(parsing: $0) })
    }

    var title: String { image ?? imageURL ?? legacyURL ?? imageID ?? "" }

    /// Refuses a missing `--image` file before anything is sent (exit 66, as for any missing input).
    func checkFile() throws {
        do { try InputError.checkNotFolder(image, role: "--image") } catch { throw CLIError.report(error) }
        guard let image, !FileManager.default.isReadableFile(atPath: image) else { return }
        Terminal.err("error: --image \(image): no such readable file\n")
        throw ExitCodes.noInput
    }
}

/// `vsearch search --image FILE`: upload search.
struct SearchCommand: AsyncParsableCommand, QueryCommand {
    typealias Answer = SearchResponse
    static let method = "uploadsearch"
    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Search with an image (ViSearch /uploadsearch).",
        discussion: """
        The query is --image FILE, --im-url URL or --im-id ID (returned by an earlier search). --box x1,y1,x2,y2 \
        searches inside a box of the query image; a zero-size box is a point: its neighbourhood is searched \
        (with --detection, the object under it).
        --detection all detects the objects of the image (the learned model's detector), lists them (type, \
        score, box) and searches the best one; --detection TYPE (e.g. bag, shoe, dress) searches the best \
        object of that type, or the whole image when there is none. `vsearch discover` searches every object.
        Examples:
          vsearch search --image photo.jpg --fq category:food --fl brand --facets brand
          vsearch search --image look.jpg --detection bag
        """
    )

    @OptionGroup var catalog: CatalogOptions
    @OptionGroup var model: ModelOptions
    @OptionGroup var image: ImageQueryOptions
    @Option(help: ArgumentHelp("Detect objects: all (search the best one) or a product type (search the best of that type).",
                               valueName: "all|type"))
    var detection: String?
    @OptionGroup var options: QueryOptions
    @OptionGroup(title: "Remote") var service: ServiceOptions

    func validate() throws {
        if let detection, detection.trimmingCharacters(in: .whitespaces).isEmpty {
            throw ValidationError("--detection takes all or a product type, e.g. --detection bag")
        }
    }

    func call<Service: VisualSearchService>(_ service: Service) async throws(Service.Failure) -> SearchResponse {
        var parameters = options.searchParameters
        if let detection { parameters.detection = detection.trimmingCharacters(in: .whitespaces) }
        return try await service.uploadSearch(UploadSearchRequest(image.query, parameters: parameters))
    }

    var resultsQuery: ResultsPage.Query { ResultsPage.Query(title: image.title, imageFile: image.image, box: image.query.box) }

    func run() async throws {
        try image.checkFile()
        try await runQuery()
    }
}

/// `vsearch similar IM_NAME`.
struct SimilarCommand: AsyncParsableCommand, QueryCommand {
    typealias Answer = SearchResponse
    static let method = "search"
    static let configuration = CommandConfiguration(commandName: "similar", abstract: "Find images similar to a catalog image (ViSearch /search).")
    @OptionGroup var catalog: CatalogOptions
    @OptionGroup var model: ModelOptions
    @Argument(help: "The im_name of a catalog image.") var imageName: String
    @OptionGroup var options: QueryOptions
    @OptionGroup(title: "Remote") var service: ServiceOptions

    func call<Service: VisualSearchService>(_ service: Service) async throws(Service.Failure) -> SearchResponse {
        try await service.search(SearchRequest(imageName: imageName, parameters: options.searchParameters))
    }

    var resultsQuery: ResultsPage.Query { ResultsPage.Query(title: imageName, catalogImage: imageName) }

    func run() async throws {
        try await runQuery()
    }
}

/// `vsearch recommend IM_NAME`.
struct RecommendCommand: AsyncParsableCommand, QueryCommand {
    typealias Answer = SearchResponse
    static let method = "recommendations"
    static let configuration = CommandConfiguration(
        commandName: "recommend",
        abstract: "Recommendations for a catalog image: similar items, itself excluded, deduplicated (ViSearch /recommendations).",
        discussion: """
        Locally, visual similarity is blended with what shoppers did (the events `vsearch serve` collected in the \
        catalog): items clicked, carted or bought after the same queries or in the same sessions, and popularity. \
        With no events the answer is visual similarity alone. With --endpoint the service decides.
        Example:
          vsearch recommend chelsea_cat --engagement-weight 0.3
        """
    )
    @OptionGroup var catalog: CatalogOptions
    @OptionGroup var model: ModelOptions
    @Argument(help: "The im_name (product id) of a catalog image.") var imageName: String
    @OptionGroup var options: QueryOptions
    @OptionGroup(title: "Blending with events") var blending: RecommendationOptions
    @OptionGroup(title: "Remote") var service: ServiceOptions

    func call<Service: VisualSearchService>(_ service: Service) async throws(Service.Failure) -> SearchResponse {
        try await service.recommendations(RecommendationsRequest(imageName: imageName, parameters: options.searchParameters))
    }

    var resultsQuery: ResultsPage.Query { ResultsPage.Query(title: imageName, catalogImage: imageName) }

    var recommendationBlend: RecommendationBlend { blending.blend }

    func run() async throws {
        try await runQuery()
    }
}

/// `vsearch color HEX`.
struct ColorCommand: AsyncParsableCommand, QueryCommand {
    typealias Answer = SearchResponse
    static let method = "colorsearch"
    static let configuration = CommandConfiguration(commandName: "color", abstract: "Find images by colour: ranked by how much of each image is near it (ViSearch /colorsearch).",
                                                    discussion: "HEX is ff00ff, #ff00ff, f0f or #f0f — locally and with --endpoint alike. `vsearch colour` is the same command.",
                                                    aliases: ["colour"])
    @OptionGroup var catalog: CatalogOptions
    @OptionGroup var model: ModelOptions
    @Argument(help: ArgumentHelp("The colour, e.g. c45b3b.", valueName: "hex"), transform: HexColor.argument) var argument: HexColor?
    /// `--hex ff0000`, the ViSearch parameter's name, for those who reach for an option.
    @Option(name: .customLong("hex"), help: .hidden, transform: HexColor.argument) var hex: HexColor?

    var color: HexColor { argument ?? hex ?? HexColor(red: 0, green: 0, blue: 0) }

    func validate() throws {
        guard (argument == nil) != (hex == nil) else {
            throw ValidationError(argument == nil ? "give the colour as HEX, e.g. vsearch color ff0000" : "give the colour once: HEX or --hex, not both")
        }
    }
    @OptionGroup var options: QueryOptions
    @OptionGroup(title: "Remote") var service: ServiceOptions

    func call<Service: VisualSearchService>(_ service: Service) async throws(Service.Failure) -> SearchResponse {
        try await service.colorSearch(ColorSearchRequest(color: color, parameters: options.searchParameters))
    }

    var resultsQuery: ResultsPage.Query { ResultsPage.Query(title: color.description, color: color) }

    func run() async throws {
        try await runQuery()
    }
}

/// `vsearch discover --image FILE`.
struct DiscoverCommand: AsyncParsableCommand, QueryCommand {
    typealias Answer = SearchResponse
    static let method = "discoversearch"
    static let configuration = CommandConfiguration(
        commandName: "discover", abstract: "Results per object of an image (ViSearch /discoversearch).",
        discussion: """
        Detects the objects of the image with the learned model (`vsearch model install`) and searches each: \
        every object is printed with its type, score (the probability that its box holds one whole object) \
        and box, then its own results. --detection-limit is how many objects at most (default 5, at most 30); \
        --result-limit how many results per object (default 10); discover has no flat result list, so it \
        takes no --limit. A --point searches the object under the point (none detected there: the point's \
        neighbourhood); a --box is searched as given. Without the model, the whole image is one object.

        Examples:
          vsearch discover --image look.jpg
          vsearch discover --image look.jpg --point 120,80 --point 300,200 --json
        """)
    @OptionGroup var catalog: CatalogOptions
    @OptionGroup var model: ModelOptions
    @OptionGroup var image: ImageQueryOptions
    @Option(help: ArgumentHelp("A point of interest. Repeatable.", valueName: "x,y")) var point: [String] = []
    @Option(name: .customLong("result-limit"), help: "Results per object.") var resultLimit: Int?
    @Option(name: .customLong("detection-limit"), help: "Objects at most.") var detectionLimit: Int?
    @OptionGroup var options: QueryOptions
    @OptionGroup(title: "Remote") var service: ServiceOptions

    func validate() throws {
        if options.limit != nil { throw ValidationError("discover gives results per object: use --result-limit N, not --limit") }
        for text in point { do { _ = try PixelPoint(parsing: text) } catch { throw ValidationError(error.message) } }
        if let resultLimit, !(1...SearchParameters.maximumLimit).contains(resultLimit) {
            throw ValidationError("--result-limit must be in 1...\(SearchParameters.maximumLimit)")
        }
        if let detectionLimit, !(1...DiscoverSearchRequest.maximumDetectionLimit).contains(detectionLimit) {
            throw ValidationError("--detection-limit must be in 1...\(DiscoverSearchRequest.maximumDetectionLimit)")
        }
    }

    func call<Service: VisualSearchService>(_ service: Service) async throws(Service.Failure) -> SearchResponse {
        let points = point.compactMap { try? PixelPoint(parsing: $0) }
        return try await service.discoverSearch(DiscoverSearchRequest(image.query, points: points, resultLimit: resultLimit,
                                                                     detectionLimit: detectionLimit,
                                                                     parameters: options.searchParameters))
    }

    var resultsQuery: ResultsPage.Query { ResultsPage.Query(title: image.title, imageFile: image.image, box: image.query.box) }

    func run() async throws {
        try image.checkFile()
        try await runQuery()
    }
}

extension HexColor {
    /// Parses a command-line colour; the error is argument-parser's message for it.
    static func argument(_ text: String) throws -> HexColor {
        do { return try HexColor(parsing: text) } catch { throw ValidationError(error.message) }
    }
}
