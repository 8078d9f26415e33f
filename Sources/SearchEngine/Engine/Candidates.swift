import Synchronization
import VisualSearch

/// What the candidates stage hands to the response stage: the ranked page,
/// what its rows are called, and the images facets count over.
struct Candidates: Sendable {
    /// Where facets are counted.
    enum FacetScope: Sendable {
        /// Over these catalog ids; every image when nil.
        case ids([Int64]?)
        /// Over a ``NearestNeighbourStore``'s scope.
        case scope(NeighbourScope)
    }

    var ranked: Ranking.Ranked
    var rows: ResponseShaper.Rows
    var facetScope: FacetScope
}

/// The catalog image a query starts from (search, recommendations).
struct CatalogImage: Sendable {
    var name: String
    var vector: [Float]
    /// Its learned vector; nil when it was indexed without the model.
    var learned: [Float]?
    /// Its row in the in-memory index, when the query runs there.
    var row: Int?
    var id: Int64

    /// The image's stored vectors as a query in `mode`.
    /// - Throws: ``VisualSearchError/learnedModel(_:reason:)`` when `mode` needs a learned vector it lacks.
    func query(mode: SimilarityMode, fusedWeight: Float) throws(VisualSearchError) -> QueryVectors {
        if mode.usesLearnedVectors && learned == nil {
            throw .learnedModel(.notIndexed, reason: "\(name) has no learned vector (it was indexed without the model); run `vsearch index` "
                                + "again with the model installed, or ask for similarity=color")
        }
        return QueryVectors(mode: mode, color: [vector], learned: learned.map { [$0] }, fusedWeight: fusedWeight)
    }
}

/// How many images a scope holds, per catalog version: a filtered query's
/// `total` costs a count over the filter's rows in PostgreSQL, and the same
/// filters come back again and again (facet clicks, paging). Bounded.
struct ScopeSizes: Sendable {
    static let capacity = 4096
    var version = -1
    /// By the filters' bytes: Swift's `String` equality folds canonically
    /// equivalent text ("é" and "e\u{301}"), PostgreSQL compares bytes.
    var sizes: [[[UInt8]]: Int] = [:]

    static func key(_ filters: [Filter]) -> [[UInt8]] {
        filters.flatMap { [Array($0.field.utf8), Array($0.value.utf8)] }
    }
}

/// The rows an `fq` filter leaves in the in-memory index: sorted (the exact
/// scan's candidates) and as a set (what an approximate search tests).
struct FilteredScope: Sendable {
    var rows: [Int]
    var set: RowSet
}

/// Filtered scopes by their filters, for one catalog version: the same
/// filters come back again and again (facet clicks, paging), and at a
/// million images reading a filter's ids from the store costs more than the
/// search. Bounded by the rows it holds.
struct FilteredScopes: Sendable {
    static let rowCapacity = 16_000_000
    var version = -1
    var scopes: [[[UInt8]]: FilteredScope] = [:]
    var rows = 0

    mutating func store(_ scope: FilteredScope, for key: [[UInt8]], version: Int) {
        if self.version != version || rows + scope.rows.count > Self.rowCapacity { self = FilteredScopes(version: version) }
        scopes[key] = scope
        rows += scope.rows.count
    }
}

extension VisualSearchEngine {
    /// A catalog image by name, from the store's k-NN side or the in-memory index.
    func catalogImage(named name: String, snapshot: Snapshot) async throws(VisualSearchError) -> CatalogImage {
        // No catalog name holds a control character (inserts refuse them): 400 naming it, not 404.
        try CatalogText.validateName(name, parameter: "im_name")
        if let neighbourStore {
            guard let image = try await fromStore({ () async throws(CatalogStoreError) in try await neighbourStore.image(named: name) }) else { throw .imageNotFound(name) }
            // As its row in memory would search: the same vector, so both stores answer alike.
            return CatalogImage(name: name, vector: image.vector, learned: image.learned.flatMap(QuantizedMatrix.unitVector(of:)),
                                row: nil, id: image.id)
        }
        guard let index = snapshot.index, let row = index.row(named: name) else { throw .imageNotFound(name) }
        return CatalogImage(name: name, vector: index.vector(at: row), learned: index.learnedVector(at: row), row: row, id: index.ids[row])
    }

