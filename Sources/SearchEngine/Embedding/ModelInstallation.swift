import Foundation

/// Where the learned model and ONNX Runtime are installed, and how they are
/// found: `scripts/install-model.sh` (or `vsearch model install`) puts them in
/// a project-local `.build-tools/` — `models/<name>/model.json` and
/// `onnxruntime/lib/libonnxruntime.so.1`. Nothing is fetched at query time.
///
/// Looked up, first found wins:
/// 1. the paths given (`--model-dir`; `VSEARCH_MODEL_DIR`, `VSEARCH_ONNXRUNTIME`);
/// 2. `.build-tools/` in the current folder or any folder above it;
/// 3. `.build-tools/` in a folder above the running executable (a clone's `.build/release/vsearch`);
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
                                   executable: String? = CommandLine.arguments.first) -> [String] {
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

    /// Finds the installation.
    /// - Parameter modelDirectory: a folder given by the user (it must hold `model.json`).
    /// - Throws: ``EmbeddingError/modelMissing(looked:)`` listing every place looked in.
    public static func locate(modelDirectory given: String? = nil,
                              environment: [String: String] = ProcessInfo.processInfo.environment,
                              currentDirectory: String = FileManager.default.currentDirectoryPath,
                              executable: String? = CommandLine.arguments.first) throws(EmbeddingError) -> ModelInstallation {
        let files = FileManager.default
        let roots = searchRoots(environment: environment, currentDirectory: currentDirectory, executable: executable)
        let modelCandidates: [String] = if let given = given ?? environment["VSEARCH_MODEL_DIR"].flatMap({ $0.isEmpty ? nil : $0 }) {
            [given]
        } else {
            roots.map { ($0 as NSString).appendingPathComponent("models/\(defaultModel)") }
        }
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
