/// One image as `vsearch catalog export` prints it.
public struct ExportedImage: Sendable, Hashable, Codable {
    public var imageName: String
    public var source: String
    public var width: Int
    public var height: Int
    public var metadata: [String: String]

    public init(imageName: String, source: String, width: Int, height: Int, metadata: [String: String]) {
        self.imageName = imageName
        self.source = source
        self.width = width
        self.height = height
        self.metadata = metadata
    }
}
