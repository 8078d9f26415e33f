import CHNSWIndex
import Foundation
import ConcurrencyToolkit

/// The embedded store's approximate k-NN: an ``HNSWGraph`` per vector space
/// the catalog holds (colour; learned when it has a model), kept in step
/// with the engine's ``FeatureIndex`` — the catalog as last read — and saved
/// beside the catalog (``GraphFiles``).
///
/// **Never stale.** Whatever a saved graph's manifest says, ``update(to:version:model:policy:)``
/// compares the graph with the index row by row (labels are catalog ids;
/// each vector as the graph rounds it) before the graph answers: rows it
/// lacks or holds with another vector are added, ids the catalog no longer
/// has are removed. So a graph saved at an older version, by another
/// process, or before a crash is caught up, and one that is damaged (size,
/// checksum, structure) is rebuilt. The same comparison runs when the
/// engine sees the catalog's version move (inserts and removals by `vsearch
/// serve`'s data API or `vsearch index`): only what changed is touched.
///
/// The graphs only choose candidates (``candidates(for:space:wanted:ef:index:allowed:excluding:)``);
/// the engine scores them exactly, so a result's score is the exact scan's.
public final class ApproximateIndex: Sendable {
    /// Where graphs are saved; nil: in memory only.
    public let files: GraphFiles?
    let state = Locked(State())
    /// Held by the thread running an update, so two never interleave.
    let updating = NSLock()
    /// Held by the thread running a compaction, so two never build the same graph twice.
    let compacting = NSLock()

    struct State {
        var graphs: [VectorSpace: HNSWGraph] = [:]
        /// The catalog version the graphs reflect, once updated.
        var version: Int?
        /// Whether the graphs changed since they were last saved (or loaded).
        var dirty = false
        /// Each graph's vectors' fingerprint (``FeatureIndex/fingerprint(of:)``) as last compared.
        var fingerprints: [VectorSpace: UInt64] = [:]
        var savedAt = ContinuousClock.now
        /// Saved graphs read ahead (``preload(_:capacity:)``), for the next update.
        var preloaded: [SpaceKey: GraphFiles.Loaded] = [:]
        /// The index the graphs reflect (at ``version``), for ``compact(policy:)`` to rebuild from;
        /// the engine's own snapshot, shared: holding it copies nothing.
        var index: FeatureIndex?
        /// The learned model the graphs reflect.
        var model: String?
        /// Counts the updates that reached the graphs (the version can stay while the
        /// content moves: a caller may update to the same version twice).
        var generation = 0
    }

    /// A space with the vectors and model its graph must have.
    public struct SpaceKey: Sendable, Hashable {
        public var space: VectorSpace
        public var dimensions: Int
        public var model: String?

        public init(space: VectorSpace, dimensions: Int, model: String?) {
            self.space = space
            self.dimensions = dimensions
            self.model = model
        }
    }

    /// Reads the saved graphs of `spaces` on a thread of its own, with room
    /// for `capacity` vectors, for the next update to use instead of reading
    /// them then: an engine opening a catalog reads them while it reads the vectors.
    public func preload(_ spaces: [SpaceKey], capacity: Int) async {
        guard let files else { return }
        _ = try? await Self.onOwnThread { () throws(HNSWGraphError) in
            for key in spaces {
                let loaded = files.load(key.space, dimensions: key.dimensions, model: key.model, capacity: capacity)
                if case .missing = loaded { continue }
                self.state.withLock { $0.preloaded[key] = loaded }
            }
        }
    }

    /// When an update may build a graph that is missing or unusable.
    public struct Policy: Sendable {
        /// Build what is missing (false: only load and catch up saved graphs).
        public var builds: Bool
        /// Save after building or catching up, at most once per `saveInterval` (a build always).
        public var saves: Bool
        public var saveInterval: Duration = .seconds(60)
        /// Threads adding vectors.
        public var threads: Int = ProcessInfo.processInfo.activeProcessorCount
        /// Called now and then while vectors are added: the space, done, total; false stops.
        public var progress: (@Sendable (VectorSpace, Int, Int) -> Bool)?
        /// The share of a graph's nodes that may be removed rows (holes: hnswlib only marks them)
        /// before ``ApproximateIndex/compact(policy:)`` rebuilds it: a tenth, chosen, not measured.
        public var compactionShare = 0.1
        /// Fewer removed rows than this never call for a rebuild: a small catalog's holes cost nothing.
        public var compactionMinimum = 1_000
        /// Threads a compaction builds with: one, so a server's searches keep the other cores
        /// (the last catch-up, under the update lock, uses ``threads``).
        public var compactionThreads = 1

