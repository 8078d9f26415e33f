import SearchEngine
import PostgresNIO
import VisualSearch

/// k-NN inside PostgreSQL. Two ways to find the candidates:
/// - **exact**: `ORDER BY features <#> q` (negative inner product). No index
///   serves that operator, so PostgreSQL scans every row of the scope (after
///   the filters' own indexes narrowed it) and keeps the top rows: recall 1,
///   cost linear in the scope, and the order is the engine's own (the dot
///   product);
/// - **approximate**: `ORDER BY features <-> q` (L2), served by the HNSW
///   index with the session's `hnsw.ef_search` (from the settings) and
///   `hnsw.iterative_scan = relaxed_order` (both set when the connection
///   opens), so a filter that rejects most of the first candidates, or a page
///   deeper than `ef_search`, still comes back full: pgvector keeps walking
///   the graph (up to `hnsw.max_scan_tuples`). The engine re-sorts the
///   relaxed order.
///
/// Learned similarity (``NeighbourTarget/learned(_:)``) runs the same two
/// ways on `learned::vector(N)`, whose HNSW expression index
/// ``recordLearnedModel(_:)`` made; a fused target orders exactly by the
/// fused score, and approximately by the union of both indexes' nearest
/// (the engine re-scores them). An image without a learned vector scores as
/// unrelated in the learned part, as in memory.
///
/// `auto` picks exact when the scope holds at most `exact_below` images or
/// too few for the iterative scan to fill the page, has a score range (its
/// total needs the scan anyway), or a page reaches deeper than
/// ``PostgreSQLSettings/approximateDepth`` results; approximate otherwise
/// (``PostgreSQLSettings/scansExactly(count:matching:catalogSize:scoreRange:)``).
extension PostgreSQLCatalogStore: NearestNeighbourStore {
    public func image(named imageName: String) async throws(CatalogStoreError) -> Neighbour? {
        try await withConnection { connection in
            let rows = try await connection.query("SELECT id, im_name, source, features::real[], learned::real[] FROM images WHERE im_name = \(imageName)",
                                                  logger: Self.silent)
            var found: Neighbour?
            for try await (id, name, source, vector, learned) in rows.decode((Int64, String, String, [Float], [Float]?).self) {
                found = Neighbour(id: id, name: name, source: source, vector: vector, learned: learned)
            }
            return found
        }
    }

    public func images(named imageNames: [String], in scope: NeighbourScope,
                       schema: FieldSchema) async throws(CatalogStoreError) -> [Neighbour] {
        guard !imageNames.isEmpty else { return [] }
        var binds = PostgresBindings()
        let condition = try Self.scopeCondition(scope, schema: schema, binds: &binds)
        binds.append(imageNames)
        let statement = PostgresQuery(unsafeSQL: "SELECT id, im_name, source, features::real[], learned::real[] FROM images WHERE im_name = ANY($\(binds.count)::text[]) AND \(condition)",
                                      binds: binds)
        return try await withConnection { connection in
            let rows = try await connection.query(statement, logger: Self.silent)
            var found: [Neighbour] = []
            for try await (id, name, source, vector, learned) in rows.decode((Int64, String, String, [Float], [Float]?).self) {
                found.append(Neighbour(id: id, name: name, source: source, vector: vector, learned: learned))
            }
            return found
        }
    }

