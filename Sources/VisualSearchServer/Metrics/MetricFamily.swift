import Foundation

/// One metric family of `/metrics`: the name, type, `# HELP` text and label
/// names a scraper sees. Every family the server reports is defined once, in
/// ``MetricFamily/all`` (MetricFamilies.swift); ``ServerMetrics`` records only
/// through these definitions, so a family's help and type cannot differ
/// between the places that feed it.
///
/// Names follow Prometheus' conventions (https://prometheus.io/docs/practices/naming/):
/// `vsearch_` (or `process_` for the standard process metrics) first, base
/// units spelled out as the last word before `_total` (`_seconds`,
/// `_bytes`), counters ending in `_total`.
struct MetricFamily: Sendable, Hashable, CustomStringConvertible {
    /// The family's `# TYPE`.
    enum Kind: String, Sendable {
        case counter, gauge, histogram
    }

    let name: String
    let kind: Kind
    /// The `# HELP` text: one line, what a sample counts and in which unit.
    let help: String
    /// The label names every sample carries, in order (none for most).
    let labels: [String]

    init(_ name: String, _ kind: Kind, _ help: String, labels: [String] = []) {
        self.name = name
        self.kind = kind
        self.help = help
        self.labels = labels
    }

    var description: String { name }

    /// `labels`' names paired with `values`, in order.
    func dimensions(_ values: [String]) -> [(String, String)] {
        precondition(values.count == labels.count, "\(name) takes the labels \(labels), got \(values.count) values")
        return Array(zip(labels, values))
    }

    /// The family with one unlabelled sample, in the text format 0.0.4: `# HELP`, `# TYPE`, the sample.
    /// Integral values print without a fraction (`3`, not `3.0`).
    func exposition(_ value: Double) -> String {
        let number = value.rounded() == value && abs(value) < 1e15 ? String(Int64(value)) : String(value)
        return "# HELP \(name) \(Self.escapedHelp(help))\n# TYPE \(name) \(kind.rawValue)\n\(name) \(number)\n"
    }

    /// Help text as the format wants it: `\` as `\\`, a line feed as `\n`.
    static func escapedHelp(_ help: String) -> String {
        help.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
    }
}
