import ImageOps
import SearchEngine

/// The command line's words for the library's settings: library errors name
/// a setting by its Swift name (``SettingName``), and everything the command
/// line writes to stderr names the flag a user types instead (``Terminal/err(_:)``).
enum SettingFlags {
    static let names: [SettingName: String] = [
        .maxPixels: "--max-image-megapixels",
        .thumbnailShard: "`vsearch thumbs … --shard i/n`",
        .imageRoots: "`vsearch serve --image-root FOLDER`",
        .remoteFetch: "`vsearch serve --allow-remote-fetch`",
        .schemaOverrides: "--schema",
    ]

    /// What `vsearch serve` tells its clients a setting is called: the serve flag that changes it.
    static let servedNames: [SettingName: String] = [
        .maxPixels: "--max-image-megapixels",
        .imageRoots: "--image-root",
        .remoteFetch: "--allow-remote-fetch",
    ]

    /// `text` in the command line's words.
    static func rename(_ text: String) -> String { SettingName.rename(in: text, names) }
}