        public init(builds: Bool, saves: Bool) {
            self.builds = builds
            self.saves = saves
        }
    }

    /// What an update did, per space.
    public struct Report: Sendable {
        public struct Space: Sendable {
            public var space: VectorSpace
            /// Loaded from a saved graph.
            public var loaded = false
            /// Built from scratch.
            public var built = false
            /// Rebuilt without its removed rows by ``ApproximateIndex/compact(policy:)``
            /// (``removed`` then counts the holes it dropped).
            public var compacted = false
            /// Why a saved graph was not used, when it was not.
            public var unusable: String?
            public var added = 0
            public var replaced = 0
            public var removed = 0
            public var count = 0
            public var memoryBytes = 0
            public var seconds = 0.0
        }

        public var spaces: [Space] = []
        /// Saved to disk by this update.
        public var saved = false
        /// Why a compaction (``ApproximateIndex/compact(policy:)``) stopped, when it failed:
        /// the graph it meant to replace goes on answering.
        public var compactionFailure: String?

        public init() {}
    }

    public init(files: GraphFiles?) {
        self.files = files
    }

    /// The graphs, by space, as last updated.
    public var graphs: [VectorSpace: HNSWGraph] { state.withLock { $0.graphs } }
    /// The catalog version the graphs reflect; nil before the first update.
    public var version: Int? { state.withLock { $0.version } }

    /// Brings every space's graph in step with `index` (the catalog at
    /// `version`), on a thread of its own: loads a saved graph or builds one
    /// as `policy` allows, then compares it with the index (see the type's note).
    /// A space without a graph afterwards (none saved and `builds` false) answers exactly.
    /// - Throws: ``HNSWGraphError`` when a graph cannot be built (memory) or
    ///   the progress callback stopped it; saving failures are reported, not thrown.
    ///
    /// With `changes` — what brought the index from the catalog at version `base` to `version`
    /// (``CatalogChanges``) — graphs in step with `base` touch only the changed rows: no row-by-row comparison.
    public func update(to index: FeatureIndex, version: Int, model: String?, policy: Policy,
                       changes: CatalogChanges? = nil, from base: Int? = nil) async throws(HNSWGraphError) -> Report {
        try await Self.onOwnThread { () throws(HNSWGraphError) in
            try self.updateNow(to: index, version: version, model: model, policy: policy, changes: changes, from: base)
        }
    }

