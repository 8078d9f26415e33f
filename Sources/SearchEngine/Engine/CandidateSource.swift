import VisualSearch

/// Where the engine's candidates stage finds the images nearest a query —
/// given to ``VisualSearchEngine`` at `init` by whoever opened the catalog,
/// so the engine never asks what kind of store it reads.
public enum CandidateSource: Sendable {
    /// Every image scored in memory over the ``FeatureIndex`` the engine
    /// loads from its catalog (and reloads when the catalog's version moves):
    /// exact, and the right choice up to a few million images on one machine.
    case inMemory
    /// A store that runs the k-NN stage itself (PostgreSQL with pgvector):
    /// the engine holds no vectors, so a replica starts at once whatever the
    /// catalog's size. Colour search (`/colorsearch`) still loads the index.
    case store(any NearestNeighbourStore)

    /// The store running k-NN, when there is one.
    var neighbourStore: (any NearestNeighbourStore)? {
        if case .store(let store) = self { return store }
        return nil
    }
}
