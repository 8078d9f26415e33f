/// Where catalog images came from — the seam the image routes read
/// (`/images/{im_name}`): a local path or an `http(s)` URL per `im_name`.
/// ``VisualSearchEngine`` answers it from its catalog; a test or an app can
/// give any other lookup.
public protocol CatalogImageSources: Sendable {
    /// The sources of `imageNames`; unknown names are left out.
    func sources(of imageNames: [String]) async -> [String: String]
}

extension VisualSearchEngine: CatalogImageSources {}
