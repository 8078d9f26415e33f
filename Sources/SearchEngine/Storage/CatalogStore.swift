import VisualSearch

/// Where a catalog lives: the storage seam of the engine, in four roles a
/// caller composes as it needs them (as GRDB's `DatabaseReader` and
/// `DatabaseWriter`):
///
/// - ``CatalogReader``: what a query reads — schema, vectors, filters, metadata, facets;
/// - ``CatalogWriter``: a reader that also declares fields and writes images (the ``Indexer``);
/// - ``CatalogAdmin``: health checks (`vsearch catalog stats`, `/health`);
/// - ``InsertJournal``: the data API's insert progress, shared by every process on the catalog.
///
/// A store keeps images (name, source, size, content hash, feature vector,
/// palette), their typed metadata (``FieldSchema``) and a version counter
/// that every committed change moves, so engines in other processes know
/// to reload. It answers the SQL side of a query — which images pass the
/// `fq` filters, their metadata, facet counts — while similarity itself is
/// scored in memory over ``FeatureIndex`` (or by a ``NearestNeighbourStore``).
///
/// Two stores keep every role, each in its own target holding its driver:
/// `SQLiteCatalogStore` (target SQLiteCatalog, the embedded default) and
/// `PostgreSQLCatalogStore` (target PostgreSQLCatalog); the engine knows
/// neither. Each role's contract is written once (`Tests/TestSupport/Conformance`)
/// and run by each store's test target (SQLiteCatalogTests, PostgreSQLCatalogTests,
/// and SearchEngineTests for the in-memory store the engine's tests use).
///
/// Contract every store keeps (the conformance suites check each):
/// - every write is one transaction: after a crash, all of it or none of it;
/// - ``CatalogWriter/upsert(_:schema:)`` replaces by `im_name`; metadata values that do not
///   fit their field's type are rejected before anything is written;
/// - vectors are ``ColorFeatures/dimensions`` long; a batch holding another
///   length is refused before anything is written;
/// - ``CatalogReader/version()`` moves on every committed change, by any process, and only
///   then: a write that changes nothing (an empty batch, unknown names) leaves it;
/// - filters: `string` exact, `text` by words (every word must occur, any
///   order, case- and accent-insensitive), numbers exact or `min,max`
///   inclusive; an undeclared field is ``CatalogStoreError/unknownField(_:)``;
/// - facet values come by descending count, then ascending value.
public typealias CatalogStore = CatalogWriter & CatalogAdmin & InsertJournal
