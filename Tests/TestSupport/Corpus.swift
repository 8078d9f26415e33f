import Foundation
import ImageOps
@testable import VisualSearch

/// Shared test fixtures: the corpus indexed once into a temporary catalog.
enum Corpus {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    static let images = repository + "/corpus/images"
    static let metadata = repository + "/corpus/catalog.csv"

    static func temporaryDirectory() -> String {
        let path = NSTemporaryDirectory() + "vsearch-vs-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// The corpus indexed with its metadata, built once per test process.
    static let engine: VisualSearchEngine = {
        let catalog = try! Catalog(path: temporaryDirectory() + "/catalog.sqlite")  // test setup: failing here fails every test loudly
        _ = try! Indexer(catalog: catalog).run(directory: images, metadata: try! MetadataTable(contentsOf: metadata))
        return try! VisualSearchEngine(catalog: catalog)
    }()

    static func parameters(_ configure: (inout SearchParameters) -> Void = { _ in }) -> SearchParameters {
        var parameters = SearchParameters()
        parameters.includesScore = true
        configure(&parameters)
        return parameters
    }

    static func bytes(_ name: String) -> [UInt8] {
        (try? FileIO.read(images + "/" + name)) ?? []
    }
}