    /// ``update(to:version:model:policy:changes:from:)`` on the caller's thread.
    func updateNow(to index: FeatureIndex, version: Int, model: String?, policy: Policy,
                   changes: CatalogChanges? = nil, from base: Int? = nil) throws(HNSWGraphError) -> Report {
        updating.lock()
        defer { updating.unlock() }
        var report = Report()
        var spaces: [(VectorSpace, Int, String?)] = [(.color, index.dimensions, nil)]
        if index.learnedDimensions > 0 && index.learnedCount > 0 { spaces.append((.learned, index.learnedDimensions, model)) }
        if let changes, let base, let caughtUp = try applyNow(changes, to: index, spaces: spaces, from: base, version: version, policy: policy) {
            return caughtUp
        }
        var graphs = state.withLock { $0.graphs }
        var fingerprints: [VectorSpace: UInt64] = [:]
        var recordsFingerprint = false
        for (space, dimensions, spaceModel) in spaces {
            let started = ContinuousClock.now
            var entry = Report.Space(space: space)
            var graph = graphs[space].flatMap { $0.dimensions == dimensions ? $0 : nil }
            let fingerprint = index.fingerprint(of: space)
            var compared = graph != nil ? state.withLock { $0.fingerprints[space] } : nil
            let preloaded = state.withLock { $0.preloaded.removeValue(forKey: SpaceKey(space: space, dimensions: dimensions, model: spaceModel)) }
            if graph == nil, let files {
                switch preloaded ?? files.load(space, dimensions: dimensions, model: spaceModel, capacity: index.count) {
                case .graph(let loaded, let manifest):
                    graph = loaded
                    compared = manifest.vectors
                    entry.loaded = true
                case .missing:
                    break
                case .unusable(let reason):
                    entry.unusable = reason
                }
            }
            if graph == nil {
                guard policy.builds else {
                    if entry.unusable != nil { report.spaces.append(entry) }  // no graph, but say why the saved one was not used
                    continue
                }
                graph = try HNSWGraph(dimensions: dimensions, capacity: max(1, index.count))
                entry.built = true
            }
            guard var graph else { continue }
            // A loaded graph whose manifest says the catalog's vectors are the ones it was compared with is
            // compared all the same — in one pass, no catching up — for the manifest is the file's word,
            // not the catalog's: a graph with labels swapped or vectors changed (its checksum recomputed) is refused.
            if entry.loaded && compared == fingerprint, let damage = Self.disagreement(of: graph, space: space, with: index) {
                guard let fresh = try Self.replacing(&entry, because: damage, dimensions: dimensions, capacity: index.count, policy: policy) else {
                    report.spaces.append(entry)
                    continue
                }
                graph = fresh
            }
            // The vectors it was last compared with are these (CRC-32 of ids and rows): nothing to catch up.
            if compared != fingerprint || entry.built {
                try catchUp(graph, space: space, to: index, policy: policy, report: &entry)
                // A saved manifest with another fingerprint is out of date even when no row changed: saving
                // it again spares the next open this comparison.
                if entry.loaded { recordsFingerprint = true }
            }
            // Links can be re-pointed inside the graph with every label and vector intact: a loaded graph must
            // find rows by their own vectors (``spotCheck(_:space:index:)``) before it answers.
            if entry.loaded, let damage = Self.spotCheck(graph, space: space, index: index) {
                guard let fresh = try Self.replacing(&entry, because: damage, dimensions: dimensions, capacity: index.count, policy: policy) else {
                    report.spaces.append(entry)
                    continue
                }
                graph = fresh
                try catchUp(graph, space: space, to: index, policy: policy, report: &entry)
            }
            fingerprints[space] = fingerprint
            entry.count = graph.count
            entry.memoryBytes = graph.memoryBytes
            entry.seconds = Self.seconds(ContinuousClock.now - started)
            graphs[space] = graph
            report.spaces.append(entry)
        }
        let kept = Set(spaces.map(\.0))
        graphs = graphs.filter { kept.contains($0.key) }
        state.withLock { $0.preloaded = [:] }  // read ahead for other vectors or model: not used
        let built = report.spaces.contains(where: \.built)
        let changed = built || recordsFingerprint || report.spaces.contains { $0.added + $0.replaced + $0.removed > 0 }
        let due = state.withLock { state in
            state.graphs = graphs
            state.fingerprints = fingerprints
            state.version = version
            state.index = index
            state.model = model
            state.generation += 1
            state.dirty = state.dirty || changed
            return state.dirty && (built || ContinuousClock.now - state.savedAt >= policy.saveInterval)
        }
        if policy.saves, let files, due {
            report.saved = (try? save(graphs, to: files, version: version, model: model)) != nil
        }
        return report
    }

