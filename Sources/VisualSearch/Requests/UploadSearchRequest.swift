/// ViSearch `/uploadsearch`: images similar to an uploaded image (bytes or a
/// file, prepared as the SDKs prepare uploads), an `im_url` or an earlier
/// `im_id`, optionally inside a box of it. Sent as a POST with the
/// parameters in the query string and the image as the multipart body's
/// only part, as the Swift SDK sends it.
///
/// ```swift
/// let request = UploadSearchRequest(ImageQuery(.file("photo.jpg"), box: PixelBox(x1: 10, y1: 10, x2: 300, y2: 400)))
/// ```
public struct UploadSearchRequest: ImageQueryRequest {
    public typealias Response = SearchResponse
    public var query: ImageQuery
    public var parameters: SearchParameters
    public static let endpoint = WireEndpoint(family: .viSearch, method: "uploadsearch", paths: ["uploadsearch"], body: .multipartImage)

    public init(_ query: ImageQuery, parameters: SearchParameters = SearchParameters()) {
        self.query = query
        self.parameters = parameters
    }
}
