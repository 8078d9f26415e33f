import SearchEngine
import Foundation
import PostgresNIO
import VisualSearch

/// Reads: the index, `fq` filters, value maps, facets, export. Field names
/// and values are always bound parameters; a field is used only after it
/// has been found in the declared schema.
extension PostgreSQLCatalogStore {
    public func contentHashes() async throws(CatalogStoreError) -> [String: String] {
        try await withConnection { connection in
            var hashes: [String: String] = [:]
            for try await (name, hash) in try await connection.query("SELECT im_name, content_hash FROM images", logger: Self.silent)
                .decode((String, String).self) {
                hashes[name] = hash
            }
            return hashes
        }
    }

    public func count() async throws(CatalogStoreError) -> Int {
        try await withConnection { connection in
            var count = 0
            for try await value in try await connection.query("SELECT count(*) FROM images", logger: Self.silent).decode(Int.self) { count = value }
            return count
        }
    }

    public func imageNames(offset: Int, limit: Int) async throws(CatalogStoreError) -> [String] {
        var statement = PostgresQuery(unsafeSQL: "SELECT im_name FROM images ORDER BY im_name COLLATE \"C\" LIMIT $1 OFFSET $2")
        statement.binds.append(max(0, limit))
        statement.binds.append(max(0, offset))
        let query = statement
        return try await withConnection { connection in
            var names: [String] = []
            for try await name in try await connection.query(query, logger: Self.silent).decode(String.self) { names.append(name) }
            return names
        }
    }

    public func version() async throws(CatalogStoreError) -> Int {
        try await withConnection { connection in
            var version = 0
            for try await value in try await connection.query("SELECT version FROM catalog_state WHERE id = 1", logger: Self.silent).decode(Int.self) {
                version = value
            }
            return version
        }
    }

    /// Every image's vector, name, source and palette, by id; the learned
    /// vectors too as `loading` says, when the catalog records a learned model.
    public func loadIndex(learned loading: LearnedVectorLoading) async throws(CatalogStoreError) -> FeatureIndex {
        try await withConnection { connection in
            let learnedDimension = loading != .none ? try await Self.learnedModel(connection)?.dimension ?? 0 : 0
            var index = FeatureIndex(dimensions: ColorFeatures.dimensions, learnedDimensions: learnedDimension,
                                     keepsExactLearned: loading == .exact)
            let rows = try await connection.query(PostgresQuery(unsafeSQL: """
                SELECT id, im_name, source, features::real[], \(learnedDimension > 0 ? "learned::real[]" : "NULL::real[]"), palette::text
                FROM images ORDER BY id
                """), logger: Self.silent)
            for try await (id, name, source, vector, learned, paletteText) in rows.decode((Int64, String, String, [Float], [Float]?, String).self) {
                guard vector.count == index.dimensions else { continue }
                var text = paletteText
                let palette = text.withUTF8 { DominantColors(json: UnsafeRawBufferPointer($0)) } ?? DominantColors(entries: [])
                index.append(id: id, name: name, source: source, vector: vector, learned: learned, palette: palette)
            }
            return index
        }
    }

    public func matchingIDs(_ filters: [Filter], schema: FieldSchema) async throws(CatalogStoreError) -> Set<Int64>? {
        guard !filters.isEmpty else { return nil }
        var query = try Self.filterQuery(filters, schema: schema)
        query.sql = "SELECT id FROM images WHERE " + query.sql
        let statement = query
        return try await withConnection { connection in
            var ids: Set<Int64> = []
            for try await id in try await connection.query(statement, logger: Self.silent).decode(Int64.self) { ids.insert(id) }
            return ids
        }
    }

