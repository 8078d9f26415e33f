import Foundation

/// Whole-file reads with a size limit, and atomic writes: data goes to a
/// temporary file in the destination's directory, is flushed, and is then
/// renamed over the destination, so a reader (or a crash) never sees a
/// half-written file.
public enum FileIO {
    /// Reads a whole file, refusing files larger than `maxBytes` before reading them.
    /// - Throws: ``ImageOpsError/io(path:reason:)`` or ``ImageOpsError/limitExceeded(source:limit:)``.
    public static func read(_ path: String, maxBytes: Int = .max) throws(ImageOpsError) -> [UInt8] {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw .io(path: path, reason: "cannot open: \(errnoDescription())") }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .io(path: path, reason: "cannot stat: \(errnoDescription())") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .io(path: path, reason: "not a regular file") }
        let size = Int(info.st_size)
        if size > maxBytes {
            throw .limitExceeded(source: path, limit: .inputBytes(size, maximum: maxBytes))
        }
        if size == 0 { return [] }
        var readError: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            var offset = 0
            guard let base = buffer.baseAddress else { count = 0; return }
            while offset < size {
                let got = Foundation.read(descriptor, base + offset, size - offset)
                if got < 0 {
                    if errno == EINTR { continue }
                    readError = errno
                    break
                }
                if got == 0 { break }  // the file shrank while being read
                offset += got
            }
            count = offset
        }
        if readError != 0 { throw .io(path: path, reason: "read failed: \(String(cString: strerror(readError)))") }
        return bytes
    }

    /// Writes `bytes` to `path` atomically (temporary file, fsync-free flush, rename).
    /// On failure the temporary file is removed and the destination is untouched.
    public static func writeAtomically(_ bytes: some Collection<UInt8>, to path: String) throws(ImageOpsError) {
        let temporary = temporaryPath(for: path)
        do {
            try write(bytes, to: temporary)
            try commit(temporary, to: path)
        } catch {
            unlink(temporary)
            throw error
        }
    }

    /// A unique temporary name next to `path` (hidden, same directory so rename is atomic).
    public static func temporaryPath(for path: String) -> String {
        let url = URL(fileURLWithPath: path)
        let directory = url.deletingLastPathComponent().path
        let name = ".\(url.lastPathComponent).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        return (directory as NSString).appendingPathComponent(name)
    }

    /// Writes `bytes` to a new file at `path` (which must not exist).
    public static func write(_ bytes: some Collection<UInt8>, to path: String) throws(ImageOpsError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw .io(path: path, reason: "cannot create: \(errnoDescription())") }
        var failure: Int32 = 0
        let contiguous = Array(bytes)
        contiguous.withUnsafeBytes { raw in
            var offset = 0
            guard let base = raw.baseAddress else { return }
            while offset < raw.count {
                let written = Foundation.write(descriptor, base + offset, raw.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                offset += written
            }
        }
        if close(descriptor) != 0 && failure == 0 { failure = errno }
        if failure != 0 {
            unlink(path)
            throw .io(path: path, reason: "write failed: \(String(cString: strerror(failure)))")
        }
    }

    /// Renames a finished temporary file over its destination.
    public static func commit(_ temporary: String, to path: String) throws(ImageOpsError) {
        if rename(temporary, path) != 0 {
            let reason = errnoDescription()
            unlink(temporary)
            throw .io(path: path, reason: "cannot rename into place: \(reason)")
        }
    }

    /// Creates a directory and its parents.
    public static func makeDirectory(_ path: String) throws(ImageOpsError) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw .io(path: path, reason: "cannot create directory: \(error.localizedDescription)")
        }
    }

    /// The modification time of a file, or `nil` when it does not exist.
    public static func modificationTime(_ path: String) -> timespec? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        #if canImport(Darwin)
        return info.st_mtimespec
        #else
        return info.st_mtim
        #endif
    }

    static func errnoDescription() -> String { String(cString: strerror(errno)) }
}
