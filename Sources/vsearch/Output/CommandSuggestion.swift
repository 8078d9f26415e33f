/// The first word of a command line that names no command (`vsearch serach
/// --image x`): said plainly, with the nearest command, before ArgumentParser
/// would complain about the options that follow it instead.
enum CommandSuggestion {
    /// The message for `word` when it is not one of `commands` (and not an option); nil when it is.
    static func unknownCommand(_ word: String, commands: [String]) -> String? {
        guard !word.hasPrefix("-"), !commands.contains(word) else { return nil }
        let nearest = commands.map { ($0, distance(word.lowercased(), $0)) }.min { $0.1 < $1.1 }
        var message = "unknown command '\(word)'."
        if let nearest, nearest.1 <= max(2, word.count / 3) { message += " Did you mean '\(nearest.0)'?" }
        return message + " The commands are: \(commands.joined(separator: ", ")) (see `vsearch --help`)."
    }

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
}
