import ArgumentParser
import Foundation

/// A command line that names no command (`vsearch serach --image x`,
/// `vsearch catalog stat`) or an option its command does not have
/// (`vsearch index --meta m.csv`): said plainly, with the nearest name,
/// before ArgumentParser parses — which would complain about something else
/// first (a missing argument), or suggest a far one (`serve --keys` →
/// `--knn`).
enum CommandSuggestion {
    /// Edit distance (insertions, deletions, substitutions, and swaps of neighbours).
    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a), b = Array(b)
        guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
        var table = Array(repeating: Array(repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { table[i][0] = i }
        for j in 0...b.count { table[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                table[i][j] = min(table[i - 1][j] + 1, table[i][j - 1] + 1, table[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] { table[i][j] = min(table[i][j], table[i - 2][j - 2] + 1) }
            }
        }
        return table[a.count][b.count]
    }

    /// The subcommand of `command` called `word`, by its name or an alias: the one step of every walk down a command line.
    static func subcommand(of command: ParsableCommand.Type, named word: String) -> ParsableCommand.Type? {
        command.configuration.subcommands.first { $0._commandName == word || $0.configuration.aliases.contains(word) }
    }

    /// The first problem of `arguments` (without the program name) under
    /// `root`: an unknown command at any level, or an unknown `--option` of
    /// the command they name (hidden old spellings count as known); nil when
    /// there is none. A word that is not a subcommand of a command with a
    /// default subcommand (`thumbs IN OUT` is `thumbs make IN OUT`) is that
    /// one's argument, unless it is the start of a subcommand's name and no
    /// such file exists (`thumbs merge OUT`).
    static func problem(in arguments: [String], root: ParsableCommand.Type) -> String? {
        var command = root
        var path = [root._commandName]
        var index = 0
        while index < arguments.count, !command.configuration.subcommands.isEmpty {
            let word = arguments[index]
            if word.hasPrefix("-") || word == "help" { break }
            let subcommands = command.configuration.subcommands
            if let next = subcommand(of: command, named: word) {
                command = next
                path.append(next._commandName)
                index += 1
                continue
            }
            let atRoot = ObjectIdentifier(command) == ObjectIdentifier(root)
            let names = subcommands.filter { $0.configuration.shouldDisplay }.flatMap { [$0._commandName] + $0.configuration.aliases }
                + (atRoot ? ["help"] : [])
            let shown = path.joined(separator: " ")
            if let fallback = command.configuration.defaultSubcommand {
                if word.count >= 3, !FileManager.default.fileExists(atPath: word),
                   let started = names.filter({ $0.hasPrefix(word) && $0 != fallback._commandName }).min(by: { $0.count < $1.count }) {
                    return "unknown command '\(shown) \(word)' (and no file \(word) to give `\(shown) \(fallback._commandName)`). "
                        + "Did you mean '\(shown) \(started)'? (see `\(shown) --help`)"
                }
                command = fallback
                path.append(fallback._commandName)
                break
            }
            let what = atRoot ? "command" : "\(shown) command"
            var message = "unknown \(what) '\(word)'."
            if let near = nearest(word, in: names) { message += " Did you mean '\(near)'?" }
            return message + " The commands are: \(names.joined(separator: ", ")) (see `\(shown) --help`)."
        }
        let known = longOptions(of: command, root: root)
        for word in arguments[index...] {
            if word == "--" { break }
            guard word.hasPrefix("--"), word.count > 2 else { continue }
            let name = String(word.split(separator: "=", maxSplits: 1)[0])
            if known.contains(name) { continue }
            let shown = path.joined(separator: " ")
            var message = "unknown option '\(name)' for `\(shown)`."
            if let near = nearest(name, in: known.sorted()) { message += " Did you mean '\(near)'?" }
            return message + " (see `\(shown) --help`)"
        }
        return nil
    }

    /// The `--names` `command` takes, hidden ones included: read from its help screen, which lists every option it has.
    static func longOptions(of command: ParsableCommand.Type, root: ParsableCommand.Type) -> Set<String> {
        let help = root.helpMessage(for: command, includeHidden: true, columns: 10_000)
        var names: Set<String> = ["--help", "--version"]
        var current = ""
        for character in help + " " {
            if character.isLetter || character.isNumber || character == "-" {
                current.append(character)
            } else {
                if current.hasPrefix("--"), current.count > 2, current.dropFirst(2).first?.isLetter == true { names.insert(current) }
                current = ""
            }
        }
        return names
    }

    /// The name in `names` a mistyped `word` most likely meant: one it begins (the shortest), else the
    /// nearest within max(2, a third of its length) edits; nil when none is that near.
    static func nearest(_ word: String, in names: [String]) -> String? {
        let lowered = word.lowercased()
        if lowered.count >= 3, let started = names.filter({ $0.hasPrefix(lowered) && $0 != lowered }).min(by: { $0.count < $1.count }) {
            return started
        }
        let scored = names.map { ($0, distance(lowered, $0)) }.min { $0.1 < $1.1 }
        guard let scored, scored.1 <= max(2, lowered.count / 3) else { return nil }
        return scored.0
    }
}
