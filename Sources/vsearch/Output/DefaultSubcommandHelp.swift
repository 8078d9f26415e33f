import ArgumentParser

/// `vsearch thumbs --help` for a command whose subcommand runs by default
/// (`vsearch thumbs IN OUT` is `vsearch thumbs make IN OUT`): the command's
/// help, then the default subcommand's — its options are what the user types
/// — instead of ArgumentParser's list of subcommands alone.
enum DefaultSubcommandHelp {
    /// The help text for `arguments` (without the program name) when they are
    /// a group with a default subcommand followed by `--help` or `-h`; nil otherwise.
    static func message(for arguments: [String], root: ParsableCommand.Type) -> String? {
        guard let last = arguments.last, last == "--help" || last == "-h" else { return nil }
        var command = root
        var path = [root._commandName]
        for word in arguments.dropLast() {
            guard let next = CommandSuggestion.subcommand(of: command, named: word) else { return nil }
            command = next
            path.append(next._commandName)
        }
        guard let fallback = command.configuration.defaultSubcommand else { return nil }
        let group = path.joined(separator: " ")
        // The group's own help (what it is, its subcommands), then the options that `group IN OUT` takes.
        return root.helpMessage(for: command) + "\n`\(group) …` runs `\(group) \(fallback._commandName) …`:\n\n"
            + root.helpMessage(for: fallback)
    }
}