    /// Applies `changes` to graphs in step with the catalog at `base` (every space of `spaces` has one of
    /// its dimension): removed ids and rows without a vector in a space are removed, the changed rows added
    /// (replacing their old vectors). Nil, touching nothing, when the graphs are not in step with `base`.
    func applyNow(_ changes: CatalogChanges, to index: FeatureIndex, spaces: [(VectorSpace, Int, String?)], from base: Int,
                  version: Int, policy: Policy) throws(HNSWGraphError) -> Report? {
        let (graphs, current) = state.withLock { ($0.graphs, $0.version) }
        guard current == base, spaces.allSatisfy({ graphs[$0.0]?.dimensions == $0.1 }), graphs.count == spaces.count else { return nil }
        var report = Report()
        var fingerprints: [VectorSpace: UInt64] = [:]
        for (space, dimensions, _) in spaces {
            let started = ContinuousClock.now
            guard let graph = graphs[space] else { return nil }
            var entry = Report.Space(space: space)
            let rows = changes.rows
            var labels: [Int64] = []
            var gone = changes.removed
            var vectors: [Float] = []
            var scratch = [Float](repeating: 0, count: dimensions)
            for row in 0..<rows.count {
                let id = rows.ids[row]
                guard rows.hasVector(at: row, space: space) else {
                    gone.append(id)  // no vector in this space any more
                    continue
                }
                switch rows.withVector(at: row, space: space, into: &scratch, { graph.presence(of: id, vector: $0) }) {
                case .same?: continue
                case .different?: entry.replaced += 1
                default: entry.added += 1
                }
                labels.append(id)
                let start = vectors.count
                vectors.append(contentsOf: repeatElement(0, count: dimensions))
                vectors.withUnsafeMutableBufferPointer { rows.copyVector(at: row, space: space, to: $0.baseAddress! + start) }
            }
            entry.removed = graph.remove(gone)
            try vectors.withUnsafeBufferPointer { buffer throws(HNSWGraphError) in
                try graph.add(labels: labels, vectors: buffer, threads: policy.threads, progress: nil)
            }
            fingerprints[space] = index.fingerprint(of: space)
            entry.count = graph.count
            entry.memoryBytes = graph.memoryBytes
            entry.seconds = Self.seconds(ContinuousClock.now - started)
            report.spaces.append(entry)
        }
        let changed = report.spaces.contains { $0.added + $0.replaced + $0.removed > 0 }
        let due = state.withLock { state in
            state.fingerprints = fingerprints
            state.version = version
            state.index = index
            state.generation += 1
            state.dirty = state.dirty || changed
            return state.dirty && ContinuousClock.now - state.savedAt >= policy.saveInterval
        }
        if policy.saves, let files, due {
            report.saved = (try? save(graphs, to: files, version: version, model: spaces.first { $0.0 == .learned }?.2)) != nil
        }
        return report
    }

    /// The spaces whose graph holds more removed rows than `policy` allows
    /// (``Policy/compactionShare`` of its nodes, and at least ``Policy/compactionMinimum``).
    public func spacesToCompact(policy: Policy) -> [VectorSpace] {
        graphs.filter { Self.needsCompaction($0.value, policy: policy) }.keys.sorted { $0.fileName < $1.fileName }
    }

    static func needsCompaction(_ graph: HNSWGraph, policy: Policy) -> Bool {
        let holes = graph.nodes - graph.count
        return holes >= max(1, policy.compactionMinimum) && Double(holes) > policy.compactionShare * Double(graph.nodes)
    }

    /// Rebuilds, on a thread of its own, each graph that holds more removed
    /// rows than `policy` allows, one space after the other, from the index
    /// the graphs reflect — while the old graph goes on answering and
    /// catching up — then catches the new graph up with what changed
    /// meanwhile (the rest of it under the update lock) and puts it in the old
    /// one's place, saved when `policy` saves. Removed rows only cost memory
    /// and walks until then (hnswlib marks them; searches step over them).
    /// An empty report when nothing was due, or another compaction is running.
    /// - Throws: ``HNSWGraphError`` when a graph cannot be built (memory) or
    ///   `policy`'s progress callback stopped it (the old graph stays).
    public func compact(policy: Policy) async throws(HNSWGraphError) -> Report {
        try await Self.onOwnThread { () throws(HNSWGraphError) in try self.compactNow(policy: policy) }
    }

    /// ``compact(policy:)`` on the caller's thread.
    func compactNow(policy: Policy) throws(HNSWGraphError) -> Report {
        guard compacting.try() else { return Report() }
        defer { compacting.unlock() }
        var report = Report()
        for space in spacesToCompact(policy: policy) { try compactNow(space, policy: policy, into: &report) }
        return report
    }

