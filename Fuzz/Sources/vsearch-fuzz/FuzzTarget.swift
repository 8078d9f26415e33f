#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One fuzz harness: what `FUZZ_TARGET` calls it, how scripts/fuzz.sh runs it, and the function
/// libFuzzer feeds.
///
/// A harness treats every thrown error as a normal outcome. What counts as a finding is a trap
/// (a Swift runtime check, a `fatalError` on a broken invariant), an AddressSanitizer report, a
/// leak, a timeout or running out of memory.
struct FuzzTarget: Sendable {
    /// The value of `FUZZ_TARGET` that selects this harness, e.g. `jpeg`.
    var name: String
    /// What the harness calls, one line (printed by `FUZZ_TARGET=list`).
    var summary: String
    /// libFuzzer's `-max_len`: the longest input generated, in bytes.
    var maximumInputLength: Int
    /// libFuzzer's `-timeout`: seconds one input may take before it counts as a hang.
    var timeoutSeconds: Int
    /// Seed files, as bash globs relative to the repository root, or absolute (`**` recurses). scripts/fuzz.sh
    /// also adds `Fuzz/Seeds/<name>/*` and `Fuzz/Regressions/<name>/*`.
    var seedGlobs: [String]
    /// Runs one input.
    var run: @Sendable (UnsafeRawBufferPointer) -> Void
}

/// The registry of harnesses. To add one, write `<Thing>Target.swift` with a `static let target`
/// and list it in ``all``.
enum FuzzTargets {
    /// Every harness, in the order scripts/fuzz.sh runs them.
    static let all: [FuzzTarget] = [
        JPEGDecoderTarget.target,
        PNGDecoderTarget.target,
        PNGRoundTripTarget.target,
        WebPDecoderTarget.target,
        HEIFDecoderTarget.target,
        AVIFDecoderTarget.target,
        GIFDecoderTarget.target,
        EXIFReaderTarget.target,
        ICCProfileTarget.target,
        MultipartFormTarget.target,
        QueryStringTarget.target,
        MetadataTableTarget.target,
        EventBatchTarget.target,
    ]

    /// The harness `FUZZ_TARGET` names, resolved once. `FUZZ_TARGET=list` prints one line per
    /// harness (name, max_len, timeout, seed globs, summary; tab-separated) and exits 0; a missing
    /// or unknown name prints the names and exits 2.
    static let selected: FuzzTarget = {
        let requested = getenv("FUZZ_TARGET").map { String(cString: $0) } ?? ""
        if requested == "list" {
            for target in all {
                print([target.name, String(target.maximumInputLength), String(target.timeoutSeconds),
                       target.seedGlobs.joined(separator: " "), target.summary].joined(separator: "\t"))
            }
            exit(0)
        }
        guard let target = all.first(where: { $0.name == requested }) else {
            let names = all.map(\.name).joined(separator: ", ")
            let message = "vsearch-fuzz: set FUZZ_TARGET to one of: \(names) (or list); got \"\(requested)\"\n"
            _ = message.utf8CString.withUnsafeBufferPointer { write(2, $0.baseAddress, $0.count - 1) }
            exit(2)
        }
        return target
    }()
}

/// Stops the process with a message when a harness's own consistency check fails: libFuzzer
/// records the input as a crash like any other.
func invariant(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String,
               file: StaticString = #fileID, line: UInt = #line) {
    if !condition() { fatalError("invariant broken: \(message())", file: file, line: line) }
}
