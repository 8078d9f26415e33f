import Foundation

/// The thumbnail batch job: walks a folder (or takes one file), makes the
/// Rezolve thumbnail set of every image, mirrors the input tree into the
/// output folder, and writes a JSON-lines manifest.
///
/// How it works, per source: read the file → sniff and read the header →
/// plan the sizes (``ThumbnailRule``) → decode **once**, at the smallest
/// JPEG DCT scale that covers the largest thumbnail → resample the largest
/// → make each smaller size from the previous one (cascade) → encode →
/// write every output to a temporary file → rename them all into place.
///
/// Guarantees:
/// - **Atomic**: an output either is complete or does not exist; a failed
///   source leaves no file behind.
/// - **Resumable**: a source whose planned outputs all exist and are at least
///   as new as the source is skipped (``Configuration/skipsUpToDate``).
/// - **Bounded memory**: ``Configuration/jobs`` worker threads, each holding
///   one image at a time, and together no more than ``Configuration/memoryBudget``
///   (a large source waits for another to finish).
/// - **Never stops on a bad file**: it is reported with its reason and skipped.
///
/// ```swift
/// let batch = ThumbnailBatch(input: "photos", output: "thumbs")
/// let summary = try batch.run { event in print(event) }
/// print(summary.failed)
/// ```
public struct ThumbnailBatch: Sendable {
    /// Output format choice (``ThumbnailEncoders`` says how each is resolved).
    public enum OutputFormat: String, Sendable, Hashable, Codable, CaseIterable {
        /// The source's own format where vsearch writes it; GIF → PNG, HEIC → JPEG. The default.
        case same
        /// Always JPEG (transparent areas are composited over white).
        case jpeg
        /// Always PNG.
        case png
        /// Always WebP (lossy, alpha kept).
        case webp
        /// Always AVIF.
        case avif
        /// WebP chosen per source: lossless for graphics, lossy for photos.
        case auto
    }

    /// What the job does. Every property has a documented default.
    public struct Configuration: Sendable, Hashable {
        /// The size rule. ``ThumbnailRule/rezolve`` by default.
        public var rule: ThumbnailRule = .rezolve
        /// Output format. ``OutputFormat/same`` by default.
        public var format: OutputFormat = .same
        /// The encoders and their settings, per output format.
        public var encoders = ThumbnailEncoders()
        /// The JPEG encoder for JPEG outputs. Quality 0.85 by default.
        public var jpeg: ImageEncoders.JPEG {
            get { encoders.jpeg }
            set { encoders.jpeg = newValue }
        }
        /// The PNG encoder for PNG outputs. ``ImageEncoders/PNG/init(compressionLevel:filter:)`` defaults.
        public var png: ImageEncoders.PNG {
            get { encoders.png }
            set { encoders.png = newValue }
        }
        /// Colour: sRGB pixels by default (``ColorHandling/convertToSRGB``); with
        /// ``ColorHandling/keepSourceProfile`` an RGB source keeps its pixels and
        /// its profile is embedded in every thumbnail (exact colours for
        /// colour-managed viewers, fewer conversions; but viewers that ignore
        /// profiles show them wrong, and the profile adds bytes to each file).
        public var colorHandling: ColorHandling = .convertToSRGB
        /// What metadata thumbnails keep: none by default (no EXIF, GPS, XMP or
        /// maker notes); ``MetadataPolicy/copyright`` keeps Artist and Copyright.
        public var metadata: MetadataPolicy = .none
        /// The resampling filter. ``ResamplingFilter/lanczos3`` by default.
        public var filter: ResamplingFilter = .lanczos3
        /// Worker threads. The number of active processors by default.
        public var jobs: Int = ProcessInfo.processInfo.activeProcessorCount
        /// Bytes the workers' sources may hold at once (``MemoryBudget``): the
        /// file, the decoder's buffers (``ShrinkOnLoad/decodeBytes(of:header:minimumSize:)``)
        /// and the first resample's. A source that would not fit waits for
        /// another to finish; one alone always runs. By default 120 MB per
        /// worker, which keeps `--jobs 2` on 20-MP sources under 300 MB
        /// (bench/RESULTS.md, issue 40): two 20-MP sources at once otherwise
        /// peak above it, and smaller ones are never held back.
        public var memoryBudget: Int? = nil
        /// The budget in force: ``memoryBudget``, or 120 MB per worker.
        public var effectiveMemoryBudget: Int { memoryBudget ?? max(1, jobs) * ThumbnailBatch.memoryPerWorker }
        /// Skip sources whose outputs are all present and newer. `true` by default.
        public var skipsUpToDate = true
        /// Also copy each original into the output tree, so the output is
        /// self-contained like the Rezolve portal's. `false` by default.
        public var copiesOriginals = false
        /// Decoding limits. ``ImageLimits/default`` by default.
        public var limits: ImageLimits = .default
        /// How decoding treats recoverable problems. ``FailurePolicy/strict`` by default.
        public var failurePolicy: FailurePolicy = .strict
        /// The manifest's file name inside the output folder: `manifest.jsonl`
        /// by default, `manifest.shard-I-of-N.jsonl` for a part of a sharded job
        /// (``mergeManifests(in:)`` joins them).
        public var manifestName: String {
            get { manifestNameOverride ?? (shard.count > 1 ? ThumbnailBatch.shardManifestName(shard) : ThumbnailBatch.manifestName) }
            set { manifestNameOverride = newValue }
        }
        var manifestNameOverride: String?
        /// The part of the job this run does (``Shard``). The whole job by default.
        public var shard: Shard = .whole