    /// Rebuilds one space's graph, swaps it in and adds what it did to `report`; nothing when the graph
    /// was replaced meanwhile (rebuilt as damaged).
    func compactNow(_ space: VectorSpace, policy: Policy, into report: inout Report) throws(HNSWGraphError) {
        let started = ContinuousClock.now
        let (old, base, baseGeneration) = state.withLock { ($0.graphs[space], $0.index, $0.generation) }
        guard let old, let base else { return }
        var entry = Report.Space(space: space)
        entry.compacted = true
        var building = policy
        building.threads = max(1, policy.compactionThreads)
        // Room for what arrives while it builds, so the catch-ups rarely grow it.
        let fresh = try HNSWGraph(dimensions: old.dimensions, capacity: max(1, base.count + base.count / 8))
        var built = Report.Space(space: space)
        try catchUp(fresh, space: space, to: base, policy: building, report: &built)
        var reflected = baseGeneration
        // What changed while it built, caught up outside the update lock: updates and searches go on.
        let (latest, latestGeneration) = state.withLock { ($0.index, $0.generation) }
        if latestGeneration != reflected, let latest {
            try catchUp(fresh, space: space, to: latest, policy: building, report: &entry)
            reflected = latestGeneration
        }
        updating.lock()
        defer { updating.unlock() }
        let (current, index, generation, version, model) = state.withLock { ($0.graphs[space], $0.index, $0.generation, $0.version, $0.model) }
        guard current === old, let index else { return }
        if generation != reflected { try catchUp(fresh, space: space, to: index, policy: policy, report: &entry) }
        entry.removed = old.nodes - old.count  // the holes dropped (the catch-ups' own removals are holes in the new graph)
        entry.count = fresh.count
        entry.memoryBytes = fresh.memoryBytes
        let graphs = state.withLock { state in
            state.graphs[space] = fresh
            state.dirty = true
            return state.graphs
        }
        if policy.saves, let files, let version {
            report.saved = (try? save(graphs, to: files, version: version, model: model)) != nil
        }
        entry.seconds = Self.seconds(ContinuousClock.now - started)
        report.spaces.append(entry)
    }

    /// Saves every graph that changed since it was last saved, as reflecting
    /// the version last updated to (a server's shutdown, `vsearch index`'s
    /// end), on a thread of its own.
    /// - Throws: ``HNSWGraphError`` when a file cannot be written.
    public func save(model: String?) async throws(HNSWGraphError) {
        try await Self.onOwnThread { () throws(HNSWGraphError) in try self.saveNow(model: model) }
    }

    /// ``save(model:)`` on the caller's thread.
    func saveNow(model: String?) throws(HNSWGraphError) {
        guard let files else { return }
        updating.lock()
        defer { updating.unlock() }
        let (graphs, version, dirty) = state.withLock { ($0.graphs, $0.version, $0.dirty) }
        guard let version, dirty, !graphs.isEmpty else { return }
        try save(graphs, to: files, version: version, model: model)
    }

    func save(_ graphs: [VectorSpace: HNSWGraph], to files: GraphFiles, version: Int, model: String?) throws(HNSWGraphError) {
        let fingerprints = state.withLock { $0.fingerprints }
        for (space, graph) in graphs.sorted(by: { $0.key.fileName < $1.key.fileName }) {
            try files.save(graph, space: space, model: space == .learned ? model : nil, catalogVersion: version,
                           vectors: fingerprints[space])
        }
        state.withLock {
            $0.dirty = false
            $0.savedAt = .now
        }
    }

    /// Records that a loaded graph is not used and why; an empty graph to
    /// build instead when `policy` builds, else nil (the space answers exactly
    /// and a one-shot command says why).
    static func replacing(_ entry: inout Report.Space, because damage: String, dimensions: Int, capacity: Int,
                          policy: Policy) throws(HNSWGraphError) -> HNSWGraph? {
        entry = Report.Space(space: entry.space)
        entry.unusable = damage
        guard policy.builds else { return nil }
        entry.built = true
        return try HNSWGraph(dimensions: dimensions, capacity: max(1, capacity))
    }

