import Foundation

/// How a library error names a setting the reader can change: by its Swift
/// name in backticks (`` `ImageLimits.maxPixels` ``), which an app's developer
/// finds in the documentation. A front end with its own words for settings
/// renames the mentions in one place (``rename(in:_:)``): the command line
/// shows its flags (`--max-pixels`), never the library the other way round.
public struct SettingName: Sendable, Hashable, CustomStringConvertible {
    /// The setting's Swift name, `Type.property`.
    public let path: String

    public init(_ path: String) { self.path = path }

    /// The mention in a message: the Swift name in backticks.
    public var description: String { "`\(path)`" }

    /// The largest image, in pixels, a decoder accepts (``ImageLimits/maxPixels``).
    public static let maxPixels = SettingName("ImageLimits.maxPixels")
    /// Which part of a sharded thumbnail job a run takes (``ThumbnailBatch/Configuration/shard``).
    public static let thumbnailShard = SettingName("ThumbnailBatch.Configuration.shard")

    /// `text` with every mention of a setting in `names` replaced by its name there.
    public static func rename(in text: String, _ names: [SettingName: String]) -> String {
        guard text.contains("`") else { return text }
        var renamed = text
        for (setting, name) in names where renamed.contains(setting.description) {
            renamed = renamed.replacingOccurrences(of: setting.description, with: name)
        }
        return renamed
    }
}
