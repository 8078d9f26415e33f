import Foundation

/// Where the learned model and ONNX Runtime are installed, and how they are
/// found: `scripts/install-model.sh` (or `vsearch model install`) puts them in
/// a project-local `.build-tools/` — `models/<name>/model.json` and
/// `onnxruntime/lib/libonnxruntime.so.1`. Nothing is fetched at query time.
///
/// Looked up, first found wins:
/// 1. the paths given (`--model-dir`; `VSEARCH_MODEL_DIR`, `VSEARCH_ONNXRUNTIME`): a model folder (holding
///    `model.json`) or a folder `install-model.sh --dir` filled (holding `models/<name>/model.json`), the same
///    folder either way;
/// 2. `.build-tools/` in the current folder or any folder above it;
/// 3. `.build-tools/` in a folder above the running executable (a clone's `.build/release/vsearch`, however it
///    was started: through `PATH` or a link, the executable is the file the process runs);
/// 4. `~/.cache/vsearch/` (where `vsearch model install` puts them outside a clone).
public struct ModelInstallation: Sendable, Hashable {
    /// The model folder (holding `model.json`).
    public var modelDirectory: String
    /// ONNX Runtime's shared library.
    public var runtimeLibrary: String

    /// The default model's folder name.
    public static let defaultModel = "efficientnet-lite0"
    /// The library's file name (its SONAME).
    public static let runtimeFileName = "libonnxruntime.so.1"

    public init(modelDirectory: String, runtimeLibrary: String) {
        self.modelDirectory = modelDirectory
        self.runtimeLibrary = runtimeLibrary
    }

    /// The manifest's path.
    public var manifestPath: String { (modelDirectory as NSString).appendingPathComponent("model.json") }

    /// The `.build-tools`-like roots searched, in order.
    public static func searchRoots(environment: [String: String] = ProcessInfo.processInfo.environment,
                                   currentDirectory: String = FileManager.default.currentDirectoryPath,
                                   executable: String? = ModelInstallation.runningExecutable) -> [String] {
        var roots: [String] = []
        func ancestors(of start: String) -> [String] {
            var result: [String] = []
            var folder = (start as NSString).standardizingPath
            while true {
                result.append((folder as NSString).appendingPathComponent(".build-tools"))
                let parent = (folder as NSString).deletingLastPathComponent
                if parent == folder || parent.isEmpty { break }
                folder = parent
            }
            return result
        }
        roots += ancestors(of: currentDirectory)
        if let executable, executable.contains("/") {
            let full = executable.hasPrefix("/") ? executable : (currentDirectory as NSString).appendingPathComponent(executable)
            let resolved = (full as NSString).resolvingSymlinksInPath
            roots += ancestors(of: (resolved as NSString).deletingLastPathComponent)
        }
        if let home = environment["HOME"], !home.isEmpty {
            roots.append((home as NSString).appendingPathComponent(".cache/vsearch"))
        }
        var seen = Set<String>()
        return roots.filter { seen.insert($0).inserted }
    }

    /// The file this process runs (`/proc/self/exe`), so a vsearch started
    /// through `PATH` or a symbolic link finds the clone it was built in; the
    /// first argument where that cannot be read.
    public static var runningExecutable: String? {
        if let path = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"), path.hasPrefix("/") { return path }
        return CommandLine.arguments.first
    }

    /// The model folders looked in, in order: the one given (as a model
    /// folder, then as an install folder holding `models/<name>/`), else one per search root.
    public static func modelCandidates(modelDirectory given: String? = nil,
                                       environment: [String: String] = ProcessInfo.processInfo.environment,
                                       currentDirectory: String = FileManager.default.currentDirectoryPath,
                                       executable: String? = ModelInstallation.runningExecutable) -> [String] {
        if let given = given ?? environment["VSEARCH_MODEL_DIR"].flatMap({ $0.isEmpty ? nil : $0 }) {
            let folder = given.hasPrefix("/") ? given : (currentDirectory as NSString).appendingPathComponent(given)
            return [folder, (folder as NSString).appendingPathComponent("models/\(defaultModel)")].map { ($0 as NSString).standardizingPath }
        }
        return searchRoots(environment: environment, currentDirectory: currentDirectory, executable: executable)
            .map { ($0 as NSString).appendingPathComponent("models/\(defaultModel)") }
    }

    /// Finds the installation.
    /// - Parameter modelDirectory: a folder given by the user: the model's own (holding `model.json`),
    ///   or the folder it was installed into (`install-model.sh --dir`).
    /// - Throws: ``EmbeddingError/modelMissing(looked:)`` listing every place looked in.
    public static func locate(modelDirectory given: String? = nil,
                              environment: [String: String] = ProcessInfo.processInfo.environment,
                              currentDirectory: String = FileManager.default.currentDirectoryPath,
                              executable: String? = ModelInstallation.runningExecutable) throws(EmbeddingError) -> ModelInstallation {
        let files = FileManager.default
        let roots = searchRoots(environment: environment, currentDirectory: currentDirectory, executable: executable)
        let modelCandidates = modelCandidates(modelDirectory: given, environment: environment, currentDirectory: currentDirectory,
                                              executable: executable)
        guard let model = modelCandidates.first(where: { files.fileExists(atPath: ($0 as NSString).appendingPathComponent("model.json")) }) else {
            throw .modelMissing(looked: modelCandidates.map { ($0 as NSString).appendingPathComponent("model.json") })
        }
        let libraryCandidates: [String] = if let library = environment["VSEARCH_ONNXRUNTIME"], !library.isEmpty {
            [library]
        } else {
            // Beside the model's own .build-tools first, then the other roots.
            [((model as NSString).deletingLastPathComponent as NSString).deletingLastPathComponent + "/onnxruntime/lib/\(runtimeFileName)"]
                + roots.map { ($0 as NSString).appendingPathComponent("onnxruntime/lib/\(runtimeFileName)") }
        }
        guard let library = libraryCandidates.first(where: files.fileExists(atPath:)) else {
            throw .runtimeUnavailable(path: libraryCandidates[0], reason: "the file does not exist (looked in \(libraryCandidates.joined(separator: ", ")))")
        }
        return ModelInstallation(modelDirectory: model, runtimeLibrary: library)
    }
}