    /// Why `graph` is not the catalog's rows in `space`, when it is not: a row
    /// it does not hold with that row's vector under that row's id, or more
    /// vectors than the catalog has rows there. Nil when it is exactly them.
    /// One pass in C (``HNSWGraph/mismatches(labels:vectors:)``), no catching up.
    static func disagreement(of graph: HNSWGraph, space: VectorSpace, with index: FeatureIndex) -> String? {
        let dimensions = graph.dimensions
        var rows = 0, mismatched = 0
        if space == .color {
            guard dimensions == index.dimensions else { return "it holds \(dimensions)-float vectors, the catalog \(index.dimensions)-float ones" }
            rows = index.count
            index.ids.withUnsafeBufferPointer { ids in
                index.vectors.forEachBlock { first, vectors in
                    let inBlock = vectors.count / dimensions
                    mismatched += graph.mismatches(labels: UnsafeBufferPointer(rebasing: ids[first..<(first + inBlock)]), vectors: vectors)
                }
            }
        } else {
            // The learned rows are the graph's own rounding already (``FeatureIndex/copyVector(at:space:to:)``
            // gives their unit form, which rounds back to the same Int8s): compared as bytes, in runs of rows
            // that hold a vector within each block of rows.
            guard let learned = index.learned, dimensions == learned.dimensions else {
                return "it holds \(dimensions)-float vectors, the catalog \(index.learnedDimensions)-float ones"
            }
            index.ids.withUnsafeBufferPointer { ids in
                learned.values.forEachBlock { first, values in
                    let last = first + values.count / dimensions
                    var row = first
                    while row < last {
                        guard learned.hasVector(at: row) else { row += 1; continue }
                        var end = row + 1
                        while end < last && learned.hasVector(at: end) { end += 1 }
                        rows += end - row
                        mismatched += graph.mismatches(labels: UnsafeBufferPointer(rebasing: ids[row..<end]),
                                                       rounded: UnsafeBufferPointer(rebasing: values[((row - first) * dimensions)..<((end - first) * dimensions)]))
                        row = end
                    }
                }
            }
        }
        if mismatched > 0 {
            return "its manifest says it reflects the catalog's vectors, but \(mismatched) of the catalog's \(rows) rows are not in it "
                + "as the catalog holds them (labels or vectors changed)"
        }
        if graph.count != rows {
            return "its manifest says it reflects the catalog's vectors, but it holds \(graph.count) vectors for the catalog's \(rows)"
        }
        return nil
    }

    /// Rows a loaded graph is searched for by their own vectors before it answers.
    static let spotChecks = 16
    /// Candidates each of those searches walks (16 searches: tens of milliseconds at 1M). An honest graph
    /// does not find every row by its own vector: on scale.py's 1M learned catalog (a healthy graph, M 16,
    /// efConstruction 128) a row came back among its first 10 for 350 of 500 rows at ef 40, 407 at ef 128
    /// and 448 at ef 512 (2026-11-29) — with ef 128 and "more than a quarter missing", about one load in
    /// six called it damaged and rebuilt it (150 s of a server's start).
    static let spotCheckEf = 512
    /// Results among which a row searched for by its own vector must be (or a row with the same vector).
    static let spotCheckTop = 10

