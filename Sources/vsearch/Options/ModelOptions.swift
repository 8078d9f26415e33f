import ArgumentParser
import SearchEngine

/// `--model-dir`, on the commands that load the learned model: the query commands, index, insert, serve,
/// info, `catalog stats` and `model`. Commands that never embed an image (remove, insert-status, catalog
/// backup and hnsw, events) do not take it.
struct ModelOptions: ParsableArguments {
    @Option(name: .customLong("model-dir"), help: ArgumentHelp("The learned similarity model's folder (holding model.json). "
                                                               + "Default $VSEARCH_MODEL_DIR, else the one `vsearch model install` made.", valueName: "path"))
    var modelDirectory: String?

    /// The installed learned model, its manifest read (it loads on first use);
    /// nil when none is installed. A manifest that is there but wrong is an error, as is a --model-dir without a model.
    func learnedEmbedder() throws(EmbeddingError) -> LearnedEmbedder? {
        do {
            return try LearnedEmbedder(modelDirectory: modelDirectory)
        } catch {
            switch error {
            case .modelMissing, .runtimeUnavailable: if modelDirectory == nil { return nil }
            default: break
            }
            throw error
        }
    }
}