    // MARK: - In memory (CandidateSource.inMemory)

    /// Rows passing the filters, sorted; nil when there are no filters.
    func filteredRows(_ parameters: SearchParameters, index: FeatureIndex, snapshot: Snapshot) async throws(VisualSearchError) -> [Int]? {
        try await filteredScope(parameters, index: index, snapshot: snapshot)?.rows
    }

    /// The rows passing the filters, as a sorted list and a set; nil when
    /// there are no filters. Cached per catalog version (``FilteredScopes``).
    func filteredScope(_ parameters: SearchParameters, index: FeatureIndex, snapshot: Snapshot) async throws(VisualSearchError) -> FilteredScope? {
        guard !parameters.filters.isEmpty else { return nil }
        let key = ScopeSizes.key(parameters.filters)
        if let cached = filteredScopes.withLock({ $0.version == snapshot.version ? $0.scopes[key] : nil }) { return cached }
        guard let ids = try await fromStore({ () async throws(CatalogStoreError) in
            try await self.catalog.matchingIDs(parameters.filters, schema: snapshot.schema)
        }) else { return nil }
        let rows = ids.compactMap { index.row(id: $0) }.sorted()
        let scope = FilteredScope(rows: rows, set: RowSet(rows, capacity: index.count))
        filteredScopes.withLock { cache in cache.store(scope, for: key, version: snapshot.version) }
        return scope
    }

    /// Every filtered image scored against `vectors` (the best of its scores)
    /// over the in-memory index, blended with events when `blend` is given, ranked.
    func nearestInMemory(to query: QueryVectors, excluding: CatalogImage?, parameters: SearchParameters,
                         snapshot: Snapshot, blend: BlendTerms? = nil) async throws(VisualSearchError) -> Candidates {
        guard let index = snapshot.index else { throw .storage(reason: "the in-memory index was not loaded", sql: nil) }
        let scope = try await filteredScope(parameters, index: index, snapshot: snapshot)
        let rows = scope?.rows
        if let candidates = approximateRows(for: query, excluding: excluding, parameters: parameters, index: index, filtered: scope,
                                            blend: blend) {
            return rankApproximate(candidates, query: query, excluding: excluding, parameters: parameters, index: index, scope: scope,
                                   blend: blend)
        }
        var scores = index.scores(for: query, rows: rows)
        if let blend { blend.apply(to: &scores, rows: rows, index: index) }
        let ranked = Ranking(parameters: parameters).rank(scores: scores, rows: rows, names: index.names, excluding: excluding?.row) {
            index.score($0, $1, as: query)
        }
        return Candidates(ranked: ranked, rows: ResponseShaper.Rows(names: index.names, ids: index.ids),
                          facetScope: .ids(ranked.matchedRows.map { $0.map { index.ids[$0] } }))
    }

    /// The graphs' candidates scored exactly and ranked as the scan ranks
    /// them; `total` and the facets' scope are the scan's: every filtered
    /// image but the excluded one.
    func rankApproximate(_ candidates: [Int], query: QueryVectors, excluding: CatalogImage?, parameters: SearchParameters,
                         index: FeatureIndex, scope: FilteredScope?, blend: BlendTerms?) -> Candidates {
        let filtered = scope?.rows
        var scores = index.scores(for: query, rows: candidates)
        if let blend { blend.apply(to: &scores, rows: candidates, index: index) }
        var ranked = Ranking(parameters: parameters).rank(scores: scores, rows: candidates, names: index.names, excluding: excluding?.row) {
            index.score($0, $1, as: query)
        }
        let excludedRow = excluding?.row.flatMap { row in scope?.set.contains(row) ?? true ? row : nil }
        ranked.total = (filtered?.count ?? index.count) - (excludedRow == nil ? 0 : 1)
        let matched: [Int]? = filtered == nil && excludedRow == nil ? nil : (filtered ?? Array(0..<index.count)).filter { $0 != excludedRow }
        ranked.matchedRows = matched
        return Candidates(ranked: ranked, rows: ResponseShaper.Rows(names: index.names, ids: index.ids),
                          facetScope: .ids(matched.map { $0.map { index.ids[$0] } }))
    }