    /// The filters as one boolean SQL condition on `images.id`, with bound values.
    /// - Throws: ``CatalogStoreError/unknownField(_:known:)``, or an invalid `fq`
    ///   parameter for a malformed number or a text filter without words.
    static func filterQuery(_ filters: [Filter], schema: FieldSchema) throws(CatalogStoreError) -> PostgresQuery {
        var binds = PostgresBindings()
        let clauses = try filterClauses(filters, schema: schema, binds: &binds)
        return PostgresQuery(unsafeSQL: clauses.joined(separator: " AND "), binds: binds)
    }

    /// One SQL condition per filter, their values appended to `binds`.
    static func filterClauses(_ filters: [Filter], schema: FieldSchema,
                              binds: inout PostgresBindings) throws(CatalogStoreError) -> [String] {
        var clauses: [String] = []
        func bind(_ value: some PostgresDynamicTypeEncodable) -> String {
            binds.append(value)
            return "$\(binds.count)"
        }
        for filter in filters {
            guard let type = schema.fields[filter.field] else { throw .unknownField(filter.field, known: schema.fields.keys.sorted()) }
            // PostgreSQL text cannot hold NUL, so no stored value has one: refuse it as SQLite's store would fail to match it.
            if filter.value.contains("\u{0}") { throw .invalidValue(name: "fq", reason: "\(filter.field): the value contains a NUL character") }
            let field = bind(filter.field)
            switch type {
            case .string:
                clauses.append("id IN (SELECT image_id FROM image_values WHERE field = \(field) AND text_value = \(bind(filter.value)))")
            case .text:
                let words = TextWords.words(in: filter.value)
                guard !words.isEmpty else { throw .invalidValue(name: "fq", reason: "\(filter.field): no words to search for") }
                // Each word one quoted lexeme, ANDed: no tsquery syntax can come from the input.
                let query = words.map { "'" + $0.replacingOccurrences(of: "'", with: "''").replacingOccurrences(of: "\\", with: "\\\\") + "'" }
                    .joined(separator: " & ")
                clauses.append("id IN (SELECT image_id FROM image_values WHERE field = \(field) AND words @@ \(bind(query))::tsquery)")
            case .int, .float:
                switch try checkingInput({ () throws(VisualSearchError) in try filter.numericCondition() }) {
                case .equals(let value):
                    clauses.append("id IN (SELECT image_id FROM image_values WHERE field = \(field) AND number_value = \(bind(value)))")
                case .range(let low, let high):
                    clauses.append("id IN (SELECT image_id FROM image_values WHERE field = \(field) AND number_value BETWEEN \(bind(low)) AND \(bind(high)))")
                }
            }
        }
        return clauses
    }

    public func valueMaps(for ids: [Int64], fields: [String]?) async throws(CatalogStoreError) -> [Int64: [String: String]] {
        guard !ids.isEmpty else { return [:] }
        if let fields, fields.isEmpty { return [:] }
        let query: PostgresQuery = if let fields {
            "SELECT image_id, field, text_value FROM image_values WHERE image_id = ANY(\(ids)::bigint[]) AND field = ANY(\(fields)::text[])"
        } else {
            "SELECT image_id, field, text_value FROM image_values WHERE image_id = ANY(\(ids)::bigint[])"
        }
        return try await withConnection { connection in
            var maps: [Int64: [String: String]] = [:]
            for try await (id, field, value) in try await connection.query(query, logger: Self.silent).decode((Int64, String, String).self) {
                maps[id, default: [:]][field] = value
            }
            return maps
        }
    }

    /// Facets: values by descending count, then by value in byte order
    /// (`COLLATE "C"`, as SQLite compares), or a numeric field's bounds.
    public func facetCounts(_ fields: [String], schema: FieldSchema, ids: [Int64]?,
                            limit: Int) async throws(CatalogStoreError) -> [FieldAggregate] {
        var binds = PostgresBindings()
        var scope: String?
        if let ids {
            binds.append(ids)
            scope = "image_id = ANY($1::bigint[])"
        }
        return try await facetCounts(fields, schema: schema, scope: scope, binds: binds, limit: limit)
    }

