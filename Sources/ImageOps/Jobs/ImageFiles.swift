import Foundation

/// Finding the image files of a batch job.
public enum ImageFiles {
    /// The image files under `input` (or `input` itself when it is a file),
    /// as paths relative to `input`, sorted; hidden entries, the `output`
    /// folder (when it lies inside `input`) and files named like thumbnails are skipped.
    /// Files are chosen by extension (``ImageFormat/imageFileExtensions``);
    /// their content is sniffed later, so a misnamed file is reported, not skipped.
    public static func find(in input: String, excluding output: String) throws(ImageOpsError) -> [String] {
        guard FileManager.default.fileExists(atPath: input) else {
            throw .io(path: input, reason: "no such file or directory")
        }
        guard isDirectory(input) else { return [(input as NSString).lastPathComponent] }
        let inputURL = URL(fileURLWithPath: input).standardizedFileURL.resolvingSymlinksInPath()
        let outputURL = URL(fileURLWithPath: output).standardizedFileURL.resolvingSymlinksInPath()
        let outputRelative: String? = outputURL.path.hasPrefix(inputURL.path + "/")
            ? String(outputURL.path.dropFirst(inputURL.path.count + 1)) : nil
        guard let enumerator = FileManager.default.enumerator(atPath: input) else {
            throw .io(path: input, reason: "cannot list the folder")
        }
        var sources: [String] = []
        while let relative = enumerator.nextObject() as? String {
            let name = (relative as NSString).lastPathComponent
            if name.hasPrefix(".") || (outputRelative.map { relative == $0 || relative.hasPrefix($0 + "/") } ?? false) {
                if isDirectory((input as NSString).appendingPathComponent(relative)) { enumerator.skipDescendants() }
                continue
            }
            let ext = (name as NSString).pathExtension.lowercased()
            guard ImageFormat.imageFileExtensions.contains(ext), !ThumbnailRule.isThumbnailName(name) else { continue }
            if isDirectory((input as NSString).appendingPathComponent(relative)) { continue }
            sources.append(relative)
        }
        return sources.sorted()
    }

    public static func isDirectory(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue
    }
}
