import Foundation

/// Sharded thumbnail jobs: each part writes its own manifest, and one merge
/// afterwards makes the `manifest.jsonl` a single run would have written.
extension ThumbnailBatch {
    /// The manifest of a whole job.
    public static let manifestName = "manifest.jsonl"

    /// The manifest a part writes: `manifest.shard-I-of-N.jsonl`.
    public static func shardManifestName(_ shard: Shard) -> String {
        "manifest.shard-\(shard.index)-of-\(shard.count).jsonl"
    }

    /// What a merge did.
    public struct MergeSummary: Sendable, Hashable, Codable {
        /// How many parts were merged.
        public var shards: Int
        /// Lines in the merged manifest.
        public var lines: Int
        /// The merged manifest's path.
        public var manifest: String
        /// The parts' manifests, merged and then removed.
        public var removed: [String]
    }

    /// Joins the parts' manifests in `output` into `manifest.jsonl` — the
    /// lines a single run writes, in its order (by image) — then removes the
    /// parts' files, so the folder holds exactly what one run leaves.
    /// - Throws: ``ImageOpsError/io(path:reason:)`` naming a missing part
    ///   (nothing is changed then), or when no part's manifest is there.
    public static func mergeManifests(in output: String) throws(ImageOpsError) -> MergeSummary {
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: output) } catch {
            throw .io(path: output, reason: "cannot list the folder: \(error.localizedDescription)")
        }
        let parts = names.compactMap { name -> Shard? in
            guard name.hasPrefix("manifest.shard-"), name.hasSuffix(".jsonl") else { return nil }
            let middle = name.dropFirst("manifest.shard-".count).dropLast(".jsonl".count).replacingOccurrences(of: "-of-", with: "/")
            return try? Shard(parsing: middle)
        }
        guard let count = parts.map(\.count).max() else {
            throw .io(path: (output as NSString).appendingPathComponent("manifest.shard-0-of-N.jsonl"),
                      reason: "no shard manifests to merge (make them first: one run per part i/n of \(SettingName.thumbnailShard))")
        }
        guard Set(parts.map(\.count)).count == 1 else {
            throw .io(path: output, reason: "manifests of differently split jobs (\(Set(parts.map(\.count)).sorted()) parts); remove the stale ones")
        }
        let shards = (0..<count).map { index in (try? Shard(index: index, count: count)) ?? .whole }
        for shard in shards where !parts.contains(shard) {
            throw .io(path: (output as NSString).appendingPathComponent(shardManifestName(shard)),
                      reason: "missing: shard \(shard) has not finished, or was not run")
        }
        var lines: [(image: String, text: Data)] = []
        let decoder = JSONDecoder()
        for shard in shards {
            let path = (output as NSString).appendingPathComponent(shardManifestName(shard))
            let data = Data(try FileIO.read(path))
            for line in data.split(separator: 0x0A) where !line.isEmpty {
                guard let entry = try? decoder.decode(ManifestLine.self, from: Data(line)) else {
                    throw .io(path: path, reason: "a line is not a manifest entry")
                }
                lines.append((entry.image, Data(line)))
            }
        }
        lines.sort { $0.image < $1.image }
        var text = Data()
        for line in lines {
            text.append(line.text)
            text.append(0x0A)
        }
        let manifest = (output as NSString).appendingPathComponent(manifestName)
        try FileIO.writeAtomically(text, to: manifest)
        for shard in shards {
            try? FileManager.default.removeItem(atPath: (output as NSString).appendingPathComponent(shardManifestName(shard)))
        }
        return MergeSummary(shards: count, lines: lines.count, manifest: manifest, removed: shards.map(shardManifestName))
    }
}
