import SearchEngine
import Foundation
import PostgresNIO
import VisualSearch

/// Schema and writes. Every write is one transaction; a write that changes
/// nothing leaves the version where it is.
extension PostgreSQLCatalogStore {
    public func schema() async throws(CatalogStoreError) -> FieldSchema {
        try await withConnection { connection in
            var fields: [String: FieldType] = [:]
            for try await (name, type) in try await connection.query("SELECT name, type FROM fields", logger: Self.silent).decode((String, String).self) {
                if let type = FieldType(rawValue: type) { fields[name] = type }
            }
            return FieldSchema(fields: fields)
        }
    }

    /// Adds fields (retypes one no image has a value for, as SQLite does); the `fields` table is locked for the transaction so
    /// concurrent indexers declaring the same field agree on its type.
    public func declare(_ schema: FieldSchema) async throws(CatalogStoreError) {
        let fields = schema.fields.sorted { $0.key < $1.key }
        guard !fields.isEmpty else { return }
        try await withTransaction { connection in
            try await connection.query("LOCK TABLE fields IN SHARE ROW EXCLUSIVE MODE", logger: Self.silent)
            var existing: [String: String] = [:]
            for try await (name, type) in try await connection.query("SELECT name, type FROM fields", logger: Self.silent).decode((String, String).self) {
                existing[name] = type
            }
            var retyped: [(String, FieldType)] = []
            for (name, type) in fields {
                if let current = existing[name], current != type.rawValue {
                    var used = 0
                    for try await count in try await connection.query(
                        "SELECT count(DISTINCT image_id)::bigint FROM image_values WHERE field = \(name)", logger: Self.silent).decode(Int.self) {
                        used = count
                    }
                    guard used == 0 else {
                        throw CatalogStoreError.retypeRefusal(field: name, current: current, requested: type, imagesWithValues: used)
                    }
                    retyped.append((name, type))
                }
            }
            let new = fields.filter { existing[$0.key] == nil }
            guard !new.isEmpty || !retyped.isEmpty else { return }
            if !new.isEmpty {
                try await connection.query("""
                    INSERT INTO fields (name, type) SELECT * FROM unnest(\(new.map(\.key))::text[], \(new.map(\.value.rawValue))::text[])
                    """, logger: Self.silent)
            }
            for (name, type) in retyped {
                try await connection.query("UPDATE fields SET type = \(type.rawValue) WHERE name = \(name)", logger: Self.silent)
            }
            try await Self.bumpVersion(connection)
        }
    }

    /// Inserts or replaces images by `im_name` in one multi-row statement per
    /// table; within a batch the last item of a name wins.
    public func upsert(_ items: [CatalogItem], schema: FieldSchema) async throws(CatalogStoreError) {
        guard !items.isEmpty else { return }
        try CatalogItem.checkVectors(of: items)
        try checkingInput { () throws(VisualSearchError) in try MetadataTable.check(items.map { ($0.imageName, $0.metadata) }, schema: schema) }
        try Self.refuseNUL(items.map { ($0.imageName, [$0.imageName, $0.source, $0.contentHash] + Array($0.metadata.values)) })
        var last: [String: CatalogItem] = [:]
        for item in items { last[item.imageName] = item }
        let batch = last.values.sorted { $0.imageName < $1.imageName }  // one lock order for every writer
        let encoder = JSONEncoder()
        let palettes = batch.map { String(decoding: (try? encoder.encode($0.palette)) ?? Data("{\"entries\":[]}".utf8), as: UTF8.self) }
        let vectors = batch.map { Self.vectorLiteral($0.features) }
        try await withTransaction { connection in
            var ids: [String: Int64] = [:]
            let rows = try await connection.query("""
                INSERT INTO images (im_name, source, width, height, content_hash, features, palette)
                SELECT n, s, w, h, c, f::vector, p::jsonb
                FROM unnest(\(batch.map(\.imageName))::text[], \(batch.map(\.source))::text[], \(batch.map { $0.width })::int[],
                            \(batch.map { $0.height })::int[], \(batch.map(\.contentHash))::text[], \(vectors)::text[],
                            \(palettes)::text[]) AS t(n, s, w, h, c, f, p)
                ON CONFLICT (im_name) DO UPDATE SET source = excluded.source, width = excluded.width, height = excluded.height,
                    content_hash = excluded.content_hash, features = excluded.features, palette = excluded.palette, updated_at = now()
                RETURNING id, im_name
                """, logger: Self.silent)
            for try await (id, name) in rows.decode((Int64, String).self) { ids[name] = id }
            try await Self.writeLearned(batch, connection: connection)
            try await Self.replaceValues(batch.compactMap { item in ids[item.imageName].map { ($0, item.metadata) } },
                                         schema: schema, connection: connection)
            try await Self.bumpVersion(connection)
        }
    }

