import Foundation
import SearchEngine
import ConcurrencyToolkit
import VisualSearch

/// A catalog store in memory: every role of ``CatalogStore`` (reader,
/// writer, admin, insert journal), for engine tests that need no database.
/// It passes the same role contracts as the SQLite and PostgreSQL stores
/// (`Conformance/`, run by SearchEngineTests), so an engine test on it tests the
/// engine, not a shortcut.
///
/// Instances made by ``sharingState()`` share one catalog — what "another
/// process on the same location" sees. Writes are atomic: a batch is checked
/// whole before anything changes.
public final class InMemoryCatalogStore: CatalogStore, Sendable {
    struct Image: Sendable {
        var id: Int64
        var item: CatalogItem
    }

    struct State: Sendable {
        var version = 0
        var nextID: Int64 = 1
        var fields: [String: FieldType] = [:]
        var images: [String: Image] = [:]
        var learnedModel: EmbeddingDescriptor?
        var transactions: [(id: String, progress: InsertStatusResponse.Progress)] = []
    }

    let state: Arc
    public let location: String

    /// The shared state of every instance on one catalog.
    final class Arc: Sendable {
        let mutex = Locked(State())
    }

    /// An empty catalog.
    public init(location: String = "memory:") {
        state = Arc()
        self.location = location
    }

    init(state: Arc, location: String) {
        self.state = state
        self.location = location
    }

    /// Another instance on the same catalog.
    public func sharingState() -> InMemoryCatalogStore { InMemoryCatalogStore(state: state, location: location) }

    /// An engine over this store: its catalog and insert journal, candidates scored in memory, no collector
    /// (the in-memory counterpart of CatalogStores' `OpenedCatalog.engine(configuration:)`).
    public func engine(configuration: VisualSearchEngine.Configuration = VisualSearchEngine.Configuration()) async throws -> VisualSearchEngine {
        try await VisualSearchEngine(catalog: self, journal: self, candidates: .inMemory, engagement: nil, configuration: configuration)
    }

    func read<T>(_ body: (State) throws(CatalogStoreError) -> T) throws(CatalogStoreError) -> T {
        let snapshot = state.mutex.withLock { $0 }
        return try body(snapshot)
    }

    func write<T>(_ body: (inout State) throws(CatalogStoreError) -> T) throws(CatalogStoreError) -> T {
        try state.mutex.withLock { (current: inout State) throws(CatalogStoreError) -> T in
            var copy = current
            let result = try body(&copy)
            current = copy
            return result
        }
    }

    // MARK: - Reader

    public func schema() async throws(CatalogStoreError) -> FieldSchema {
        try read { FieldSchema(fields: $0.fields) }
    }

    public func contentHashes() async throws(CatalogStoreError) -> [String: String] {
        try read { $0.images.mapValues(\.item.contentHash) }
    }

    public func count() async throws(CatalogStoreError) -> Int {
        try read { $0.images.count }
    }

    public func imageNames(offset: Int, limit: Int) async throws(CatalogStoreError) -> [String] {
        try read { state in
            let sorted = state.images.keys.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            return Array(sorted.dropFirst(max(0, offset)).prefix(max(0, limit)))
        }
    }

    public func version() async throws(CatalogStoreError) -> Int {
        try read { $0.version }
    }

    public func loadIndex(learned loading: LearnedVectorLoading) async throws(CatalogStoreError) -> FeatureIndex {
        try read { state in
            let learnedDimension = loading != .none ? state.learnedModel?.dimension ?? 0 : 0
            var index = FeatureIndex(dimensions: ColorFeatures.dimensions, learnedDimensions: learnedDimension,
                                     keepsExactLearned: loading == .exact)
            for image in state.images.values.sorted(by: { $0.id < $1.id }) {
                let learned = learnedDimension > 0 ? image.item.storedLearned : nil
                index.append(id: image.id, name: image.item.imageName, source: image.item.source, vector: image.item.features,
                             learned: learned, palette: image.item.palette)
            }
            return index
        }
    }

