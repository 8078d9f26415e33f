import Foundation

/// Where a catalog's HNSW graphs are saved — a folder beside the catalog
/// (`catalog.sqlite.hnsw/`) — and how: per vector space, a graph file
/// (`color-<unique>.graph`, hnswlib's format) and a manifest (`color.json`)
/// naming that file with its size, CRC-32, dimension and the catalog
/// version it reflects.
///
/// Saving never changes a file a manifest names: the new graph goes to a
/// new file (written and fsync'd), then a new manifest replaces the old one
/// by rename (fsync'd, folder too), then the old graph file is deleted. A
/// process killed at any moment leaves a manifest naming a whole graph —
/// or, at worst, a graph file nothing names (swept by the next save). A
/// file damaged later fails its checksum on load and is rebuilt.
public struct GraphFiles: Sendable {
    /// The folder holding the graphs.
    public let directory: String

    /// The manifest's format; another is treated as missing (rebuilt).
    static let format = 1

    /// What a manifest records of its graph.
    public struct Manifest: Codable, Sendable, Equatable {
        public var format: Int
        /// `color` or `learned`.
        public var space: String
        public var dimensions: Int
        /// The learned model's tag for the learned space.
        public var model: String?
        /// The catalog's version counter when the graph was saved.
        public var catalogVersion: Int
        /// Vectors present.
        public var count: Int
        /// The graph file, in the same folder.
        public var file: String
        public var bytes: UInt64
        public var crc32: UInt32
        public var linksPerNode: Int
        public var efConstruction: Int
        /// The fingerprint of the catalog's vectors the graph was last compared with
        /// (``ApproximateIndex``): when the catalog's still match it, the comparison is skipped.
        public var vectors: UInt64?
    }

    /// What loading found.
    public enum Loaded: Sendable {
        case graph(HNSWGraph, Manifest)
        /// No manifest (never saved, or another format).
        case missing
        /// A manifest whose graph cannot be used: damaged, torn, or for other vectors.
        case unusable(String)
    }

    public init(directory: String) {
        self.directory = directory
    }

    /// The folder beside a catalog file: `catalog.sqlite` → `catalog.sqlite.hnsw`.
    public init(besideCatalog path: String) {
        self.init(directory: path + ".hnsw")
    }

    func manifestPath(_ space: VectorSpace) -> String { (directory as NSString).appendingPathComponent("\(space.fileName).json") }

    /// The saved manifest of a space, when there is a readable one.
    public func manifest(_ space: VectorSpace) -> Manifest? {
        guard let data = FileManager.default.contents(atPath: manifestPath(space)),
              let manifest = try? JSONDecoder().decode(Manifest.self, from: data), manifest.format == Self.format else { return nil }
        return manifest
    }

    /// Reads a space's saved graph, with room for `capacity` vectors (the
    /// catalog's rows: never a number the manifest or the file claims — the
    /// file's node count is checked against its size before it sizes anything),
    /// and checks that the manifest's count is the graph's.
    public func load(_ space: VectorSpace, dimensions: Int, model: String?, capacity: Int) -> Loaded {
        guard let manifest = manifest(space) else {
            // A manifest that is there but unreadable (torn by hand, another version's format) is said, not ignored.
            return FileManager.default.fileExists(atPath: manifestPath(space)) ? .unusable("its manifest \(space.fileName).json cannot be read") : .missing
        }
        guard manifest.space == space.fileName, manifest.dimensions == dimensions else {
            return .unusable("its manifest is for \(manifest.dimensions)-float \(manifest.space) vectors, the catalog has \(dimensions)-float \(space.fileName) ones")
        }
        guard manifest.model == model else {
            return .unusable("it was built for the model \(manifest.model ?? "none"), the catalog's is \(model ?? "none")")
        }
        guard !manifest.file.contains("/"), manifest.file.hasSuffix(".graph") else { return .unusable("its manifest names no graph file") }
        let path = (directory as NSString).appendingPathComponent(manifest.file)
        guard FileManager.default.fileExists(atPath: path) else { return .unusable("its graph file \(manifest.file) is missing") }
        do {
            let graph = try HNSWGraph(loading: path, dimensions: dimensions, bytes: manifest.bytes, crc: manifest.crc32,
                                      capacity: max(1, capacity))
            guard graph.count == manifest.count else {
                return .unusable("its manifest records \(manifest.count) vectors, the graph file \(manifest.file) holds \(graph.count)")
            }
            return .graph(graph, manifest)
        } catch {
            return .unusable("\(manifest.file): \(error.message)")
        }
    }

