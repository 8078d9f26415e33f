import SearchEngine
/// The PostgreSQL catalog's schema, as named steps applied in order and
/// recorded in `vsearch_migrations`. Each step runs in its own transaction
/// under an advisory lock, so processes opening a new catalog at the same
/// moment (several indexers, several replicas) migrate it exactly once.
///
/// The names match the SQLite store's steps where the content matches.
enum PostgreSQLMigrations {
    struct Step: Sendable {
        let name: String
        let sql: [String]
    }

    /// The pgvector extension this schema needs.
    static let vectorExtension = "vector"

    static let steps: [Step] = [
        Step(name: "v1: images, fields, values, full-text", sql: [
            """
            CREATE TABLE images (
                id BIGSERIAL PRIMARY KEY,
                im_name TEXT NOT NULL UNIQUE,
                source TEXT NOT NULL,
                width INTEGER NOT NULL,
                height INTEGER NOT NULL,
                content_hash TEXT NOT NULL,
                features vector(\(ColorFeatures.dimensions)) NOT NULL,
                palette JSONB NOT NULL,
                created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
                updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
            )
            """,
            // L2 distance: the score is 1 − ‖a − b‖ / 2 (``Similarity``), so
            // the index orders exactly as the score does.
            "CREATE INDEX images_features_hnsw ON images USING hnsw (features vector_l2_ops) WITH (m = 16, ef_construction = 128)",
            """
            CREATE TABLE fields (
                name TEXT PRIMARY KEY,
                type TEXT NOT NULL CHECK (type IN ('string', 'text', 'int', 'float'))
            )
            """,
            """
            CREATE TABLE image_values (
                image_id BIGINT NOT NULL REFERENCES images(id) ON DELETE CASCADE,
                field TEXT NOT NULL,
                text_value TEXT NOT NULL,
                number_value DOUBLE PRECISION,
                words TSVECTOR,
                PRIMARY KEY (image_id, field)
            )
            """,
            "CREATE INDEX image_values_text ON image_values (field, text_value)",
            "CREATE INDEX image_values_number ON image_values (field, number_value) WHERE number_value IS NOT NULL",
            "CREATE INDEX image_values_words ON image_values USING gin (words) WHERE words IS NOT NULL",
            "CREATE TABLE catalog_state (id INTEGER PRIMARY KEY CHECK (id = 1), version BIGINT NOT NULL)",
            "INSERT INTO catalog_state (id, version) VALUES (1, 0)",
        ]),
        Step(name: "v2: collector events", sql: [
            """
            CREATE TABLE tracking_events (
                id BIGSERIAL PRIMARY KEY,
                event_id TEXT NOT NULL UNIQUE,
                action TEXT NOT NULL,
                query_id TEXT,
                pid TEXT,
                ts BIGINT NOT NULL,
                received_at BIGINT NOT NULL,
                payload TEXT NOT NULL
            )
            """,
            "CREATE INDEX tracking_events_ts ON tracking_events (ts)",
            "CREATE INDEX tracking_events_query ON tracking_events (query_id, action)",
            "CREATE INDEX tracking_events_pid ON tracking_events (pid, action)",
        ]),
        Step(name: "v3: insert transactions", sql: [
            // The data API's insert progress, so every replica answers insert/status.
            """
            CREATE TABLE insert_transactions (
                trans_id TEXT PRIMARY KEY,
                progress TEXT NOT NULL,
                started_at TIMESTAMPTZ NOT NULL DEFAULT now()
            )
            """,
            "CREATE INDEX insert_transactions_started ON insert_transactions (started_at)",
        ]),
        Step(name: "v4: learned vectors", sql: [
            // The learned embedding of each image, NULL when indexed without the model. The
            // column has no fixed length (models differ); its HNSW index is an expression index
            // on `learned::vector(N)` for the recorded model's N, made by recordLearnedModel.
            "ALTER TABLE images ADD COLUMN learned vector",
            "CREATE TABLE catalog_models (role TEXT PRIMARY KEY, descriptor TEXT NOT NULL)",
        ]),
        Step(name: "v5: covering indexes for event stats", sql: [
            // As the SQLite store's step: statistics read index entries (index-only
            // scans once vacuumed), per window by time, over everything by query or product.
            "DROP INDEX IF EXISTS tracking_events_ts",
            "DROP INDEX IF EXISTS tracking_events_query",
            "DROP INDEX IF EXISTS tracking_events_pid",
            "CREATE INDEX tracking_events_time ON tracking_events (ts, action, query_id, pid)",
            "CREATE INDEX tracking_events_query_time ON tracking_events (query_id, action, ts)",
            "CREATE INDEX tracking_events_pid_time ON tracking_events (pid, action, ts)",
        ]),
    ]
}