        /// Creates the default configuration.
        public init() {}
    }

    /// The default memory budget's share per worker thread (120 MB).
    public static let memoryPerWorker = 120_000_000

    /// One output file.
    public struct Output: Sendable, Hashable, Codable {
        /// Path relative to the output folder.
        public var path: String
        /// Pixel size.
        public var width: Int
        /// Pixel size.
        public var height: Int
        /// File size in bytes.
        public var bytes: Int
    }

    /// What happened to one source.
    public struct SourceResult: Sendable, Hashable, Codable {
        /// The outcome.
        public enum Status: String, Sendable, Hashable, Codable {
            /// Thumbnails were written (possibly none, for a small source).
            case created
            /// Skipped: all outputs present and newer than the source.
            case upToDate = "up_to_date"
            /// Could not be processed; see ``SourceResult/error``.
            case failed
        }

        /// Source path relative to the input folder.
        public var source: String
        /// The outcome.
        public var status: Status
        /// The source size as displayed, when it could be read.
        public var width: Int?
        /// The source size as displayed, when it could be read.
        public var height: Int?
        /// The thumbnails, smallest first.
        public var thumbnails: [Output]
        /// The copied original, when ``Configuration/copiesOriginals`` is set.
        public var original: String?
        /// Why it failed.
        public var error: String?
    }

    /// Progress, delivered on the worker thread that made it (serialised: one at a time).
    public enum Event: Sendable {
        /// The walk found `total` sources.
        case started(total: Int)
        /// One source is done; `completed` of `total`.
        case finished(SourceResult, completed: Int, total: Int)
    }

    /// The totals of a run.
    public struct Summary: Sendable, Hashable, Codable {
        /// Sources found.
        public var sources: Int
        /// Sources processed now.
        public var created: Int
        /// Sources skipped as up to date.
        public var upToDate: Int
        /// Sources that failed.
        public var failed: Int
        /// Thumbnails written now.
        public var thumbnailsWritten: Int
        /// Bytes written now.
        public var bytesWritten: Int
        /// Wall-clock seconds.
        public var seconds: Double
        /// The manifest path.
        public var manifest: String
        /// Every source's result, in walk order.
        public var results: [SourceResult]

        enum CodingKeys: String, CodingKey {
            case sources, created, upToDate = "up_to_date", failed, thumbnailsWritten = "thumbnails_written"
            case bytesWritten = "bytes_written", seconds, manifest, results
        }
    }

    /// The input folder or file.
    public let input: String
    /// The output folder.
    public let output: String
    /// The configuration.
    public let configuration: Configuration

    /// Creates a job.
    public init(input: String, output: String, configuration: Configuration = Configuration()) {
        self.input = input
        self.output = output
        self.configuration = configuration
    }

