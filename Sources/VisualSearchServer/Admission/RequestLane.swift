import Foundation
import VisualSearch

/// The two kinds of request the server admits separately, so the expensive
/// kind cannot take every slot the cheap kind needs.
public enum RequestLane: String, Sendable, CaseIterable {
    /// Milliseconds of work: search by `im_name`, recommendations, colour
    /// search, the collector, health, metrics, the page, originals and
    /// thumbnails (`/images/{im_name}?size=N`: made once per catalog image
    /// and size, on the ``SearchEngine/ImageWorkPool`` under its budget, then
    /// served from disk — a page asks for many at once).
    case light
    /// An image the client sends or names, to read and decode: uploads
    /// (`/uploadsearch`, `/discoversearch`, ProductSearch's
    /// `search_by_image`) and data API inserts.
    case image

    /// The paths whose requests carry or fetch an image, from the request types themselves.
    static let imagePaths: Set<String> = Set(
        ([UploadSearchRequest.endpoint, DiscoverSearchRequest.endpoint, ProductSearchRequest.endpoint, InsertRequest.endpoint])
            .flatMap(\.paths).map { "/" + $0 })

    /// The lane of a request to `path`, as the router matches it
    /// (``RoutePath/normalized(_:)``: `/uploadsearch/` is an upload too).
    init(path: String) {
        self = Self.imagePaths.contains(RoutePath.normalized(path)) ? .image : .light
    }
}