    /// Every filtered image scored by how much of it is near `color`, ranked.
    func colorsInMemory(_ color: LabColor, parameters: SearchParameters, snapshot: Snapshot) async throws(VisualSearchError) -> Candidates {
        guard let index = snapshot.index else { throw .storage(reason: "the in-memory index was not loaded", sql: nil) }
        let filtered = try await filteredRows(parameters, index: index, snapshot: snapshot) ?? Array(0..<index.count)
        // A match has some share of the colour: an image with none is not a result, nor counted in `total`.
        let scored = filtered.map { ($0, index.palettes[$0].coverage(of: color)) }.filter { $0.1 > 0 }
        let ranked = Ranking(parameters: parameters).rank(scores: scored.map { $0.1 }, rows: scored.map { $0.0 }, names: index.names)
        return Candidates(ranked: ranked, rows: ResponseShaper.Rows(names: index.names, ids: index.ids),
                          facetScope: .ids(ranked.matchedRows.map { $0.map { index.ids[$0] } }))
    }

    // MARK: - In the store (CandidateSource.store)

    /// The nearest images as the store finds them, scored and ranked here
    /// exactly as in memory (the same dot product, the best over `vectors`,
    /// ties by name, dedup over their vectors); `total` is the scope's size.
    ///
    /// With several query vectors the store is asked for each one's nearest
    /// and the union is ranked: every image of the true first page is among
    /// the nearest of the vector that gives its best score. (A score range is
    /// a condition on one vector in the store: ``VisualSearchEngine/similar``
    /// passes only the primary vector then.)
    ///
    /// With `blend`, the items events boost are fetched beside the nearest
    /// (those in the scope): every other candidate's blended score is its
    /// visual score times one factor, so the nearest still hold the rest of the page.
    func nearestInStore(_ neighbourStore: any NearestNeighbourStore, to query: QueryVectors, excluding: CatalogImage?,
                        parameters: SearchParameters, snapshot: Snapshot,
                        blend: BlendTerms? = nil) async throws(VisualSearchError) -> Candidates {
        var scope = NeighbourScope(filters: parameters.filters, excluding: excluding?.id)
        if parameters.scoreMin != nil || parameters.scoreMax != nil {
            scope.scoreRange = .init(target: NeighbourTarget(query, region: 0), minimum: parameters.scoreMin ?? 0, maximum: parameters.scoreMax ?? 1)
        }
        let matching = try await scopeSize(scope, store: neighbourStore, version: snapshot.version, schema: snapshot.schema)
        // As many as Ranking would keep from a full scan, and a few more so
        // equal scores at the edge still break by name. A page past the last
        // match needs none (dedup only removes results).
        let ranking = Ranking(parameters: parameters)
        let wanted = ranking.skipped >= matching ? 0 : min(matching, ranking.kept(of: matching) + Self.tieMargin)
        let catalogSize = scope.isEverything ? matching
            : try await scopeSize(NeighbourScope(), store: neighbourStore, version: snapshot.version, schema: snapshot.schema)
        var found: [Neighbour] = []
        var seen = Set<Int64>()
        for nearest in try await Self.nearest(to: (0..<query.count).map { NeighbourTarget(query, region: $0) }, in: neighbourStore,
                                              scope: scope, count: wanted, matching: matching,
                                              catalogSize: catalogSize, schema: snapshot.schema) {
            for neighbour in nearest where seen.insert(neighbour.id).inserted { found.append(neighbour) }
        }
        if let blend, wanted > 0, !blend.boosts.isEmpty {
            let boosted = try await fromStore { () async throws(CatalogStoreError) in try await neighbourStore.images(named: blend.boosts.keys.sorted(), in: scope, schema: snapshot.schema) }
            for neighbour in boosted where seen.insert(neighbour.id).inserted { found.append(neighbour) }
        }
        let local = FeatureIndex(neighbours: found, learnedDimensions: query.learned.first?.count ?? 0)
        var scores = local.scores(for: query)
        if let blend { blend.apply(to: &scores, rows: nil, index: local) }
        var ranked = ranking.rank(scores: scores, rows: nil, names: local.names) {
            local.score($0, $1, as: query)
        }
        ranked.total = matching
        ranked.matchedRows = nil
        return Candidates(ranked: ranked, rows: ResponseShaper.Rows(names: local.names, ids: local.ids),
                          facetScope: scope.isEverything ? .ids(nil) : .scope(scope))
    }

