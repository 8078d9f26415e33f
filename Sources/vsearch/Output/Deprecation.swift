/// Old spellings of options, still accepted for a release, and said so each
/// time they are used (README, "Renamed in 0.3.0").
enum Deprecation {
    /// Prints `warning: OLD is the old spelling of NEW; …` on stderr.
    static func warn(_ old: String, instead new: String) {
        Terminal.err("warning: \(old) is the old spelling of \(new), still accepted in 0.3 and removed after it; use \(new)\n")
    }
}
