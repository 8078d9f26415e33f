import Foundation
import SearchEngine

/// The learned model the tests use: the one `scripts/install-model.sh`
/// installed into the repository's `.build-tools/` (scripts/test.sh runs it).
/// Tests of learned similarity run when it is installed, and always in CI,
/// where a missing model fails them instead of skipping.
public enum LearnedModel {
    /// The repository's installation, when its model and runtime are there.
    public static var installation: ModelInstallation? {
        try? ModelInstallation.locate(environment: [:], currentDirectory: Repository.root, executable: nil)
    }

    /// Whether learned-model tests run: installed, or in CI.
    public static var isRequired: Bool { installation != nil || ProcessInfo.processInfo.environment["CI"] == "true" }

    /// The embedder, loaded (checksum verified, runtime loaded), shared by a test process.
    public static func embedder() throws -> LearnedEmbedder {
        try Shared.embedder.get()
    }

    /// A copy of the installed model folder (manifest, model, licence) in a new
    /// temporary folder, to damage or edit; the runtime stays where it is.
    public static func copy() throws -> ModelInstallation {
        guard let installation else { throw Missing() }
        let folder = Repository.temporaryDirectory("model") + "/efficientnet-lite0"
        try FileManager.default.copyItem(atPath: installation.modelDirectory, toPath: folder)
        return ModelInstallation(modelDirectory: folder, runtimeLibrary: installation.runtimeLibrary)
    }

    enum Shared {
        static let embedder: Result<LearnedEmbedder, any Error> = Result {
            guard let installation else { throw Missing() }
            let embedder = try LearnedEmbedder(installation: installation)
            try embedder.load()
            return embedder
        }
    }

    /// The model is not installed.
    public struct Missing: Error, CustomStringConvertible {
        public var description: String {
            "the learned model is not installed: run scripts/install-model.sh (scripts/test.sh does), then the tests again"
        }
    }
}
