import Foundation
import VisualSearch

/// Where an engine's in-memory index came from when it was last loaded.
public struct IndexLoad: Sendable, Equatable {
    public enum Source: Sendable, Equatable {
        /// Every row read from the catalog.
        case catalogRows
        /// Read from the vectors saved beside the graphs (``VectorFiles``).
        case savedVectors
        /// The catalog's changes since the index before applied to it (``CatalogChanges``).
        case changes
    }

    public var source: Source
    /// Why saved vectors were not used, when there were some.
    public var notUsed: String?
    /// Rows in the index.
    public var count: Int
    /// Images changed, for ``Source/changes``.
    public var changed = 0
    public var seconds: Double

    /// Whether the index was read from the saved vectors.
    public var fromSavedVectors: Bool { source == .savedVectors }
}

extension VisualSearchEngine {
    /// Rows of saved vectors read back from the catalog and compared before they answer.
    static let savedVectorChecks = 16

    /// The catalog's index at `version`: from the saved vectors when they are
    /// the catalog's (``VectorFiles``: version, row count, model, then
    /// ``savedVectorChecks`` random rows compared with the catalog's), else
    /// from the catalog's rows. On the first load, the saved graphs are read
    /// on their own thread meanwhile (``ApproximateIndex/preload(_:capacity:)``).
    func loadIndex(version: Int, model: EmbeddingDescriptor?) async throws(VisualSearchError) -> FeatureIndex {
        let started = ContinuousClock.now
        var notUsed: String?
        let firstLoad = state.withLock { $0 == nil }
        let graphManifest = firstLoad ? approximate?.files?.manifest(.color) : nil
        let savedVectors = vectorFiles?.manifest()
        guard graphManifest != nil || savedVectors != nil else { return try await loadIndexFromCatalog(started: started, notUsed: nil) }
        let count = try await fromStore { () async throws(CatalogStoreError) in try await catalog.count() }
        async let preloading: Void = preloadGraphs(model: model, capacity: max(count, graphManifest?.count ?? 0), when: graphManifest != nil)
        if let vectorFiles, savedVectors != nil {
            let loaded = (try? await ApproximateIndex.onOwnThread {
                vectorFiles.load(version: version, count: count, model: model?.tag, learnedDimensions: model?.dimension ?? 0)
            }) ?? .missing
            switch loaded {
            case .index(let index, _):
                if let mismatch = try await mismatch(of: index) {
                    notUsed = mismatch
                } else {
                    await preloading
                    recordIndexLoad(IndexLoad(source: .savedVectors, notUsed: nil, count: index.count,
                                              seconds: ApproximateIndex.seconds(ContinuousClock.now - started)))
                    return index
                }
            case .missing:
                break
            case .stale(let reason), .unusable(let reason):
                notUsed = reason
            }
        }
        let index = try await loadIndexFromCatalog(started: started, notUsed: notUsed)
        await preloading
        return index
    }

    func loadIndexFromCatalog(started: ContinuousClock.Instant, notUsed: String?) async throws(VisualSearchError) -> FeatureIndex {
        let index = try await fromStore { () async throws(CatalogStoreError) in try await catalog.loadIndex() }
        recordIndexLoad(IndexLoad(source: .catalogRows, notUsed: notUsed, count: index.count,
                                  seconds: ApproximateIndex.seconds(ContinuousClock.now - started)))
        return index
    }

    func preloadGraphs(model: EmbeddingDescriptor?, capacity: Int, when wanted: Bool) async {
        guard wanted, let approximate else { return }
        var spaces: [ApproximateIndex.SpaceKey] = [.init(space: .color, dimensions: ColorFeatures.dimensions, model: nil)]
        if let model { spaces.append(.init(space: .learned, dimensions: model.dimension, model: model.tag)) }
        await approximate.preload(spaces, capacity: capacity)
    }

    /// Why saved vectors are not the catalog's, when ``savedVectorChecks`` random rows read back from it say so.
    func mismatch(of index: FeatureIndex) async throws(VisualSearchError) -> String? {
        guard index.count > 0 else { return nil }
        var random = SystemRandomNumberGenerator()
        let rows = Set((0..<Self.savedVectorChecks).map { _ in Int.random(in: 0..<index.count, using: &random) }).sorted()
        let catalogRows = try await fromStore { () async throws(CatalogStoreError) in try await catalog.loadIndex(ids: rows.map { index.ids[$0] }) }
        for row in rows {
            let id = index.ids[row]
            guard let other = catalogRows.row(id: id) else { return "they hold the id \(id), which the catalog does not" }
            guard index.sameRow(row, as: catalogRows, row: other) else { return "the catalog's row \(id) is not the one saved" }
        }
        return nil
    }

    /// `index` (the catalog at `version`) brought to the catalog's version now by its
    /// logged changes, off the cooperative pool (a copy of every vector when another
    /// snapshot still holds them); nil when the store cannot say what changed.
    func applyingChanges(to index: FeatureIndex, since version: Int) async throws(VisualSearchError) -> (index: FeatureIndex, changes: CatalogChanges)? {
        let started = ContinuousClock.now
        guard let changes = try await fromStore({ () async throws(CatalogStoreError) in try await catalog.changes(since: version) }) else { return nil }
        guard let applied = try? await ApproximateIndex.onOwnThread({ index.applying(changes) }) else { return nil }
        recordIndexLoad(IndexLoad(source: .changes, notUsed: nil, count: applied.count, changed: changes.count,
                                  seconds: ApproximateIndex.seconds(ContinuousClock.now - started)))
        return (applied, changes)
    }

    func recordIndexLoad(_ load: IndexLoad) {
        indexLoads.withLock { $0 = load }
        configuration.indexReports?(load)
    }

    /// Where the in-memory index came from when it was last loaded; nil before.
    public var lastIndexLoad: IndexLoad? { indexLoads.withLock { $0 } }

    /// Saves the in-memory index beside the graphs when the catalog has graphs
    /// and the saved vectors are not this version's (with ``saveGraphs()``).
    func saveVectors() async throws(VisualSearchError) {
        guard let vectorFiles, let approximate, !approximate.graphs.isEmpty,
              let snapshot = state.withLock({ $0 }), let index = snapshot.index else { return }
        let model = snapshot.learnedModel?.tag
        if let saved = vectorFiles.manifest(), saved.catalogVersion == snapshot.version, saved.count == index.count,
           saved.model == (index.learnedDimensions > 0 ? model : nil) { return }
        let result: Result<Void, VectorFilesError>? = try? await ApproximateIndex.onOwnThread {
            Result { () throws(VectorFilesError) in _ = try vectorFiles.save(index, catalogVersion: snapshot.version, model: model) }
        }
        if case .failure(let error) = result {
            throw .storage(reason: "cannot save the vectors in \(vectorFiles.directory): \(error.message)", sql: nil)
        }
    }
}
