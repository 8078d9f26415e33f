import ArgumentParser
import ImageOps
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
    /// A folder to index holds no image files.
    case noImages(path: String)
    /// `--catalog postgresql://…` that does not parse (`?knn=bogus`): the message names the parameter, never the password.
    case catalogURL(VisualSearchError)

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
            "--catalog: \(error.description)"
        case .noImages(let path):
            "\(path) holds no image files (\(ImageFormat.imageFileExtensions.sorted().joined(separator: ", "))); nothing was indexed and no catalog was created"
        }
    }

    var exitCode: ExitCode {
        switch self {
        case .missing, .catalogIsFolder, .noImages: ExitCodes.noInput
        case .sameName: ExitCodes.dataError
        case .catalogURL: ExitCodes.usage
        }
    }

    /// Refuses a folder whose image files (as a job finds them) differ only in extension.
    static func checkNames(in input: String, excluding: String) throws(InputError) {
        guard ImageFiles.isDirectory(input), let files = try? ImageFiles.find(in: input, excluding: excluding) else { return }
        let groups = ImageFiles.sameNameGroups(files)
        if !groups.isEmpty { throw .sameName(groups: groups) }
    }
}