    /// Facets over the images whose `image_id` meets `scope` (every image when nil).
    func facetCounts(_ fields: [String], schema: FieldSchema, scope: String?, binds: PostgresBindings,
                     limit: Int) async throws(CatalogStoreError) -> [FieldAggregate] {
        let names = try checkingInput { () throws(VisualSearchError) in try FacetShaper.fields(fields, schema: schema) }
        return try await withConnection { connection in
            var aggregates: [FieldAggregate] = []
            for name in names {
                guard let type = schema.fields[name] else { continue }
                var query = PostgresQuery(unsafeSQL: "", binds: binds)
                query.binds.append(name)
                let field = "$\(query.binds.count)", within = scope.map { " AND " + $0 } ?? ""
                if type.isNumeric {
                    query.sql = "SELECT min(number_value), max(number_value) FROM image_values WHERE field = \(field)\(within)"
                    var bounds: (Double?, Double?) = (nil, nil)
                    for try await row in try await connection.query(query, logger: Self.silent).decode((Double?, Double?).self) { bounds = row }
                    aggregates.append(.range(field: name, min: bounds.0, max: bounds.1))
                } else {
                    query.sql = """
                        SELECT text_value, count(*) AS n FROM image_values WHERE field = \(field)\(within)
                        GROUP BY text_value ORDER BY n DESC, text_value COLLATE "C" LIMIT \(max(0, limit))
                        """
                    var counts: [(value: String, count: Int)] = []
                    for try await (value, count) in try await connection.query(query, logger: Self.silent).decode((String, Int).self) {
                        counts.append((value, count))
                    }
                    aggregates.append(.values(field: name, counts: counts))
                }
            }
            return aggregates
        }
    }

    public func export() async throws(CatalogStoreError) -> [ExportedImage] {
        try await withConnection { connection in
            var values: [Int64: [String: String]] = [:]
            for try await (id, field, value) in try await connection.query("SELECT image_id, field, text_value FROM image_values", logger: Self.silent)
                .decode((Int64, String, String).self) {
                values[id, default: [:]][field] = value
            }
            var images: [ExportedImage] = []
            let rows = try await connection.query("SELECT id, im_name, source, width, height FROM images ORDER BY im_name COLLATE \"C\"",
                                                  logger: Self.silent)
            for try await (id, name, source, width, height) in rows.decode((Int64, String, String, Int, Int).self) {
                images.append(ExportedImage(imageName: name, source: source, width: width, height: height, metadata: values[id] ?? [:]))
            }
            return images
        }
    }

    /// PostgreSQL has no `PRAGMA integrity_check`: this checks what vsearch
    /// relies on — every migration applied, the state row, every vector of
    /// the right length, no value without its image. "ok" when all hold.
    public func integrityCheck() async throws(CatalogStoreError) -> String {
        try await withConnection { connection in
            let rows = try await connection.query("""
                SELECT (SELECT count(*) FROM vsearch_migrations),
                       (SELECT count(*) FROM catalog_state WHERE id = 1),
                       (SELECT count(*) FROM images WHERE vector_dims(features) <> \(ColorFeatures.dimensions)),
                       (SELECT count(*) FROM image_values v WHERE NOT EXISTS (SELECT 1 FROM images i WHERE i.id = v.image_id))
                """, logger: Self.silent)
            var problems: [String] = []
            for try await (migrations, state, badVectors, orphans) in rows.decode((Int, Int, Int, Int).self) {
                if migrations < PostgreSQLMigrations.steps.count { problems.append("\(PostgreSQLMigrations.steps.count - migrations) migrations missing") }
                if state != 1 { problems.append("the catalog_state row is missing") }
                if badVectors > 0 { problems.append("\(badVectors) vectors of the wrong length") }
                if orphans > 0 { problems.append("\(orphans) values without their image") }
            }
            return problems.isEmpty ? "ok" : problems.joined(separator: "; ")
        }
    }
}
