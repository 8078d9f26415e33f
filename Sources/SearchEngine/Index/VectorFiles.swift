import Foundation

/// A catalog's vectors saved beside its graphs (``GraphFiles``' folder,
/// `catalog.sqlite.hnsw/`), so an engine opening a large catalog reads one
/// file instead of every row: the ``FeatureIndex`` it would load — ids,
/// names, sources, palettes, colour vectors, learned ones as `Int8`s
/// (``FeatureIndexFile``) — in `vectors-<unique>.index`, named by a manifest
/// (`vectors.json`) with the file's size and CRC-32, the catalog version and
/// row count it reflects and the learned model's tag.
///
/// **Used only for the catalog it was saved from, as it is now.** An engine
/// loads it when the catalog's version counter (moved by every committed
/// change, by any process), row count and learned model are the manifest's,
/// then reads back sixteen random rows from the catalog and compares them
/// field by field (``VisualSearchEngine``): a catalog file replaced by another
/// whose counter happens to match is caught there. Anything else — another
/// version, a damaged or torn file — is read from the catalog as without a
/// cache, and saved again at the next save.
///
/// Saving follows the graphs' discipline: the new file is written and
/// fsync'd, then a new manifest replaces the old by rename (folder fsync'd),
/// then the old file is deleted; a process killed at any moment leaves a
/// manifest naming a whole file, and leftovers nothing names are swept after
/// an hour.
public struct VectorFiles: Sendable {
    /// The folder holding the files (the graphs' folder).
    public let directory: String

    /// The manifest's format; another is treated as missing.
    static let format = 1
    static let manifestName = "vectors.json"
    static let filePrefix = "vectors-"
    static let fileSuffix = ".index"

    /// What the manifest records of its file.
    public struct Manifest: Codable, Sendable, Equatable {
        public var format: Int
        /// The catalog's version counter when the vectors were saved.
        public var catalogVersion: Int
        /// Rows saved.
        public var count: Int
        /// Colour floats per row.
        public var dimensions: Int
        /// Learned values per row; 0 without learned vectors.
        public var learnedDimensions: Int
        /// The learned model's tag; nil without learned vectors.
        public var model: String?
        /// The file, in the same folder.
        public var file: String
        public var bytes: UInt64
        public var crc32: UInt32
    }

    /// What loading found.
    public enum Loaded: Sendable {
        case index(FeatureIndex, Manifest)
        /// No manifest (never saved, or another format).
        case missing
        /// Saved for another state of the catalog (version, size or model): read the catalog.
        case stale(String)
        /// A manifest whose file cannot be used: damaged, torn, missing.
        case unusable(String)
    }

    public init(directory: String) {
        self.directory = directory
    }

    /// The graphs' folder: the vectors live beside them.
    public init(beside graphs: GraphFiles) {
        self.init(directory: graphs.directory)
    }

    var manifestPath: String { (directory as NSString).appendingPathComponent(Self.manifestName) }

    /// The saved manifest, when there is a readable one.
    public func manifest() -> Manifest? {
        guard let data = FileManager.default.contents(atPath: manifestPath),
              let manifest = try? JSONDecoder().decode(Manifest.self, from: data), manifest.format == Self.format else { return nil }
        return manifest
    }

    /// Reads the saved vectors when they were saved from the catalog at
    /// `version` holding `count` rows with learned vectors of `model`
    /// (`learnedDimensions` values each; 0 and nil without).
    public func load(version: Int, count: Int, model: String?, learnedDimensions: Int) -> Loaded {
        guard let manifest = manifest() else {
            return FileManager.default.fileExists(atPath: manifestPath) ? .unusable("its manifest \(Self.manifestName) cannot be read") : .missing
        }
        guard manifest.catalogVersion == version, manifest.count == count else {
            return .stale("saved at catalog version \(manifest.catalogVersion) with \(manifest.count) rows; the catalog is at \(version) with \(count)")
        }
        guard manifest.model == model, manifest.learnedDimensions == learnedDimensions else {
            return .stale("saved for the model \(manifest.model ?? "none"), the catalog's is \(model ?? "none")")
        }
        guard manifest.file.hasPrefix(Self.filePrefix), manifest.file.hasSuffix(Self.fileSuffix), !manifest.file.contains("/") else {
            return .unusable("its manifest names no vectors file")
        }
        let path = (directory as NSString).appendingPathComponent(manifest.file)
        guard FileManager.default.fileExists(atPath: path) else { return .unusable("its file \(manifest.file) is missing") }
        do throws(VectorFilesError) {
            let index = try FeatureIndexFile.read(path, bytes: manifest.bytes, crc: manifest.crc32)
            guard index.count == manifest.count, index.dimensions == manifest.dimensions,
                  index.learnedDimensions == manifest.learnedDimensions else {
                return .unusable("\(manifest.file) holds \(index.count) rows of \(index.dimensions)+\(index.learnedDimensions) values, "
                                 + "its manifest records \(manifest.count) of \(manifest.dimensions)+\(manifest.learnedDimensions)")
            }
            return .index(index, manifest)
        } catch {
            return .unusable(error.message)
        }
    }

