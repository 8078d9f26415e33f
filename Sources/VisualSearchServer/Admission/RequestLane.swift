import Foundation
import VisualSearch

/// The two kinds of request the server admits separately, so the expensive
/// kind cannot take every slot the cheap kind needs.
public enum RequestLane: String, Sendable, CaseIterable {
    /// Milliseconds of work: search by `im_name`, recommendations, colour
    /// search, the collector, health, metrics, the page and originals.
    case light
    /// An image to read and decode: uploads (`/uploadsearch`,
    /// `/discoversearch`, ProductSearch's `search_by_image`), data API
    /// inserts, and thumbnails made by `/images/{im_name}?size=N`.
    case image

    /// The paths whose requests carry or fetch an image, from the request types themselves.
    static let imagePaths: Set<String> = Set(
        ([UploadSearchRequest.endpoint, DiscoverSearchRequest.endpoint, ProductSearchRequest.endpoint, InsertRequest.endpoint])
            .flatMap(\.paths).map { "/" + $0 })

    /// The lane of a request to `path` with `query`.
    init(path: String, query: String?) {
        if Self.imagePaths.contains(path) {
            self = .image
        } else if path.hasPrefix("/images/"), let query, query.split(separator: "&").contains(where: { $0.hasPrefix("size=") }) {
            self = .image
        } else {
            self = .light
        }
    }
}
