/// New metadata for an existing image.
public struct MetadataUpdate: Sendable, Hashable {
    public var imageName: String
    public var metadata: [String: String]

    public init(imageName: String, metadata: [String: String]) {
        self.imageName = imageName
        self.metadata = metadata
    }
}
