import Foundation
import SearchEngine

/// What the command line says about the catalog's HNSW index (``ApproximateIndex``):
/// builds' progress, what an update did, and why a saved index was not used.
enum GraphReporting {
    /// Warnings only: a saved index that could not be used, a build that failed.
    @Sendable static func warnings(_ result: Result<ApproximateIndex.Report, HNSWGraphError>) {
        for line in lines(result, verbose: false) { Terminal.err(line + "\n") }
    }

    /// What an update did, a line per space, and its warnings.
    static func lines(_ result: Result<ApproximateIndex.Report, HNSWGraphError>, verbose: Bool) -> [String] {
        switch result {
        case .failure(let error):
            return ["warning: the HNSW index could not be made (\(error.message)); queries scan every image exactly"]
        case .success(let report):
            var lines: [String] = []
            if let failure = report.compactionFailure {
                lines.append("warning: the HNSW index could not be compacted (\(failure)); the current one goes on answering")
            }
            for space in report.spaces {
                if let reason = space.unusable {
                    lines.append("warning: the saved HNSW index (\(space.space.fileName)) was not used: \(reason)"
                                 + (space.built ? "; rebuilt" : "; queries scan exactly until `vsearch catalog hnsw` rebuilds it"))
                }
                guard verbose else { continue }
                lines.append(describe(space) + (report.saved ? "; saved" : ""))
            }
            return lines
        }
    }

    /// "HNSW index (color): loaded, 1,000,000 vectors; caught up +3 ~1 -2; 1.2 s, 250 MB in memory".
    static func describe(_ space: ApproximateIndex.Report.Space) -> String {
        let footprint = String(format: "; %.1f s, %.0f MB in memory", space.seconds, Double(space.memoryBytes) / 1e6)
        if space.compacted {
            var text = "HNSW index (\(space.space.fileName)): compacted, \(Terminal.count(space.count, "vector")); "
                + "\(Terminal.count(space.removed, "removed row")) dropped"
            if space.added + space.replaced > 0 { text += ", \(space.added) added and \(space.replaced) replaced meanwhile" }
            return text + footprint
        }
        let how = space.built ? "built" : (space.loaded ? "loaded" : "kept")
        var text = "HNSW index (\(space.space.fileName)): \(how), \(Terminal.count(space.count, "vector"))"
        if !space.built, space.added + space.replaced + space.removed > 0 {
            text += "; caught up: \(space.added) added, \(space.replaced) replaced, \(space.removed) removed"
        }
        return text + footprint
    }

    /// "catalog index: 1,000,000 images from the saved vectors in 1.1 s" (or from the catalog's rows, saying why
    /// saved vectors were not used; or "caught up 71 changed images").
    static func describe(_ load: IndexLoad) -> String {
        let seconds = String(format: "%.2f s", load.seconds)
        switch load.source {
        case .savedVectors:
            return "catalog index: \(Terminal.count(load.count, "image")) from the saved vectors in \(seconds)"
        case .changes:
            return "catalog index: caught up \(Terminal.count(load.changed, "changed image")) in \(seconds) (\(Terminal.count(load.count, "image")))"
        case .catalogRows:
            return "catalog index: \(Terminal.count(load.count, "image")) read from the catalog in \(seconds)"
                + (load.notUsed.map { " (saved vectors not used: \($0))" } ?? "")
        }
    }

    /// Build progress on stderr, a line about every 10 % (and the last), for `vsearch catalog hnsw`, `index` and `serve`.
    static func progress() -> @Sendable (VectorSpace, Int, Int) -> Bool {
        let last = LastReported()
        return { space, done, total in
            let tenth = total > 0 ? done * 10 / total : 10
            if last.advance(to: tenth, space: space) {
                Terminal.err("HNSW index (\(space.fileName)): \(done) of \(total) vectors added\n")
            }
            return !Interrupt.isRequested
        }
    }

    final class LastReported: @unchecked Sendable {
        let lock = NSLock()
        var space: VectorSpace?
        var tenth = -1
        func advance(to tenth: Int, space: VectorSpace) -> Bool {
            lock.withLock {
                if self.space != space { self.space = space; self.tenth = -1 }
                guard tenth > self.tenth else { return false }
                self.tenth = tenth
                return true
            }
        }
    }
}