    /// Searches a loaded graph for ``spotChecks`` random rows by their own vectors: each should come
    /// back among the first ``spotCheckTop`` (or a row holding the same vector: duplicates). A graph
    /// whose links were re-pointed — in range, checksum recomputed, so its structure holds — loses its
    /// way and misses nearly all; more than half missing says it is damaged. An honest graph misses
    /// some (HNSW is approximate: a tenth of the rows on the 1M catalog above), hence the margin: at a
    /// tenth, 9 of 16 missing happens about six times in a million loads. What it cannot see: a few
    /// links changed among many, which costs recall, never a wrong score — the engine scores every
    /// candidate exactly.
    static func spotCheck(_ graph: HNSWGraph, space: VectorSpace, index: FeatureIndex) -> String? {
        guard index.count > 0 else { return nil }
        var random = SystemRandomNumberGenerator()
        var rows = Set<Int>()
        for _ in 0..<(spotChecks * 4) where rows.count < spotChecks {
            let row = Int.random(in: 0..<index.count, using: &random)
            if index.hasVector(at: row, space: space) { rows.insert(row) }
        }
        var scratch = [Float](repeating: 0, count: graph.dimensions)
        var missed = 0
        for row in rows.sorted() {
            let id = index.ids[row]
            let found = index.withVector(at: row, space: space, into: &scratch) { vector -> Bool in
                let found = graph.search(vector, ef: spotCheckEf).prefix(spotCheckTop)
                return found.contains(id) || found.contains { graph.presence(of: $0, vector: vector) == .same }
            }
            if found == false { missed += 1 }
        }
        guard missed * 2 > rows.count else { return nil }
        return "\(missed) of \(rows.count) rows searched for by their own vectors were not found: its links are damaged"
    }

    /// Adds the rows `graph` lacks or holds with another vector, removes the ids `index` no longer has.
    func catchUp(_ graph: HNSWGraph, space: VectorSpace, to index: FeatureIndex, policy: Policy,
                 report: inout Report.Space) throws(HNSWGraphError) {
        var present = Set(graph.labels())
        var stale: [Int] = []
        let dimensions = space == .color ? index.dimensions : index.learnedDimensions
        var scratch = [Float](repeating: 0, count: dimensions)
        for row in 0..<index.count {
            let id = index.ids[row]
            let wasPresent = present.remove(id) != nil
            guard let needsAdding = index.withVector(at: row, space: space, into: &scratch, {
                !wasPresent || graph.presence(of: id, vector: $0) != .same
            }) else {
                if wasPresent { present.insert(id) }  // no vector in this space any more: removed below
                continue
            }
            guard needsAdding else { continue }
            stale.append(row)
            if wasPresent { report.replaced += 1 } else { report.added += 1 }
        }
        report.removed = graph.remove(Array(present))
        let chunk = 65_536
        var done = 0
        for start in stride(from: 0, to: stale.count, by: chunk) {
            let rows = stale[start..<min(stale.count, start + chunk)]
            var vectors = [Float](repeating: 0, count: rows.count * dimensions)
            vectors.withUnsafeMutableBufferPointer { buffer in
                for (offset, row) in rows.enumerated() {
                    index.copyVector(at: row, space: space, to: buffer.baseAddress! + offset * dimensions)
                }
            }
            let labels = rows.map { index.ids[$0] }
            let before = done
            try vectors.withUnsafeBufferPointer { buffer throws(HNSWGraphError) in
                try graph.add(labels: labels, vectors: buffer, threads: policy.threads, progress: policy.progress.map { callback in
                    { added, _ in callback(space, before + added, stale.count) }
                })
            }
            done += rows.count
        }
    }

    /// The rows `graph` finds nearest `query`: at least `wanted` of them
    /// passing `allowed` (every row when nil) and not `excluding`, searching
    /// with `ef` candidates and widening (doubling `ef`, up to
    /// ``widestSearch``) while a filter leaves too few — starting from `ef`
    /// divided by the filter's share of the rows; nil when even the
    /// widest search leaves too few — the caller then scans the filtered
    /// rows exactly, so a page is always full.
    public func candidates(for query: [Float], space: VectorSpace, wanted: Int, ef: Int, index: FeatureIndex,
                           allowed: RowSet?, excluding: Int?) -> [Int]? {
        guard let graph = graphs[space], query.count == graph.dimensions else { return nil }
        var ef = max(ef, wanted + (excluding == nil ? 0 : 1))
        if let allowed, allowed.count < index.count {
            // As many candidates as leave `ef` that pass a filter keeping this share of the rows.
            let share = Double(max(1, allowed.count)) / Double(max(1, index.count))
            ef = min(Self.widestSearch, Int((Double(ef) / share).rounded(.up)))
        }
        while true {
            let searched = min(ef, Self.widestSearch)
            let labels = query.withUnsafeBufferPointer { graph.search($0.baseAddress!, ef: searched) }
            var rows: [Int] = []
            rows.reserveCapacity(labels.count)
            for label in labels {
                guard let row = index.row(id: label), row != excluding, allowed?.contains(row) ?? true else { continue }
                rows.append(row)
            }
            if rows.count >= wanted || labels.count < searched { return rows }
            if searched >= Self.widestSearch { return nil }
            ef = searched * 2
        }
    }