    /// Replaces the metadata of existing images (vectors kept); unknown names are skipped.
    public func updateMetadata(_ updates: [MetadataUpdate], schema: FieldSchema) async throws(CatalogStoreError) {
        guard !updates.isEmpty else { return }
        try checkingInput { () throws(VisualSearchError) in try MetadataTable.check(updates.map { ($0.imageName, $0.metadata) }, schema: schema) }
        try Self.refuseNUL(updates.map { ($0.imageName, [$0.imageName] + Array($0.metadata.values)) })
        var last: [String: [String: String]] = [:]
        for update in updates { last[update.imageName] = update.metadata }
        let names = last.keys.sorted(), metadata = last
        try await withTransaction { connection in
            var found: [(Int64, [String: String])] = []
            let rows = try await connection.query("SELECT id, im_name FROM images WHERE im_name = ANY(\(names)::text[]) ORDER BY im_name FOR UPDATE",
                                                  logger: Self.silent)
            for try await (id, name) in rows.decode((Int64, String).self) { found.append((id, metadata[name] ?? [:])) }
            guard !found.isEmpty else { return }
            try await Self.replaceValues(found, schema: schema, connection: connection)
            try await connection.query("UPDATE images SET updated_at = now() WHERE id = ANY(\(found.map(\.0))::bigint[])", logger: Self.silent)
            try await Self.bumpVersion(connection)
        }
    }

    /// Removes images by name (their values go with them); returns how many existed.
    @discardableResult
    public func remove(_ imageNames: [String]) async throws(CatalogStoreError) -> Int {
        guard !imageNames.isEmpty else { return 0 }
        let names = Array(Set(imageNames)).sorted()
        return try await withTransaction { connection in
            var removed = 0
            let rows = try await connection.query("DELETE FROM images WHERE im_name = ANY(\(names)::text[]) RETURNING id", logger: Self.silent)
            for try await _ in rows.decode(Int64.self) { removed += 1 }
            if removed > 0 { try await Self.bumpVersion(connection) }
            return removed
        }
    }

    /// Replaces every value of the given images: text as given, numbers
    /// parsed, and the folded words of `text` fields for full-text search.
    static func replaceValues(_ entries: [(id: Int64, metadata: [String: String])], schema: FieldSchema,
                              connection: PostgresConnection) async throws {
        guard !entries.isEmpty else { return }
        try await connection.query("DELETE FROM image_values WHERE image_id = ANY(\(entries.map(\.id))::bigint[])", logger: silent)
        var ids: [Int64] = [], fields: [String] = [], texts: [String] = [], numbers: [String] = [], words: [String] = []
        for (id, metadata) in entries {
            for (field, value) in metadata.sorted(by: { $0.key < $1.key }) {
                guard let type = schema.fields[field], !value.isEmpty else { continue }
                ids.append(id)
                fields.append(field)
                texts.append(value)
                numbers.append(type.isNumeric ? (Double(value).map { "\($0)" } ?? "") : "")
                // Words never hold a space, so a space-joined list splits back exactly.
                var seen: Set<String> = []
                words.append(type == .text ? TextWords.words(in: value).filter { seen.insert($0).inserted }.joined(separator: " ") : "\u{1}")
            }
        }
        guard !ids.isEmpty else { return }
        try await connection.query("""
            INSERT INTO image_values (image_id, field, text_value, number_value, words)
            SELECT i, f, t, NULLIF(n, '')::double precision,
                   CASE WHEN w = E'\\x01' THEN NULL ELSE array_to_tsvector(string_to_array(w, ' ')) END
            FROM unnest(\(ids)::bigint[], \(fields)::text[], \(texts)::text[], \(numbers)::text[], \(words)::text[]) AS v(i, f, t, n, w)
            """, logger: silent)
    }

    /// PostgreSQL text cannot hold NUL: refuse such a batch by the image, before anything is written.
    static func refuseNUL(_ entries: [(imageName: String, texts: [String])]) throws(CatalogStoreError) {
        for (offset, entry) in entries.enumerated() where entry.texts.contains(where: { $0.contains("\u{0}") }) {
            throw .invalidMetadata(row: offset + 1, field: "im_name", reason: "\(entry.imageName.replacingOccurrences(of: "\u{0}", with: "\\0")): "
                                   + "a name, source or value contains a NUL character, which PostgreSQL cannot store")
        }
    }