    /// Each vector's nearest in the store, in the vectors' order; several
    /// vectors (an upload and its proposal) are asked for at once.
    static func nearest(to vectors: [NeighbourTarget], in store: any NearestNeighbourStore, scope: NeighbourScope, count: Int,
                        matching: Int, catalogSize: Int, schema: FieldSchema) async throws(VisualSearchError) -> [[Neighbour]] {
        if vectors.count == 1 {
            return [try await fromStore { () async throws(CatalogStoreError) in
                try await store.nearest(to: vectors[0], in: scope, count: count, matching: matching, catalogSize: catalogSize, schema: schema)
            }]
        }
        do {
            return try await withThrowingTaskGroup(of: (Int, [Neighbour]).self) { group in
                for (position, vector) in vectors.enumerated() {
                    group.addTask {
                        (position, try await store.nearest(to: vector, in: scope, count: count, matching: matching,
                                                           catalogSize: catalogSize, schema: schema))
                    }
                }
                var lists = [[Neighbour]](repeating: [], count: vectors.count)
                for try await (position, list) in group { lists[position] = list }
                return lists
            }
        } catch let error as CatalogStoreError {
            throw VisualSearchError(error)
        } catch {
            throw .storage(reason: "\(error)", sql: nil)
        }
    }

    /// Candidates fetched beyond a page so equal scores at its edge rank by name.
    static let tieMargin = 8

    /// How many images `scope` holds, cached per catalog version (scopes
    /// without a score range; the query image's exclusion is checked apart).
    func scopeSize(_ scope: NeighbourScope, store: any NearestNeighbourStore, version: Int,
                   schema: FieldSchema) async throws(VisualSearchError) -> Int {
        if scope.scoreRange != nil { return try await fromStore { () async throws(CatalogStoreError) in try await store.count(scope, schema: schema) } }
        var base = scope
        base.excluding = nil
        let key = ScopeSizes.key(base.filters)
        let cached = scopeSizes.withLock { $0.version == version ? $0.sizes[key] : nil }
        let size: Int
        if let cached {
            size = cached
        } else {
            size = try await fromStore { () async throws(CatalogStoreError) in try await store.count(base, schema: schema) }
            scopeSizes.withLock { sizes in
                if sizes.version != version || sizes.sizes.count >= ScopeSizes.capacity { sizes = ScopeSizes(version: version) }
                sizes.sizes[key] = size
            }
        }
        guard let excluded = scope.excluding else { return size }
        let inScope = base.isEverything ? true : try await fromStore { () async throws(CatalogStoreError) in
            try await store.contains(excluded, in: base, schema: schema)
        }
        return inScope ? size - 1 : size
    }
}

extension FeatureIndex {
    /// An index over the candidates a store returned, in their order (with
    /// their learned vectors when `learnedDimensions` is not 0).
    init(neighbours: [Neighbour], learnedDimensions: Int = 0) {
        self.init(dimensions: ColorFeatures.dimensions, learnedDimensions: learnedDimensions)
        for neighbour in neighbours where neighbour.vector.count == dimensions {
            append(id: neighbour.id, name: neighbour.name, source: neighbour.source, vector: neighbour.vector,
                   learned: neighbour.learned, palette: DominantColors(entries: []))
        }
    }
}

extension NeighbourTarget {
    /// What the store orders by for one region of a query.
    init(_ query: QueryVectors, region: Int) {
        switch query.mode {
        case .color: self = .color(query.color[region])
        case .visual: self = .learned(query.learned[region])
        case .fused: self = .fused(color: query.color[region], learned: query.learned[region], learnedWeight: query.fusedWeight)
        }
    }
}
