import VisualSearch

extension CatalogReader {
    /// Every image's vectors, learned ones included when the catalog has them.
    public func loadIndex() async throws(CatalogStoreError) -> FeatureIndex {
        try await loadIndex(learned: .compact)
    }

    /// The images of `ids`, from the whole index: a store that keeps no saved
    /// vectors never asks for a few rows often enough to need its own query.
    public func loadIndex(ids: [Int64]) async throws(CatalogStoreError) -> FeatureIndex {
        try await loadIndex(learned: .compact).subset(ids: ids)
    }

    /// No log of changes: an engine loads the index again when the version moves.
    public func changes(since version: Int) async throws(CatalogStoreError) -> CatalogChanges? { nil }

    /// How many images hold a learned vector of the catalog's ``learnedModel()``.
    public func learnedVectorCount() async throws(CatalogStoreError) -> Int {
        try await featureCensus().learned
    }

    /// ``CatalogReader/featureCensus()`` from ``contentHashes()``.
    public func featureCensus() async throws(CatalogStoreError) -> (learned: Int, stale: Int) {
        let model = try await learnedModel()
        var census = FeatureCensus(model: model)
        for hash in try await contentHashes().values { census.count(hash) }
        return (census.learned, census.stale)
    }

    /// How many images an older vsearch's features computed (their stored
    /// content hash lacks this version's tag, ``StoredContentHash/isCurrent(_:)``):
    /// they answer with their old vectors until `vsearch index` runs again.
    public func staleFeatureCount() async throws(CatalogStoreError) -> Int {
        try await contentHashes().values.filter { !StoredContentHash.isCurrent($0) }.count
    }
}