    /// Writes the batch's learned vectors (NULL for an image without one),
    /// checked against the recorded model's length, in the upsert's transaction.
    static func writeLearned(_ batch: [CatalogItem], connection: PostgresConnection) async throws {
        let dimension = try await learnedModel(connection)?.dimension
        if let item = batch.first(where: { $0.learned != nil && $0.learned?.count != dimension }) {
            throw CatalogStoreError.invalidValue(name: "learned", reason: "\(item.imageName)'s learned vector has \(item.learned?.count ?? 0) values; "
                + (dimension.map { "the catalog's model makes \($0)" } ?? "the catalog has recorded no learned model"))
        }
        guard dimension != nil else { return }
        try await connection.query("""
            UPDATE images SET learned = NULLIF(t.l, '')::vector
            FROM unnest(\(batch.map(\.imageName))::text[], \(batch.map { $0.storedLearned.map(vectorLiteral) ?? "" })::text[]) AS t(n, l)
            WHERE images.im_name = t.n
            """, logger: silent)
    }

    /// What made the catalog's learned vectors; nil when it has none.
    public func learnedModel() async throws(CatalogStoreError) -> EmbeddingDescriptor? {
        try await withConnection { connection in try await Self.learnedModel(connection) }
    }

    static func learnedModel(_ connection: PostgresConnection) async throws -> EmbeddingDescriptor? {
        var descriptor: EmbeddingDescriptor?
        for try await text in try await connection.query("SELECT descriptor FROM catalog_models WHERE role = 'learned'", logger: silent)
            .decode(String.self) {
            descriptor = try? JSONDecoder().decode(EmbeddingDescriptor.self, from: Data(text.utf8))
        }
        return descriptor
    }

    /// Records what makes the learned vectors. A model that makes other vectors
    /// (``EmbeddingDescriptor/makesSameVectors(as:)``) clears the vectors of the
    /// old one (the indexer recomputes every row) and rebuilds the HNSW
    /// expression index on `learned::vector(N)` for its length N; the same
    /// model under another name or version only changes the record.
    public func recordLearnedModel(_ descriptor: EmbeddingDescriptor) async throws(CatalogStoreError) {
        let text = String(decoding: (try? JSONEncoder().encode(descriptor)) ?? Data(), as: UTF8.self)
        try await withTransaction { connection in
            try await connection.query("LOCK TABLE catalog_models IN SHARE ROW EXCLUSIVE MODE", logger: Self.silent)
            let current = try await Self.learnedModel(connection)
            guard current != descriptor else { return }
            // The same vectors under another name or version: only the record changes.
            let sameVectors = descriptor.makesSameVectors(as: current)
            if current != nil, !sameVectors {
                // Dropping the column (and its index) rather than setting it NULL: an index built in
                // this transaction would still see the old rows' vectors of the old length.
                try await connection.query("ALTER TABLE images DROP COLUMN learned", logger: Self.silent)
                try await connection.query("ALTER TABLE images ADD COLUMN learned vector", logger: Self.silent)
            }
            if !sameVectors {
                try await connection.query("DROP INDEX IF EXISTS images_learned_hnsw", logger: Self.silent)
                // The length is an integer of ours, never user text.
                try await connection.query(PostgresQuery(unsafeSQL: """
                    CREATE INDEX images_learned_hnsw ON images USING hnsw ((learned::vector(\(descriptor.dimension))) vector_l2_ops)
                    WITH (m = 16, ef_construction = 128)
                    """), logger: Self.silent)
            }
            try await connection.query("""
                INSERT INTO catalog_models (role, descriptor) VALUES ('learned', \(text))
                ON CONFLICT (role) DO UPDATE SET descriptor = excluded.descriptor
                """, logger: Self.silent)
            try await Self.bumpVersion(connection)
        }
    }

    static func bumpVersion(_ connection: PostgresConnection) async throws {
        try await connection.query("UPDATE catalog_state SET version = version + 1 WHERE id = 1", logger: silent)
    }

    /// pgvector's text form, `[x,y,…]`, each float in its shortest exact form.
    static func vectorLiteral(_ vector: [Float]) -> String {
        "[" + vector.map { $0.description }.joined(separator: ",") + "]"
    }
}
