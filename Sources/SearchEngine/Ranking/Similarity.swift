import Foundation

/// The score the engine reports: `1 − ‖a − b‖ / 2` for unit vectors, in
/// [0, 1], higher is more similar. For unit vectors ‖a − b‖² = 2 − 2·a·b, so
/// the score is a monotone function of the dot product the index computes.
public enum Similarity {
    /// The score of two unit vectors whose dot product is `dot`.
    @inline(__always)
    public static func score(dot: Float) -> Float {
        max(0, min(1, 1 - max(0, 2 - 2 * dot).squareRoot() / 2))
    }
}
