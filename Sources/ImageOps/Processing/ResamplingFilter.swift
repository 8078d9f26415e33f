import Foundation

/// A reconstruction filter for resampling.
///
/// The resampler widens the filter's support by the reduction factor, so a
/// strong reduction averages every source pixel it covers (correct area
/// coverage) instead of skipping pixels as nearest-neighbour or plain
/// bilinear sampling would.
public enum ResamplingFilter: String, Sendable, Hashable, Codable, CaseIterable {
    /// Lanczos with three lobes: the sharpest, the default. Support 3.
    case lanczos3
    /// Catmull-Rom cubic (a = -0.5): nearly as sharp, cheaper. Support 2.
    case catmullRom
    /// Triangle (bilinear with area coverage). Support 1.
    case triangle
    /// Box (area average). Support 0.5.
    case box

    /// Half-width of the filter at scale 1, in source pixels.
    public var support: Double {
        switch self {
        case .lanczos3: 3
        case .catmullRom: 2
        case .triangle: 1
        case .box: 0.5
        }
    }

    /// The filter's weight at distance `x` (in output-pixel units).
    public func weight(_ x: Double) -> Double {
        let x = abs(x)
        switch self {
        case .lanczos3:
            if x < 1e-9 { return 1 }
            if x >= 3 { return 0 }
            let pix = Double.pi * x
            return 3 * sin(pix) * sin(pix / 3) / (pix * pix)
        case .catmullRom:
            let a = -0.5
            if x < 1 { return ((a + 2) * x - (a + 3)) * x * x + 1 }
            if x < 2 { return (((x - 5) * x + 8) * x - 4) * a }
            return 0
        case .triangle:
            return x < 1 ? 1 - x : 0
        case .box:
            return x <= 0.5 ? 1 : 0
        }
    }
}