    /// Saves `index` as the catalog at `catalogVersion` (see the type's note on how).
    @discardableResult
    public func save(_ index: FeatureIndex, catalogVersion: Int, model: String?) throws(VectorFilesError) -> Manifest {
        let manager = FileManager.default
        do {
            try manager.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw VectorFilesError(.io, "cannot create \(directory): \(error.localizedDescription)")
        }
        let previous = manifest()
        let file = Self.filePrefix + UUID().uuidString.lowercased() + Self.fileSuffix
        let path = (directory as NSString).appendingPathComponent(file)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw VectorFilesError(.io, "cannot create \(path): \(String(cString: strerror(errno)))") }
        let written: (bytes: UInt64, crc: UInt32)
        do throws(VectorFilesError) {
            defer { close(descriptor) }
            written = try FeatureIndexFile.write(index, to: descriptor, path: path)
        } catch {
            try? manager.removeItem(atPath: path)
            throw error
        }
        let manifest = Manifest(format: Self.format, catalogVersion: catalogVersion, count: index.count, dimensions: index.dimensions,
                                learnedDimensions: index.learnedDimensions, model: index.learnedDimensions > 0 ? model : nil,
                                file: file, bytes: written.bytes, crc32: written.crc)
        let temporary = manifestPath + ".partial-\(getpid())"
        do throws(VectorFilesError) {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            let data: Data
            do { data = try encoder.encode(manifest) } catch { throw VectorFilesError(.io, "cannot encode \(Self.manifestName): \(error)") }
            do { try GraphFiles.writeDurably(data, to: temporary) } catch { throw VectorFilesError(.io, "\(error)") }
            guard rename(temporary, manifestPath) == 0 else {
                throw VectorFilesError(.io, "cannot replace \(manifestPath): \(String(cString: strerror(errno)))")
            }
            GraphFiles.syncDirectory(directory)
        } catch {
            try? manager.removeItem(atPath: temporary)
            try? manager.removeItem(atPath: path)
            throw error
        }
        if let previous, previous.file != file { try? manager.removeItem(atPath: (directory as NSString).appendingPathComponent(previous.file)) }
        sweep(keeping: file)
        return manifest
    }

    /// Deletes vectors files no manifest names, and torn manifests, older than an hour
    /// (another process may be between writing its file and its manifest).
    func sweep(keeping file: String) {
        let manager = FileManager.default
        guard let names = try? manager.contentsOfDirectory(atPath: directory) else { return }
        let cutoff = Date().addingTimeInterval(-3600)
        for name in names where name != file
            && (name.hasPrefix(Self.filePrefix) && name.hasSuffix(Self.fileSuffix) || name.hasPrefix(Self.manifestName + ".partial-")) {
            let path = (directory as NSString).appendingPathComponent(name)
            if let modified = (try? manager.attributesOfItem(atPath: path))?[.modificationDate] as? Date, modified < cutoff {
                try? manager.removeItem(atPath: path)
            }
        }
    }
}

/// Why saved vectors could not be written or read.
public struct VectorFilesError: Error, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        case io, damaged
    }

    public var kind: Kind
    public var message: String

    init(_ kind: Kind, _ message: String) {
        self.kind = kind
        self.message = message
    }

    public var description: String { message }
}