    public func learnedModel() async throws(CatalogStoreError) -> EmbeddingDescriptor? {
        try read { $0.learnedModel }
    }

    public func matchingIDs(_ filters: [Filter], schema: FieldSchema) async throws(CatalogStoreError) -> Set<Int64>? {
        guard !filters.isEmpty else { return nil }
        var tests: [(field: String, passes: (String) -> Bool)] = []
        for filter in filters {
            guard let type = schema.fields[filter.field] else { throw .unknownField(filter.field, known: schema.fields.keys.sorted()) }
            switch type {
            case .string:
                let wanted = Array(filter.value.utf8)
                tests.append((filter.field, { Array($0.utf8) == wanted }))
            case .text:
                let words = Set(TextWords.words(in: filter.value))
                guard !words.isEmpty else { throw .invalidValue(name: "fq", reason: "\(filter.field): no words to search for") }
                tests.append((filter.field, { words.isSubset(of: TextWords.words(in: $0)) }))
            case .int, .float:
                switch try checkingInput({ () throws(VisualSearchError) in try filter.numericCondition() }) {
                case .equals(let value): tests.append((filter.field, { Double($0) == value }))
                case .range(let low, let high): tests.append((filter.field, { Double($0).map { (low...high).contains($0) } ?? false }))
                }
            }
        }
        return try read { state in
            Set(state.images.values.filter { image in
                tests.allSatisfy { test in image.item.metadata[test.field].map { !$0.isEmpty && test.passes($0) } ?? false }
            }.map(\.id))
        }
    }

    public func valueMaps(for ids: [Int64], fields: [String]?) async throws(CatalogStoreError) -> [Int64: [String: String]] {
        try read { state in
            let wanted = Set(ids)
            var maps: [Int64: [String: String]] = [:]
            for image in state.images.values where wanted.contains(image.id) {
                let values = stored(image.item.metadata, in: state).filter { fields?.contains($0.key) ?? true }
                if !values.isEmpty { maps[image.id] = values }
            }
            return maps
        }
    }

    public func facetCounts(_ fields: [String], schema: FieldSchema, ids: [Int64]?,
                            limit: Int) async throws(CatalogStoreError) -> [FieldAggregate] {
        let names = try checkingInput { () throws(VisualSearchError) in try FacetShaper.fields(fields, schema: schema) }
        return try read { state in
            let scope = ids.map(Set.init)
            let images = state.images.values.filter { scope?.contains($0.id) ?? true }
            return names.compactMap { name -> FieldAggregate? in
                guard let type = schema.fields[name] else { return nil }
                let values = images.compactMap { stored($0.item.metadata, in: state)[name] }
                if type.isNumeric {
                    let numbers = values.compactMap(Double.init)
                    return .range(field: name, min: numbers.min(), max: numbers.max())
                }
                let counts = Dictionary(values.map { ($0, 1) }, uniquingKeysWith: +)
                let ordered = counts.sorted { $0.value != $1.value ? $0.value > $1.value
                    : Array($0.key.utf8).lexicographicallyPrecedes(Array($1.key.utf8)) }
                return .values(field: name, counts: ordered.prefix(max(0, limit)).map { (value: $0.key, count: $0.value) })
            }
        }
    }

    public func export() async throws(CatalogStoreError) -> [ExportedImage] {
        try read { state in
            state.images.values.sorted { Array($0.item.imageName.utf8).lexicographicallyPrecedes(Array($1.item.imageName.utf8)) }.map {
                ExportedImage(imageName: $0.item.imageName, source: $0.item.source, width: $0.item.width, height: $0.item.height,
                              metadata: stored($0.item.metadata, in: state))
            }
        }
    }

    /// The values a store keeps: declared fields with a non-empty value.
    func stored(_ metadata: [String: String], in state: State) -> [String: String] {
        metadata.filter { state.fields[$0.key] != nil && !$0.value.isEmpty }
    }