    /// Runs the job on ``Configuration/jobs`` worker threads and blocks until
    /// it is done. Call it from a thread that may block (not from a Swift
    /// concurrency task that must stay responsive).
    /// - Parameters:
    ///   - isCancelled: polled before each source; once it returns `true` no
    ///     new source is started, the ones in progress finish (so nothing is
    ///     left half-written), and the summary lists only what was done.
    ///   - onEvent: progress callback, called one event at a time.
    /// - Throws: ``ImageOpsError`` only for problems with the whole job (the
    ///   input cannot be read, the output cannot be created, the manifest
    ///   cannot be written); bad sources are reported in the summary instead.
    public func run(isCancelled: @escaping @Sendable () -> Bool = { false },
                    onEvent: @escaping @Sendable (Event) -> Void = { _ in }) throws(ImageOpsError) -> Summary {
        let start = Date()
        let sources = try ImageFiles.find(in: input, excluding: output).filter(configuration.shard.contains)
        try FileIO.makeDirectory(output)
        Self.removeStaleTemporaries(under: output)
        let total = sources.count
        onEvent(.started(total: total))

        let budget = MemoryBudget(bytes: configuration.effectiveMemoryBudget)
        let results = WorkerPool(workers: configuration.jobs).map(
            count: total, isCancelled: isCancelled,
            onResult: { _, result, completed in onEvent(.finished(result, completed: completed, total: total)) },
            { index in process(sources[index], budget: budget) }
        ).compactMap { $0 }
        let manifestPath = (output as NSString).appendingPathComponent(configuration.manifestName)
        try writeManifest(results, to: manifestPath)
        let created = results.filter { $0.status == .created }
        return Summary(sources: total,
                       created: created.count,
                       upToDate: results.filter { $0.status == .upToDate }.count,
                       failed: results.filter { $0.status == .failed }.count,
                       thumbnailsWritten: created.reduce(0) { $0 + $1.thumbnails.count },
                       bytesWritten: created.reduce(0) { $0 + $1.thumbnails.reduce(0) { $0 + $1.bytes } },
                       seconds: Date().timeIntervalSince(start),
                       manifest: manifestPath,
                       results: results)
    }

    /// Processes one source; never throws, a failure is a result.
    func process(_ relativePath: String, budget: MemoryBudget) -> SourceResult {
        var result = SourceResult(source: relativePath, status: .failed, thumbnails: [])
        do {
            try process(relativePath, budget: budget, into: &result)
        } catch {
            result.status = .failed
            result.thumbnails = []
            result.original = nil
            result.error = error.description
        }
        return result
    }

    private func process(_ relativePath: String, budget: MemoryBudget, into result: inout SourceResult) throws(ImageOpsError) {
        let sourcePath = ImageFiles.isDirectory(input) ? (input as NSString).appendingPathComponent(relativePath) : input
        var bytes = try FileIO.read(sourcePath, maxBytes: configuration.limits.maxInputBytes)
        let header = try ImageDecoder.readHeader(bytes, source: sourcePath)
        result.width = header.size.width
        result.height = header.size.height
        let sizes = configuration.rule.thumbnails(for: header.size)

        let outputFormat = configuration.encoders.fileFormat(for: configuration.format, source: header.format)
        let relativeDirectory = (relativePath as NSString).deletingLastPathComponent
        let fileName = (relativePath as NSString).lastPathComponent
        let stem = (fileName as NSString).deletingPathExtension
        let outputExtension = outputFormat.preferredExtension  // one spelling: .JPG, .Jpeg, .jpeg → .jpg
        let planned = sizes.map { size in
            (size, (relativeDirectory as NSString).appendingPathComponent(
                ThumbnailRule.fileName(stem: stem, size: size, extension: outputExtension)))
        }
        let originalCopy = configuration.copiesOriginals ? relativePath : nil
        let directory = (output as NSString).appendingPathComponent(relativeDirectory)
        func absolute(_ relative: String) -> String { (output as NSString).appendingPathComponent(relative) }

        if configuration.skipsUpToDate, !planned.isEmpty || originalCopy != nil,
           isUpToDate(source: sourcePath, outputs: planned.map { absolute($0.1) } + (originalCopy.map { [absolute($0)] } ?? [])) {
            result.status = .upToDate
            result.original = originalCopy
            result.thumbnails = planned.map { size, path in
                Output(path: path, width: size.width, height: size.height, bytes: Self.fileSize(absolute(path)))
            }
            return
        }

        // Decode even when no thumbnail is planned: a source that is listed as
        // kept must be readable. Small sources decode fast.
        var options = DecodingOptions(minimumSize: sizes.last ?? PixelSize(width: 1, height: 1), limits: configuration.limits)
        options.failurePolicy = configuration.failurePolicy
        options.colorHandling = configuration.colorHandling
        options.defersColorConversion = true  // converted once, after the first (largest) resample
        // The file, the decode and the first resample's output (at most a quarter of the decode on a reduction).
        let decodeBytes = ShrinkOnLoad.decodeBytes(of: bytes, header: header, minimumSize: options.minimumSize)
        let reservation = budget.reserve(bytes.count + decodeBytes + decodeBytes / 4)
        defer { budget.release(reservation) }
        var decoded = try ImageDecoder.decode(bytes, source: sourcePath, options: options)
        // The encoded source is needed again only when it is kept as is: otherwise it is freed
        // before the resampling, whose buffers peak beside the decoded pixels (a 20-MP PNG's
        // file is ~18 MB of the job's peak; bench/RESULTS.md, issue 40).
        let original = originalCopy == nil ? [] : bytes
        bytes = []
        let metadata = OutputMetadata(colorProfile: decoded.colorProfile,
                                      rights: configuration.metadata == .copyright ? decoded.metadata : .none)
        var encoded: [(path: String, size: PixelSize, bytes: [UInt8])] = []
        if !sizes.isEmpty {
            let encoder = configuration.encoders.encoder(for: configuration.format, source: header.format, pixels: decoded.pixels)
            // Only `current` references the decoded pixels, so each resample can
            // work in place on them (see Resampler.resample).
            var current = PixelBuffer(width: 1, height: 1, hasAlpha: false, fill: (0, 0, 0, 255))
            swap(&current, &decoded.pixels)
            var pending = decoded.pendingConversion
            for (size, path) in planned.reversed() {
                current = Resampler.resample(consume current, to: size, filter: configuration.filter)
                if pending != nil {
                    current = current.convertedToSRGB(from: pending)
                    pending = nil
                }
                encoded.append((path, size, try encoder.encode(current, metadata: metadata)))
            }
            encoded.reverse()
        }

        try FileIO.makeDirectory(directory)
        var temporaries: [(temporary: String, final: String)] = []
        do {
            for item in encoded {
                let final = absolute(item.path)
                let temporary = FileIO.temporaryPath(for: final)
                temporaries.append((temporary, final))
                try FileIO.write(item.bytes, to: temporary)
            }
            if let originalCopy {
                let final = absolute(originalCopy)
                let temporary = FileIO.temporaryPath(for: final)
                temporaries.append((temporary, final))
                try FileIO.write(original, to: temporary)
            }
            for (temporary, final) in temporaries { try FileIO.commit(temporary, to: final) }
        } catch {
            for (temporary, _) in temporaries { unlink(temporary) }
            throw error
        }
        result.status = .created
        result.original = originalCopy
        result.thumbnails = encoded.map { Output(path: $0.path, width: $0.size.width, height: $0.size.height, bytes: $0.bytes.count) }
    }