    /// Runs `body` on a thread of its own and awaits it (``OwnThread``): updates and saves
    /// take seconds to minutes of CPU and disk, never the cooperative pool's threads.
    static func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws(HNSWGraphError) -> T) async throws(HNSWGraphError) -> T {
        try await OwnThread.run(named: "vsearch-hnsw", body)
    }

    /// The most candidates one search walks for (pgvector's `hnsw.max_scan_tuples` is 20 000).
    public static let widestSearch = 20_000

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// A set of index rows as one bit each: the rows an `fq` filter leaves, tested per candidate.
public struct RowSet: Sendable {
    var words: [UInt64]
    /// How many rows are in the set.
    public let count: Int

    /// The set of `rows` among `capacity` rows.
    public init(_ rows: [Int], capacity: Int) {
        var words = [UInt64](repeating: 0, count: (capacity + 63) / 64)
        for row in rows where row >= 0 && row < capacity { words[row >> 6] |= 1 << UInt64(row & 63) }
        self.words = words
        count = rows.count
    }

    public func contains(_ row: Int) -> Bool {
        row >= 0 && row >> 6 < words.count && words[row >> 6] & (1 << UInt64(row & 63)) != 0
    }
}

extension FeatureIndex {
    /// A fingerprint of every row's id and vector in `space`, in row order
    /// (two CRC-32s: of the ids, and of the vectors as stored): equal when a
    /// graph compared with these rows has nothing to catch up.
    func fingerprint(of space: VectorSpace) -> UInt64 {
        let ids = self.ids.withUnsafeBytes { vshnsw_crc32(0, $0.baseAddress, $0.count) }
        var rows: UInt32 = 0
        switch space {
        case .color:
            vectors.forEachBlock { _, block in rows = vshnsw_crc32(rows, block.baseAddress, block.count * MemoryLayout<Float>.size) }
        case .learned:
            guard let learned else { break }
            learned.values.forEachBlock { _, block in rows = vshnsw_crc32(rows, block.baseAddress, block.count) }
            rows = learned.inverseNorms.withUnsafeBytes { vshnsw_crc32(rows, $0.baseAddress, $0.count) }
        }
        return UInt64(ids) << 32 | UInt64(rows)
    }

    /// Whether a row has a vector in `space` (every row has a colour one).
    func hasVector(at row: Int, space: VectorSpace) -> Bool {
        space == .color || (learned?.hasVector(at: row) ?? false)
    }

    /// Writes a row's vector in `space` — the learned one as its unit `Float`
    /// form, which the graph rounds back to the same `Int8`s — to `target`.
    func copyVector(at row: Int, space: VectorSpace, to target: UnsafeMutablePointer<Float>) {
        switch space {
        case .color:
            vectors.withRow(row) { target.update(from: $0.baseAddress!, count: dimensions) }
        case .learned:
            guard let learned else { return }
            let scale = learned.inverseNorms[row]
            learned.values.withRow(row) { values in
                for i in 0..<values.count { target[i] = Float(values[i]) * scale }
            }
        }
    }

    /// `body` with a pointer to a row's vector in `space` (through `scratch`
    /// for the learned one); nil when the row has none.
    func withVector<T>(at row: Int, space: VectorSpace, into scratch: inout [Float], _ body: (UnsafePointer<Float>) -> T) -> T? {
        guard hasVector(at: row, space: space) else { return nil }
        if space == .color {
            return vectors.withRow(row) { body($0.baseAddress!) }
        }
        return scratch.withUnsafeMutableBufferPointer { buffer in
            copyVector(at: row, space: space, to: buffer.baseAddress!)
            return body(UnsafePointer(buffer.baseAddress!))
        }
    }
}