    // MARK: - Writer

    public func declare(_ schema: FieldSchema) async throws(CatalogStoreError) {
        try write { (state: inout State) throws(CatalogStoreError) in
            var changed = false
            for (name, type) in schema.fields.sorted(by: { $0.key < $1.key }) {
                if let current = state.fields[name] {
                    guard current != type else { continue }
                    let used = state.images.values.filter { !($0.item.metadata[name] ?? "").isEmpty }.count
                    guard used == 0 else {
                        throw CatalogStoreError.retypeRefusal(field: name, current: current.rawValue, requested: type, imagesWithValues: used)
                    }
                }
                state.fields[name] = type
                changed = true
            }
            if changed { state.version += 1 }
        }
    }

    public func upsert(_ items: [CatalogItem], schema: FieldSchema) async throws(CatalogStoreError) {
        guard !items.isEmpty else { return }
        try CatalogItem.checkVectors(of: items)
        try checkingInput { () throws(VisualSearchError) in try MetadataTable.check(items.map { ($0.imageName, $0.metadata) }, schema: schema) }
        try write { (state: inout State) throws(CatalogStoreError) in
            let dimension = state.learnedModel?.dimension
            for item in items {
                if let learned = item.learned, learned.count != dimension {
                    throw .invalidValue(name: "learned", reason: "\(item.imageName)'s learned vector has \(learned.count) values; "
                                            + (dimension.map { "the catalog's model makes \($0)" } ?? "the catalog has recorded no learned model"))
                }
                var kept = item
                kept.metadata = item.metadata.filter { schema.fields[$0.key] != nil && !$0.value.isEmpty }
                let id = state.images[item.imageName]?.id ?? state.nextID
                if id == state.nextID { state.nextID += 1 }
                state.images[item.imageName] = Image(id: id, item: kept)
            }
            state.version += 1
        }
    }

    public func updateMetadata(_ updates: [MetadataUpdate], schema: FieldSchema) async throws(CatalogStoreError) {
        try checkingInput { () throws(VisualSearchError) in try MetadataTable.check(updates.map { ($0.imageName, $0.metadata) }, schema: schema) }
        try write { state in
            var updated = 0
            for update in updates where state.images[update.imageName] != nil {
                state.images[update.imageName]?.item.metadata = update.metadata.filter { schema.fields[$0.key] != nil && !$0.value.isEmpty }
                updated += 1
            }
            if updated > 0 { state.version += 1 }
        }
    }

    public func remove(_ imageNames: [String]) async throws(CatalogStoreError) -> Int {
        try write { state in
            let removed = Set(imageNames).filter { state.images.removeValue(forKey: $0) != nil }.count
            if removed > 0 { state.version += 1 }
            return removed
        }
    }

    public func recordLearnedModel(_ descriptor: EmbeddingDescriptor) async throws(CatalogStoreError) {
        try write { state in
            guard state.learnedModel != descriptor else { return }
            if let old = state.learnedModel, !descriptor.makesSameVectors(as: old) {
                for name in state.images.keys { state.images[name]?.item.learned = nil }
            }
            state.learnedModel = descriptor
            state.version += 1
        }
    }

    // MARK: - Admin

    public func integrityCheck() async throws(CatalogStoreError) -> String { "ok" }

    // MARK: - Insert journal

    public func saveInsertTransaction(_ progress: InsertStatusResponse.Progress) async throws(CatalogStoreError) {
        try write { state in
            state.transactions.removeAll { $0.id == progress.transactionID }
            state.transactions.append((progress.transactionID, progress))
            if state.transactions.count > InsertStatusResponse.Progress.transactionsKept { state.transactions.removeFirst(state.transactions.count - InsertStatusResponse.Progress.transactionsKept) }
        }
    }

    public func insertTransaction(_ id: String) async throws(CatalogStoreError) -> InsertStatusResponse.Progress? {
        try read { state in state.transactions.last { $0.id == id }?.progress }
    }
}
