import Foundation

/// A strict reading of the Prometheus text exposition format 0.0.4, for the
/// tests of `/metrics`: families (their `# HELP`, `# TYPE` and samples, in
/// order) and every way the text breaks the format's rules, as ``problems``
/// rather than a throw, so one test can list them all.
///
/// A family's block starts at its `# HELP` or `# TYPE` line; its samples follow
/// it (a histogram's as `_bucket`, `_sum`, `_count`). A sample outside its
/// family's block, a family named twice, a label value with a bad escape or a
/// value that is not a number is a problem.
struct Exposition {
    struct Sample: Equatable {
        var name: String
        var labels: [String: String]
        /// The label names in the order written.
        var labelNames: [String]
        var value: Double
    }

    struct Family {
        var name: String
        var help: String?
        var type: String?
        var samples: [Sample] = []
    }

    private(set) var families: [Family] = []
    private(set) var problems: [String] = []

    /// The family called `name`.
    subscript(name: String) -> Family? { families.first { $0.name == name } }

    init(_ text: String) {
        if !text.isEmpty && !text.hasSuffix("\n") { problems.append("the text does not end with a line feed") }
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() where !line.isEmpty {
            read(String(line), number: number + 1)
        }
    }

    private mutating func read(_ line: String, number: Int) {
        if line.hasPrefix("#") {
            let words = line.split(separator: " ", maxSplits: 3, omittingEmptySubsequences: false)
            guard words.count >= 3, words[0] == "#", words[1] == "HELP" || words[1] == "TYPE" else { return }  // a comment
            let name = String(words[2]), rest = words.count > 3 ? String(words[3]) : ""
            let index = family(named: name, line: number)
            if words[1] == "HELP" {
                if families[index].help != nil { problems.append("line \(number): a second HELP for \(name)") }
                guard let help = Self.unescape(rest, quotes: false) else {
                    problems.append("line \(number): a bad escape in \(name)'s HELP")
                    return
                }
                families[index].help = help
            } else {
                if families[index].type != nil { problems.append("line \(number): a second TYPE for \(name)") }
                if !families[index].samples.isEmpty { problems.append("line \(number): \(name)'s TYPE after its samples") }
                families[index].type = rest
            }
            return
        }
        guard let sample = Self.sample(line) else {
            problems.append("line \(number): not a sample: \(line)")
            return
        }
        guard let current = families.last, Self.belongs(sample.name, to: current) else {
            problems.append("line \(number): \(sample.name) outside its family's block (no HELP or TYPE right before it)")
            return
        }
        families[families.count - 1].samples.append(sample)
    }

    /// The index of `name`'s family, which starts here (it is a problem if it started before and something else came between).
    private mutating func family(named name: String, line: Int) -> Int {
        if let last = families.last, last.name == name { return families.count - 1 }
        if families.contains(where: { $0.name == name }) { problems.append("line \(line): \(name) appears in two blocks") }
        families.append(Family(name: name))
        return families.count - 1
    }

    static func belongs(_ sample: String, to family: Family) -> Bool {
        if sample == family.name { return true }
        guard family.type == "histogram" || family.type == "summary" else { return false }
        return ["_bucket", "_sum", "_count"].contains { sample == family.name + $0 }
    }

    /// `name{label="value",…} value [timestamp]`.
    static func sample(_ line: String) -> Sample? {
        let characters = Array(line)
        var index = 0
        var name = ""
        while index < characters.count, characters[index] != "{", characters[index] != " " {
            name.append(characters[index])
            index += 1
        }
        var labels: [String: String] = [:], labelNames: [String] = []
        if index < characters.count, characters[index] == "{" {
            index += 1
            while index < characters.count, characters[index] != "}" {
                var label = ""
                while index < characters.count, characters[index] != "=" {
                    label.append(characters[index])
                    index += 1
                }
                guard index + 1 < characters.count, characters[index + 1] == "\"" else { return nil }
                index += 2
                var raw = ""
                while index < characters.count, characters[index] != "\"" {
                    if characters[index] == "\\", index + 1 < characters.count {
                        raw.append(characters[index])
                        index += 1
                    }
                    raw.append(characters[index])
                    index += 1
                }
                guard index < characters.count, let value = unescape(raw, quotes: true), labels[label] == nil else { return nil }
                labels[label] = value
                labelNames.append(label)
                index += 1
                if index < characters.count, characters[index] == "," { index += 1 }
            }
            index += 1
        }
        let rest = String(characters[min(index, characters.count)...]).split(separator: " ")
        guard !name.isEmpty, rest.count == 1 || rest.count == 2, let value = number(rest[0]) else { return nil }
        return Sample(name: name, labels: labels, labelNames: labelNames, value: value)
    }

    /// A sample value: a float as Go writes it, or `+Inf`, `-Inf`, `NaN`.
    static func number(_ text: Substring) -> Double? {
        switch text {
        case "+Inf": .infinity
        case "-Inf": -.infinity
        case "NaN": .nan
        default: Double(text)
        }
    }

    /// `\\` and `\n` (and `\"` in label values); any other escape is an error.
    static func unescape(_ text: String, quotes: Bool) -> String? {
        var result = "", escaped = false
        for character in text {
            if escaped {
                switch character {
                case "\\": result.append("\\")
                case "n": result.append("\n")
                case "\"" where quotes: result.append("\"")
                default: return nil
                }
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else {
                result.append(character)
            }
        }
        return escaped ? nil : result
    }
}
