import ArgumentParser
import ImageOps
import SearchEngine
import VisualSearch

/// What is wrong with the inputs a command was pointed at, found before any
/// work starts; ``CLIError/report(_:)`` prints ``description`` and exits with ``exitCode``.
enum InputError: Error, CustomStringConvertible {
    /// A file or folder the command reads does not exist (`role`: how the command line names it).
    case missing(path: String, role: String)
    /// `--catalog` names a folder; a SQLite catalog is a file.
    case catalogIsFolder(path: String)
    /// Files that differ only in extension (`astro.jpg` + `astro.JPG`) would share one name.
    case sameName(groups: [[String]])
    /// An input folder holds no image files; `outcome` says what was (not) done.
    case noImages(path: String, outcome: String)
    /// A folder where the command takes a file (`role`: how the command line names it).
    case folderNotFile(path: String, role: String)
    /// `--catalog postgresql://…` that does not parse (`?knn=bogus`): the message names the parameter, never the password.
    case catalogURL(CatalogStoreError)
    /// An image asked for by name in a catalog that holds no images at all (a new or wrong `--catalog`).
    case emptyCatalog(location: String, name: String)

    var description: String {
        switch self {
        case .missing(let path, let role):
            "\(role) \(path): no such file or folder"
        case .catalogIsFolder(let path):
            "--catalog \(path) is a folder; a SQLite catalog is a file, e.g. --catalog \(path.hasSuffix("/") ? path : path + "/")catalog.sqlite"
        case .sameName(let groups):
            "\(groups.count) \(groups.count == 1 ? "name is" : "names are") shared by files that differ only in extension, "
                + "so one would overwrite the other; rename or remove all but one of each, then run again:\n"
                + groups.map { "  " + $0.joined(separator: "  ") }.joined(separator: "\n")
        case .catalogURL(let error):
            "--catalog: \(VisualSearchError(error).description)"
        case .emptyCatalog(let location, let name):
            "\(VisualSearchError.imageNotFound(name).message): the catalog \(location) holds no images — is it the one you meant? "
                + "Index a folder into it with `vsearch index DIR --catalog \(location)`"
        case .noImages(let path, let outcome):
            "\(path) holds no image files (vsearch reads \(ImageFormat.readableExtensions.map { "." + $0 }.joined(separator: ", "))); \(outcome)"
        case .folderNotFile(let path, let role):
            "\(role) \(path) is a folder; it takes a file"
        }
    }

    var exitCode: ExitCode {
        switch self {
        case .missing, .catalogIsFolder, .noImages, .folderNotFile: ExitCodes.noInput
        case .sameName, .emptyCatalog: ExitCodes.dataError
        case .catalogURL: ExitCodes.usage
        }
    }

    /// Refuses an input folder with no image files (as a job finds them), before anything is written.
    static func checkHasImages(_ input: String, excluding: String, outcome: String) throws(InputError) {
        guard ImageFiles.isDirectory(input) else { return }
        if ((try? ImageFiles.find(in: input, excluding: excluding)) ?? []).isEmpty { throw .noImages(path: input, outcome: outcome) }
    }

    /// Refuses a folder given where a file is read or written (`role`: `--image`, `--metadata`, OUTPUT).
    static func checkNotFolder(_ path: String?, role: String) throws(InputError) {
        if let path, ImageFiles.isDirectory(path) { throw .folderNotFile(path: path, role: role) }
    }

    /// Refuses a folder whose image files (as a job finds them) differ only in extension.
    static func checkNames(in input: String, excluding: String) throws(InputError) {
        guard ImageFiles.isDirectory(input), let files = try? ImageFiles.find(in: input, excluding: excluding) else { return }
        let groups = ImageFiles.sameNameGroups(files)
        if !groups.isEmpty { throw .sameName(groups: groups) }
    }
}
