import Foundation

/// The score the engine reports: `1 − ‖a − b‖ / 2` for unit vectors, in
/// [0, 1], higher is more similar. For unit vectors ‖a − b‖² = 2 − 2·a·b, so
/// the score is a monotone function of the dot product the index computes.
public enum Similarity {
    /// The score of two unit vectors whose dot product is `dot`. A squared
    /// distance below ``roundingFloor`` is rounding in the dot product (a
    /// vector with itself can sum to 1 − 1 ulp), which the square root would
    /// magnify to a score of 0.9998: it scores 1.
    @inline(__always)
    public static func score(dot: Float) -> Float {
        let squaredDistance = 2 - 2 * dot
        if squaredDistance <= roundingFloor { return 1 }
        return max(0, min(1, 1 - squaredDistance.squareRoot() / 2))
    }

    /// Squared distances at or below this are rounding error: about 16 float
    /// epsilons, well above what summing 112 products of unit vectors leaves.
    public static let roundingFloor: Float = 16 * .ulpOfOne
}
