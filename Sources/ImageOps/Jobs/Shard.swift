import Foundation

/// One part of a batch job split across machines: `--shard i/n` takes the
/// files whose relative path hashes to `i` modulo `n` (i from 0), so n
/// machines under any scheduler — a Kubernetes Indexed Job
/// (`$JOB_COMPLETION_INDEX`), a Slurm array, GNU parallel — split one job
/// without talking to each other, and together process exactly the files one
/// run would. The hash is FNV-1a (64-bit) of the path's UTF-8 bytes: stable
/// across machines, runs and vsearch versions (tests pin it).
///
/// ```swift
/// let shard = try Shard(parsing: "2/8")
/// let mine = files.filter(shard.contains)
/// ```
public struct Shard: Sendable, Hashable, CustomStringConvertible {
    /// This part, `0..<count`.
    public let index: Int
    /// How many parts the job is split into.
    public let count: Int

    /// The whole job: one part.
    public static let whole = Shard(uncheckedIndex: 0, count: 1)

    /// A part; `index` must be in `0..<count`.
    /// - Throws: ``ImageOpsError/invalidParameter(name:reason:)``.
    public init(index: Int, count: Int) throws(ImageOpsError) {
        guard count >= 1, (0..<count).contains(index) else {
            throw .invalidParameter(name: "shard", reason: "\(index)/\(count): the part must be 0 to \(max(0, count - 1)) of \(count) ≥ 1 parts")
        }
        self.init(uncheckedIndex: index, count: count)
    }

    private init(uncheckedIndex index: Int, count: Int) {
        self.index = index
        self.count = count
    }

    /// Reads `i/n`, e.g. `0/3`.
    public init(parsing text: String) throws(ImageOpsError) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0].trimmingCharacters(in: .whitespaces)),
              let count = Int(parts[1].trimmingCharacters(in: .whitespaces)) else {
            throw .invalidParameter(name: "shard", reason: "\"\(text)\" is not i/n (e.g. 0/3: the first of three parts)")
        }
        try self.init(index: index, count: count)
    }

    /// Whether a file (its path relative to the job's input folder) belongs to this part.
    public func contains(_ relativePath: String) -> Bool {
        count == 1 || Int(Shard.hash(relativePath) % UInt64(count)) == index
    }

    /// FNV-1a 64 of the UTF-8 bytes.
    public static func hash(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return hash
    }

    public var description: String { "\(index)/\(count)" }
}
