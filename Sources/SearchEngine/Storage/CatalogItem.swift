import Foundation
import VisualSearch

/// One image as the catalog stores it.
public struct CatalogItem: Sendable, Hashable {
    /// The unique name (`im_name`).
    public var imageName: String
    /// Where the image came from: a path or URL.
    public var source: String
    /// Size as displayed.
    public var width: Int
    public var height: Int
    /// Hash of the encoded file (see ``ContentHash``); unchanged files are not decoded again.
    public var contentHash: String
    /// The colour feature vector (``ColorFeatures``).
    public var features: [Float]
    /// The learned embedding (``LearnedEmbedder``); nil when the image was
    /// indexed without the model. Stores keep its ``storedLearned`` form.
    public var learned: [Float]?

    /// What every store keeps of ``learned``: the vector rounded to its `Int8`
    /// form and scaled to unit length (``QuantizedMatrix/unitVector(of:)``), so the
    /// in-memory index, PostgreSQL and a copy all hold and score the same numbers.
    public var storedLearned: [Float]? { learned.flatMap(QuantizedMatrix.unitVector(of:)) }
    /// The dominant colours.
    public var palette: DominantColors
    /// Metadata values as text, checked against the schema.
    public var metadata: [String: String]

    public init(imageName: String, source: String, width: Int, height: Int, contentHash: String,
                features: [Float], learned: [Float]? = nil, palette: DominantColors, metadata: [String: String]) {
        self.imageName = imageName
        self.source = source
        self.width = width
        self.height = height
        self.contentHash = contentHash
        self.features = features
        self.learned = learned
        self.palette = palette
        self.metadata = metadata
    }
}

extension CatalogItem {
    /// Refuses a batch holding a vector that is not ``ColorFeatures/dimensions`` long,
    /// before anything is written: every store keeps vectors of one length.
    /// - Throws: ``CatalogStoreError/invalidValue(name:reason:)`` naming the image.
    package static func checkVectors(of items: [CatalogItem]) throws(CatalogStoreError) {
        for item in items where item.features.count != ColorFeatures.dimensions {
            throw .invalidValue(name: "features", reason: "\(item.imageName) has a vector of \(item.features.count) values; "
                                    + "a catalog stores \(ColorFeatures.dimensions)")
        }
        // Learned vectors, where present, are all as long as the catalog's model makes them.
        if let first = items.lazy.compactMap(\.learned).first,
           let item = items.first(where: { $0.learned.map { $0.count != first.count } ?? false }) {
            throw .invalidValue(name: "learned", reason: "\(item.imageName)'s learned vector has \(item.learned?.count ?? 0) values, "
                                    + "others in its batch \(first.count)")
        }
    }
}
