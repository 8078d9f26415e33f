import ArgumentParser
import Foundation
import ImageOps
import VisualSearch

/// `vsearch search --image FILE`: upload search against the local catalog.
struct SearchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "search",
        abstract: "Search the catalog with an image (upload search).",
        discussion: """
        The query is --image FILE, --url URL (file:// or http(s)://) or --im-id ID (returned by an
        earlier search). --box x1,y1,x2,y2 searches inside a box of the query image (a zero-size box
        is a point: its neighbourhood is searched).
        Example: vsearch search --image photo.jpg --fq category=food --fl brand --facets brand
        """
    )

    @OptionGroup var catalog: CatalogOptions
    @Option(help: "The query image file.") var image: String?
    @Option(help: "The query image URL (file://, http://, https://).") var url: String?
    @Option(name: .customLong("im-id"), help: "An im_id from an earlier upload search.") var imageID: String?
    @Option(help: ArgumentHelp("Search inside this box of the query image.", valueName: "x1,y1,x2,y2")) var box: String?
    @OptionGroup var options: QueryOptions
    @OptionGroup(title: "Remote") var remote: RemoteOptions

    func validate() throws {
        guard [image, url, imageID].compactMap({ $0 }).count == 1 else {
            throw ValidationError("give exactly one of --image, --url or --im-id")
        }
        if let box { do { _ = try PixelBox(parsing: box) } catch { throw ValidationError(error.description) } }
    }

    func run() async throws {
        let source: QueryImage = image.map { .file($0) } ?? url.map { .url($0) } ?? .imageID(imageID ?? "")
        let box = try self.box.map { try PixelBox(parsing: $0) }
        try await QueryRunner.run(catalog: catalog, remote: remote, options: options, query: image ?? url ?? imageID ?? "", queryImage: image,
                                  local: { engine, parameters throws(VisualSearchError) in
                                      try engine.uploadSearch(source, box: box, parameters: parameters)
                                  }, client: { client, parameters throws(ClientError) in
                                      try await client.uploadSearch(source, box: box, parameters: parameters)
                                  })
    }
}

/// `vsearch similar IM_NAME`.
struct SimilarCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "similar", abstract: "Find images similar to a catalog image (ViSearch /search).")
    @OptionGroup var catalog: CatalogOptions
    @Argument(help: "The im_name of a catalog image.") var imageName: String
    @OptionGroup var options: QueryOptions
    @OptionGroup(title: "Remote") var remote: RemoteOptions

    func run() async throws {
        let imageName = self.imageName
        try await QueryRunner.run(catalog: catalog, remote: remote, options: options, query: imageName,
                                  local: { engine, parameters throws(VisualSearchError) in try engine.search(imageName: imageName, parameters: parameters) },
                                  client: { client, parameters throws(ClientError) in try await client.search(imageName: imageName, parameters: parameters) })
    }
}

/// `vsearch recommend IM_NAME`.
struct RecommendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "recommend", abstract: "Recommendations for a catalog image: similar items, itself excluded, deduplicated.")
    @OptionGroup var catalog: CatalogOptions
    @Argument(help: "The im_name (product id) of a catalog image.") var imageName: String
    @OptionGroup var options: QueryOptions
    @OptionGroup(title: "Remote") var remote: RemoteOptions

    func run() async throws {
        let imageName = self.imageName
        try await QueryRunner.run(catalog: catalog, remote: remote, options: options, query: imageName,
                                  local: { engine, parameters throws(VisualSearchError) in try engine.recommendations(imageName: imageName, parameters: parameters) },
                                  client: { client, parameters throws(ClientError) in try await client.recommendations(imageName: imageName, parameters: parameters) })
    }
}

/// `vsearch color HEX`.
struct ColorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "color", abstract: "Find images by colour: ranked by how much of each image is near it.",
                                                    discussion: "HEX is ff00ff, #ff00ff or #f0f.")
    @OptionGroup var catalog: CatalogOptions
    @Argument(help: "The colour, e.g. c45b3b.") var hex: String
    @OptionGroup var options: QueryOptions
    @OptionGroup(title: "Remote") var remote: RemoteOptions

    func validate() throws {
        do { _ = try LabColor(hex: hex) } catch { throw ValidationError(error.description) }
    }

    func run() async throws {
        let hex = self.hex
        try await QueryRunner.run(catalog: catalog, remote: remote, options: options, query: "#" + hex.trimmingCharacters(in: CharacterSet(charactersIn: "#")),
                                  local: { engine, parameters throws(VisualSearchError) in try engine.colorSearch(hex, parameters: parameters) },
                                  client: { client, parameters throws(ClientError) in try await client.colorSearch(hex, parameters: parameters) })
    }
}