    /// Whether every output exists and is at least as new as the source.
    func isUpToDate(source: String, outputs: [String]) -> Bool {
        guard let sourceTime = FileIO.modificationTime(source) else { return false }
        for output in outputs {
            guard let time = FileIO.modificationTime(output) else { return false }
            if (time.tv_sec, time.tv_nsec) < (sourceTime.tv_sec, sourceTime.tv_nsec) { return false }
        }
        return true
    }

    /// One manifest line per readable source, in the Rezolve JSON shape
    /// (`image`, `image_thumbs`) plus sizes.
    struct ManifestLine: Codable {
        var image: String
        var image_thumbs: [String]
        var width: Int?
        var height: Int?
        var thumbs: [Output]
    }

    func writeManifest(_ results: [SourceResult], to path: String) throws(ImageOpsError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        var text = Data()
        for result in results where result.status != .failed {
            let line = ManifestLine(image: result.original ?? result.source,
                                    image_thumbs: result.thumbnails.map(\.path),
                                    width: result.width, height: result.height, thumbs: result.thumbnails)
            guard let data = try? encoder.encode(line) else { continue }
            text.append(data)
            text.append(0x0A)
        }
        try FileIO.writeAtomically(text, to: path)
    }

    /// Deletes temporary files (`.NAME.tmp-PID-RANDOM`) that a killed run left
    /// in the output tree, unless the process that made them is still alive.
    static func removeStaleTemporaries(under output: String) {
        guard let enumerator = FileManager.default.enumerator(atPath: output) else { return }
        while let relative = enumerator.nextObject() as? String {
            let name = (relative as NSString).lastPathComponent
            guard name.hasPrefix("."), let marker = name.range(of: ".tmp-", options: .backwards) else { continue }
            let parts = name[marker.upperBound...].split(separator: "-")
            guard parts.count == 2, let pid = Int32(parts[0]), UInt32(parts[1]) != nil else { continue }
            if pid != getpid() && kill(pid, 0) == 0 { continue }  // another live run is writing it
            unlink((output as NSString).appendingPathComponent(relative))
        }
    }

    static func fileSize(_ path: String) -> Int {
        var info = stat()
        return stat(path, &info) == 0 ? Int(info.st_size) : 0
    }
}
