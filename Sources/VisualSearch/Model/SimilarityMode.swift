/// Which similarity answers a query: what "alike" means.
///
/// - ``visual``: a learned image embedding (a network trained on ImageNet):
///   the same *kind* of thing — a cat finds cats, a trumpet brass — whatever
///   the colours;
/// - ``color``: the colour descriptor (``ColorFeatures`` in SearchEngine):
///   the same colours in about the same places;
/// - ``fused``: a weighted mean of the two scores.
///
/// A request names one with the extra query parameter `similarity` (the
/// hosted APIs have no such parameter and the SDKs never send it); without it
/// the engine's default answers: `visual` for a catalog holding learned
/// vectors, `color` for one without (which answers exactly as before learned
/// vectors existed). Every response of the offline engine says which one
/// answered (`similarity` in its JSON).
///
/// Scores keep one meaning in every mode: `1 − d/2` for the Euclidean
/// distance `d` of two unit vectors, in [0, 1] (fused: the weighted mean of
/// the two scores). A learned score and a colour score of the same pair are
/// not comparable numbers: learned scores of unrelated images sit near
/// 0.45–0.55, colour scores spread wider.
public enum SimilarityMode: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
    case visual
    case color
    case fused

    /// Parses a wire or command-line value (`colour` is accepted for `color`).
    /// - Throws: ``VisualSearchError/invalidParameter(name:reason:)`` naming `similarity`.
    public init(parsing text: String) throws(VisualSearchError) {
        let lowered = text.lowercased()
        if let mode = SimilarityMode(rawValue: lowered == "colour" ? "color" : lowered) {
            self = mode
            return
        }
        throw .invalidParameter(name: "similarity", reason: "\"\(CatalogText.visible(text.prefix(40)))\" is not one of "
                                + SimilarityMode.allCases.map(\.rawValue).joined(separator: ", "))
    }

    /// Whether answering needs learned vectors.
    public var usesLearnedVectors: Bool { self != .color }

    public var description: String { rawValue }
}
