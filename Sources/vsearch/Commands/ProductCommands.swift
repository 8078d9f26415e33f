import ArgumentParser
import Foundation
import SearchEngine
import VisualSearch

/// `vsearch product search|recommend`: the ProductSearch API.
struct ProductCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "product", abstract: "ProductSearch: search by image, and recommendations for a product.",
        discussion: """
        Offline, products are catalog images: product_id is the im_name, data the metadata. \
        With --endpoint, --app-key and --placement-id go with every call.
        """,
        subcommands: [ProductSearchCommand.self, ProductRecommendCommand.self])
}

/// `vsearch product search --image FILE`.
struct ProductSearchCommand: AsyncParsableCommand, ServiceCall {
    typealias Answer = ProductSearchResponse
    static let method = "product/search_by_image"
    static let configuration = CommandConfiguration(commandName: "search", abstract: "Products similar to an image (ProductSearch search_by_image).")
    @OptionGroup var catalog: CatalogOptions
    @OptionGroup var model: ModelOptions
    @OptionGroup var image: ImageQueryOptions
    @OptionGroup var options: QueryOptions
    @OptionGroup(title: "Remote") var service: ServiceOptions

    func call<Service: VisualSearchService>(_ service: Service) async throws(Service.Failure) -> ProductSearchResponse {
        try await service.productSearch(ProductSearchRequest(image.query, parameters: options.searchParameters))
    }

    func run() async throws {
        try image.checkFile()
        try await ServiceRunner.run(self, catalog: catalog, model: model, service: service, json: options.json) { response, _ in
            ProductOutput.print(response, title: image.title, json: options.json)
        }
    }
}

/// `vsearch product recommend PRODUCT_ID`.
struct ProductRecommendCommand: AsyncParsableCommand, ServiceCall {
    typealias Answer = ProductSearchResponse
    static let method = "product/recommendations"
    static let configuration = CommandConfiguration(commandName: "recommend", abstract: "Recommendations for a product (ProductSearch recommendations/{product_id}).")
    @OptionGroup var catalog: CatalogOptions
    @OptionGroup var model: ModelOptions
    @Argument(help: "The product id (offline: the im_name).") var productID: String
    @OptionGroup var options: QueryOptions
    @OptionGroup(title: "Blending with events") var blending: RecommendationOptions
    @OptionGroup(title: "Remote") var service: ServiceOptions

    func call<Service: VisualSearchService>(_ service: Service) async throws(Service.Failure) -> ProductSearchResponse {
        try await service.productRecommendations(ProductRecommendationsRequest(productID: productID,
                                                                               parameters: options.searchParameters))
    }

    var recommendationBlend: RecommendationBlend { blending.blend }

    func run() async throws {
        try await ServiceRunner.run(self, catalog: catalog, model: model, service: service, json: options.json) { response, _ in
            ProductOutput.print(response, title: productID, json: options.json)
        }
    }
}

/// Prints a ProductSearch answer: a table, or its JSON.
enum ProductOutput {
    static func print(_ response: ProductSearchResponse, title: String, json: Bool) {
        if json { Terminal.json(response); return }
        let products = response.result ?? []
        Terminal.out("\(response.method) \(TerminalText.escaped(title)): \(response.total ?? products.count) products"
            + (response.imageID.map { "  (im_id \(TerminalText.escaped($0)))" } ?? ""))
        guard !products.isEmpty else { return }
        // The same table as the ViSearch commands': a header, numbers right-aligned.
        let rows = [["#", "product_id", "score", "main_image_url"]] + products.enumerated().map { offset, product in
            [String(offset + 1), TerminalText.escaped(product.productID), product.score.map { String(format: "%.4f", $0) } ?? "-",
             TerminalText.escaped(product.mainImageURL ?? "")]
        }
        for line in ResultTable.aligned(rows, rightAligned: [0, 2]) { Terminal.out(line) }
    }
}
