import ImageOps

extension SettingName {
    /// The folders local query images may be read from (``ImageSourcePolicy/imageRoots``).
    public static let imageRoots = SettingName("ImageSourcePolicy.imageRoots")
    /// Whether and where remote query images may be fetched (``ImageSourcePolicy/remoteFetch``).
    public static let remoteFetch = SettingName("ImageSourcePolicy.remoteFetch")
    /// Types declared for metadata fields instead of the inferred ones (`Indexer.run(directory:metadata:schema:)`).
    public static let schemaOverrides = SettingName("Indexer.run(schema:)")
}