    public func nearest(to target: NeighbourTarget, in scope: NeighbourScope, count: Int, matching: Int, catalogSize: Int,
                        schema: FieldSchema) async throws(CatalogStoreError) -> [Neighbour] {
        guard count > 0, matching > 0 else { return [] }
        let exact = settings.scansExactly(count: count, matching: matching, catalogSize: catalogSize, scoreRange: scope.scoreRange != nil)
        var binds = PostgresBindings()
        let condition = try Self.scopeCondition(scope, schema: schema, binds: &binds)
        // Exact: equal distances (the same photo under several names) break by
        // name in byte order, as the engine ranks them, so pages never overlap.
        // (A second sort key would keep the HNSW index from serving the approximate order.)
        // The vectors are converted to arrays after the LIMIT: converting every
        // row the scan sorts made an exact query 2.5 times slower (psql, 100k rows).
        let select = "SELECT id, im_name, source, features, learned FROM images WHERE \(condition)"
        let inner: String
        switch target {
        case .color(let vector), .learned(let vector):
            let column = Self.column(of: target, dimension: vector.count)
            binds.append(vector)
            let query = "$\(binds.count)::real[]::vector"
            binds.append(count)
            // Exact: an image without a learned vector is at dot product 0, as in memory (the approximate
            // order comes from the HNSW index, which holds only images with one).
            let exactOrder = column == "features" ? "\(column) <#> \(query)" : "COALESCE(\(column) <#> \(query), 0)"
            inner = "\(select) ORDER BY \(exact ? "\(exactOrder), im_name COLLATE \"C\"" : "\(column) <-> \(query)") LIMIT $\(binds.count)"
        case .fused(let color, let learned, _):
            if exact {
                let score = Self.scoreExpression(of: target, binds: &binds)
                binds.append(count)
                inner = "\(select) ORDER BY \(score) DESC, im_name COLLATE \"C\" LIMIT $\(binds.count)"
            } else {
                // Each index's nearest; their union is re-scored by the engine.
                binds.append(count)
                let limit = "$\(binds.count)"
                binds.append(color)
                let colorQuery = "$\(binds.count)::real[]::vector"
                binds.append(learned)
                let learnedQuery = "$\(binds.count)::real[]::vector"
                inner = "(\(select) ORDER BY features <-> \(colorQuery) LIMIT \(limit)) UNION "
                    + "(\(select) ORDER BY \(Self.column(of: target, dimension: learned.count)) <-> \(learnedQuery) LIMIT \(limit))"
            }
        }
        let statement = PostgresQuery(unsafeSQL: """
            SELECT id, im_name, source, features::real[], learned::real[] FROM (\(inner)) AS nearest
            """, binds: binds)
        return try await withConnection { connection in
            var found: [Neighbour] = []
            found.reserveCapacity(count)
            for try await (id, name, source, features, learned) in try await connection.query(statement, logger: Self.silent)
                .decode((Int64, String, String, [Float], [Float]?).self) {
                found.append(Neighbour(id: id, name: name, source: source, vector: features, learned: learned))
            }
            return found
        }
    }

    /// The column (or the learned column's typed expression, which its HNSW index serves) a target's vector is compared with.
    static func column(of target: NeighbourTarget, dimension: Int) -> String {
        switch target {
        case .color: "features"
        case .learned, .fused: "learned::vector(\(dimension))"
        }
    }

    /// The SQL of ``Similarity``'s score of each row against `target`, its vectors appended to `binds`:
    /// `1 − distance/2`, a row without a learned vector at distance √2 in the learned part (dot product 0, as in memory).
    static func scoreExpression(of target: NeighbourTarget, binds: inout PostgresBindings) -> String {
        func score(_ vector: [Float], column: String) -> String {
            binds.append(vector)
            return "(1 - COALESCE(\(column) <-> $\(binds.count)::real[]::vector, sqrt(2)) / 2)"
        }
        switch target {
        case .color(let vector): return score(vector, column: "features")
        case .learned(let vector): return score(vector, column: column(of: target, dimension: vector.count))
        case .fused(let color, let learned, let weight):
            let learnedScore = score(learned, column: column(of: target, dimension: learned.count))
            let colorScore = score(color, column: "features")
            return "(\(Double(weight)) * \(learnedScore) + \(Double(1 - weight)) * \(colorScore))"
        }
    }

    public func count(_ scope: NeighbourScope, schema: FieldSchema) async throws(CatalogStoreError) -> Int {
        var binds = PostgresBindings()
        let condition = try Self.scopeCondition(scope, schema: schema, binds: &binds)
        let statement = PostgresQuery(unsafeSQL: "SELECT count(*) FROM images WHERE \(condition)", binds: binds)
        return try await withConnection { connection in
            var count = 0
            for try await value in try await connection.query(statement, logger: Self.silent).decode(Int.self) { count = value }
            return count
        }
    }

    public func contains(_ id: Int64, in scope: NeighbourScope, schema: FieldSchema) async throws(CatalogStoreError) -> Bool {
        var binds = PostgresBindings()
        let condition = try Self.scopeCondition(scope, schema: schema, binds: &binds)
        binds.append(id)
        let statement = PostgresQuery(unsafeSQL: "SELECT EXISTS (SELECT 1 FROM images WHERE id = $\(binds.count) AND \(condition))",
                                      binds: binds)
        return try await withConnection { connection in
            var found = false
            for try await value in try await connection.query(statement, logger: Self.silent).decode(Bool.self) { found = value }
            return found
        }
    }

    public func facetCounts(_ fields: [String], schema: FieldSchema, scope: NeighbourScope,
                            limit: Int) async throws(CatalogStoreError) -> [FieldAggregate] {
        var binds = PostgresBindings()
        let condition = try Self.scopeCondition(scope, schema: schema, binds: &binds)
        return try await facetCounts(fields, schema: schema,
                                     scope: scope.isEverything ? nil : "image_id IN (SELECT id FROM images WHERE \(condition))",
                                     binds: binds, limit: limit)
    }

    public func sources(of imageNames: [String]) async throws(CatalogStoreError) -> [String: String] {
        guard !imageNames.isEmpty else { return [:] }
        return try await withConnection { connection in
            var sources: [String: String] = [:]
            let rows = try await connection.query("SELECT im_name, source FROM images WHERE im_name = ANY(\(imageNames)::text[])",
                                                  logger: Self.silent)
            for try await (name, source) in rows.decode((String, String).self) { sources[name] = source }
            return sources
        }
    }

    /// The scope as one SQL condition on `images`, its values appended to `binds`.
    static func scopeCondition(_ scope: NeighbourScope, schema: FieldSchema,
                               binds: inout PostgresBindings) throws(CatalogStoreError) -> String {
        var clauses = try filterClauses(scope.filters, schema: schema, binds: &binds)
        if let excluded = scope.excluding {
            binds.append(excluded)
            clauses.append("id <> $\(binds.count)")
        }
        if let range = scope.scoreRange {
            switch range.target {
            case .color(let vector), .learned(let vector):
                binds.append(vector)
                let vector = binds.count
                binds.append(range.distances.lowerBound)
                binds.append(range.distances.upperBound)
                let column = column(of: range.target, dimension: range.target.dimension)
                // An image without a learned vector is at distance √2 (dot product 0), as in memory.
                clauses.append("COALESCE(\(column) <-> $\(vector)::real[]::vector, sqrt(2)) BETWEEN $\(binds.count - 1) AND $\(binds.count)")
            case .fused:
                let score = scoreExpression(of: range.target, binds: &binds)
                binds.append(Double(range.minimum))
                binds.append(Double(range.maximum))
                clauses.append("\(score) BETWEEN $\(binds.count - 1) AND $\(binds.count)")
            }
        }
        return clauses.isEmpty ? "TRUE" : clauses.joined(separator: " AND ")
    }
}
