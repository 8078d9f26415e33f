import ArgumentParser
import ImageOps

extension Shard {
    /// Parses `--shard i/n` (thumbs, index); the error is argument-parser's message for it.
    static func argument(_ text: String) throws -> Shard {
        do { return try Shard(parsing: text) } catch { throw ValidationError(error.description) }
    }

    /// The help text every `--shard` shows.
    static let help = ArgumentHelp("Do part i (from 0) of the job split n ways by a stable hash of each file's path, e.g. 0/4.",
                                   valueName: "i/n")
}
