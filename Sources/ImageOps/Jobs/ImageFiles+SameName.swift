import Foundation

extension ImageFiles {
    /// The groups of `relativePaths` that differ only in their extension
    /// (`astro.jpg` and `astro.JPG`, `a/b.png` and `a/b.jpg`), each sorted,
    /// in path order. Such files would share one name — `im_name` in a
    /// catalog, the thumbnails' file names — so jobs refuse them before starting.
    public static func sameNameGroups(_ relativePaths: [String]) -> [[String]] {
        var groups: [String: [String]] = [:]
        for path in relativePaths { groups[(path as NSString).deletingPathExtension, default: []].append(path) }
        return groups.values.filter { $0.count > 1 }.map { $0.sorted() }.sorted { $0[0] < $1[0] }
    }
}
