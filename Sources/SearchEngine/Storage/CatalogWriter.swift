import VisualSearch

/// The writing role of a catalog store (``CatalogStore``): what the
/// ``Indexer``, the data API and a catalog copy write. Every method is one
/// transaction; a writer is a reader too, since every write starts from what
/// is there (the schema, the content hashes).
public protocol CatalogWriter: CatalogReader {
    /// Adds fields; a field declared with another type is retyped when no image has a value for it, otherwise that is an error.
    func declare(_ schema: FieldSchema) async throws(CatalogStoreError)
    /// Inserts or replaces images by `im_name`, in one transaction.
    func upsert(_ items: [CatalogItem], schema: FieldSchema) async throws(CatalogStoreError)
    /// Replaces the metadata of existing images (vectors kept), in one transaction; unknown names are skipped.
    func updateMetadata(_ updates: [MetadataUpdate], schema: FieldSchema) async throws(CatalogStoreError)
    /// Removes images by name, in one transaction; returns how many existed.
    func remove(_ imageNames: [String]) async throws(CatalogStoreError) -> Int
    /// Records what makes the learned vectors written from now on (``Indexer``
    /// does before its first batch); moves the version when it changes.
    func recordLearnedModel(_ descriptor: EmbeddingDescriptor) async throws(CatalogStoreError)
}
