import Foundation
import ImageOps
import Logging
import SearchEngine
import VisualSearch
import Synchronization
import ConcurrencyToolkit

/// Thumbnails made on their first request and kept on disk: the Rezolve
/// rule's sizes (``SingleThumbnail``), one file per source version and size.
///
/// A thumbnail's file is named by a hash of the source's path, modification
/// time and size and the thumbnail's size and rule, so a changed source gets
/// a new thumbnail and stale ones are never served (old files stay until the
/// folder is cleared: `rm -r` is always safe). Files are written to a
/// temporary name and renamed, so a crash never leaves half a thumbnail.
/// Requests for a thumbnail being made wait for it instead of making it again.
/// When the folder cannot be written, thumbnails are made and served anyway
/// (and the problem is logged once).
public final class ThumbnailCache: Sendable {
    /// The folder thumbnails are kept in.
    public let directory: String
    let maker: SingleThumbnail
    let logger: Logger
    /// Where thumbnails are decoded and made: on the request's task when nil,
    /// or under an ``ImageWorkPool``'s pixel budget (`vsearch serve`).
    let imageWork: ImageWorkPool?
    private let inFlight = Locked<[String: Task<Result<Made, ImageOpsError>, Never>]>([:])
    private let warned = Atomic<Bool>(false)

    /// A thumbnail, or the news that the rule makes none of this size.
    enum Made: Sendable {
        case thumbnail([UInt8])
        case useOriginal
        /// Not made now: the image work pool refused it (overloaded; 503 with `Retry-After`).
        case refused(VisualSearchError)
    }

    /// Keeps thumbnails in `directory` (created when needed).
    public init(directory: String, maker: SingleThumbnail = SingleThumbnail(), imageWork: ImageWorkPool? = nil,
                logger: Logger = Logger(label: "vsearch.thumbnails")) {
        self.directory = directory
        self.imageWork = imageWork
        self.maker = maker
        self.logger = logger
    }

    /// `$XDG_CACHE_HOME/vsearch/thumbnails`, else `~/.cache/vsearch/thumbnails`.
    public static var defaultDirectory: String {
        let environment = ProcessInfo.processInfo.environment
        let base = environment["XDG_CACHE_HOME"].flatMap { $0.isEmpty ? nil : $0 }
            ?? (NSHomeDirectory() as NSString).appendingPathComponent(".cache")
        return ((base as NSString).appendingPathComponent("vsearch") as NSString).appendingPathComponent("thumbnails")
    }

    /// Where the thumbnail of `file` at `size` is kept.
    func path(of file: SourceFile, size: Int) -> String {
        let rule = maker.rule
        let key = ContentHash.of(Array("\(file.path)\n\(file.modified)\n\(file.bytes)\n\(size)\n\(rule.fit.rawValue)\(rule.sizes)".utf8))
        return ((directory as NSString).appendingPathComponent(String(key.prefix(2))) as NSString).appendingPathComponent(key)
    }

    /// The thumbnail of `file` at `size`: from the folder, or made now (and kept).
    /// `name` names the image in errors.
    func thumbnail(of file: SourceFile, size: Int, name: String) async -> Result<Made, ImageOpsError> {
        let path = path(of: file, size: size)
        if let bytes = try? FileIO.read(path) { return .success(.thumbnail(bytes)) }
        let (task, isNew) = inFlight.withLock { running -> (Task<Result<Made, ImageOpsError>, Never>, Bool) in
            if let task = running[path] { return (task, false) }
            let task = Task { await self.make(file, size: size, name: name, into: path) }
            running[path] = task
            return (task, true)
        }
        let result = await task.value
        if isNew { _ = inFlight.withLock { $0.removeValue(forKey: path) } }
        return result
    }

    private func make(_ file: SourceFile, size: Int, name: String, into path: String) async -> Result<Made, ImageOpsError> {
        do throws(ImageOpsError) {
            let bytes = try FileIO.read(file.path, maxBytes: maker.limits.maxInputBytes)
            let made: SingleThumbnail.Thumbnail?
            if let imageWork {
                let maker = self.maker
                let pixels = try maker.decodedPixelCount(of: bytes, source: name, size: size)
                do throws(VisualSearchError) {
                    made = try await imageWork.run(pixels: pixels) {
                        () throws(ImageOpsError) in try maker.make(from: bytes, source: name, size: size)
                    }
                } catch {
                    if case .image(let error) = error { throw error }
                    return .success(.refused(error))
                }
            } else {
                made = try maker.make(from: bytes, source: name, size: size)
            }
            guard let thumbnail = made else { return .success(.useOriginal) }
            do throws(ImageOpsError) {
                try FileIO.makeDirectory((path as NSString).deletingLastPathComponent)
                try FileIO.writeAtomically(thumbnail.bytes, to: path)
            } catch {
                if !warned.exchange(true, ordering: .relaxed) {
                    logger.warning("thumbnails are not kept: cannot write to \(directory): \(error.description)")
                }
            }
            return .success(.thumbnail(thumbnail.bytes))
        } catch {
            return .failure(error)
        }
    }
}