    /// Saves a space's graph as reflecting `catalogVersion` (see the type's note on how).
    @discardableResult
    public func save(_ graph: HNSWGraph, space: VectorSpace, model: String?, catalogVersion: Int,
                     vectors: UInt64? = nil) throws(HNSWGraphError) -> Manifest {
        let manager = FileManager.default
        do {
            try manager.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw HNSWGraphError(.io, "cannot create \(directory): \(error.localizedDescription)")
        }
        let previous = manifest(space)
        let file = "\(space.fileName)-\(UUID().uuidString.lowercased()).graph"
        let path = (directory as NSString).appendingPathComponent(file)
        let written: (bytes: UInt64, crc: UInt32)
        do {
            written = try graph.save(to: path)
        } catch {
            try? manager.removeItem(atPath: path)
            throw error
        }
        let manifest = Manifest(format: Self.format, space: space.fileName, dimensions: graph.dimensions, model: model,
                                catalogVersion: catalogVersion, count: graph.count, file: file, bytes: written.bytes,
                                crc32: written.crc, linksPerNode: HNSWGraph.linksPerNode, efConstruction: HNSWGraph.efConstruction,
                                vectors: vectors)
        let temporary = manifestPath(space) + ".partial-\(getpid())"
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
            try Self.writeDurably(try encoder.encode(manifest), to: temporary)
            guard rename(temporary, manifestPath(space)) == 0 else {
                throw HNSWGraphError(.io, "cannot replace \(manifestPath(space)): \(String(cString: strerror(errno)))")
            }
            Self.syncDirectory(directory)
        } catch let error as HNSWGraphError {
            try? manager.removeItem(atPath: temporary)
            try? manager.removeItem(atPath: path)
            throw error
        } catch {
            try? manager.removeItem(atPath: temporary)
            try? manager.removeItem(atPath: path)
            throw HNSWGraphError(.io, "cannot write \(temporary): \(error.localizedDescription)")
        }
        if let previous, previous.file != file { try? manager.removeItem(atPath: (directory as NSString).appendingPathComponent(previous.file)) }
        sweep(space, keeping: file)
        return manifest
    }

    /// Deletes a space's graph files no manifest names that are older than an
    /// hour (another process may be between writing its graph and its manifest).
    func sweep(_ space: VectorSpace, keeping file: String) {
        let manager = FileManager.default
        guard let names = try? manager.contentsOfDirectory(atPath: directory) else { return }
        let cutoff = Date().addingTimeInterval(-3600)
        for name in names where name != file
            && (name.hasPrefix(space.fileName + "-") && name.hasSuffix(".graph") || name.hasPrefix(space.fileName + ".json.partial-")) {
            let path = (directory as NSString).appendingPathComponent(name)
            if let modified = (try? manager.attributesOfItem(atPath: path))?[.modificationDate] as? Date, modified < cutoff {
                try? manager.removeItem(atPath: path)
            }
        }
    }

    /// Deletes every saved graph (`vsearch catalog hnsw --rebuild` starts clean).
    public func removeAll() {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Bytes of a space's saved graph file, when there is one.
    public func fileBytes(_ space: VectorSpace) -> UInt64? { manifest(space)?.bytes }

    static func writeDurably(_ data: Data, to path: String) throws {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw HNSWGraphError(.io, "cannot create \(path): \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }
        let ok = data.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 { if errno == EINTR { continue } else { return false } }
                offset += written
            }
            return fsync(descriptor) == 0
        }
        guard ok else { throw HNSWGraphError(.io, "cannot write \(path): \(String(cString: strerror(errno)))") }
    }

    static func syncDirectory(_ path: String) {
        let descriptor = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }
}

extension VectorSpace {
    /// The space's name in file names and manifests.
    public var fileName: String {
        switch self {
        case .color: "color"
        case .learned: "learned"
        }
    }
}
