import Foundation

/// The Rezolve thumbnail rule as a pure function: which thumbnail sizes a
/// source of a given size gets.
///
/// For a source whose maximum dimension is M, each size N (400, 800, 1200,
/// 1600 by default) with M > N yields one thumbnail whose maximum dimension
/// is N, the other side rounded half up from the exact ratio (at least 1 px).
/// M ≤ 400 yields none. The original is always kept alongside.
///
/// The rule document's own example (`Image_thumb_400x550 … 1600x2201`) fits
/// the *width* to N even though the text says "maximum dimension";
/// ``Fit/width`` reproduces it: each N with width > N gives width N.
///
/// ```swift
/// ThumbnailRule.rezolve.thumbnails(for: PixelSize(width: 2400, height: 3301))
/// // [291×400, 582×800, 872×1200, 1163×1600]
/// ThumbnailRule(fit: .width).thumbnails(for: PixelSize(width: 2400, height: 3301))
/// // [400×550, 800×1100, 1200×1651, 1600×2201]
/// ```
public struct ThumbnailRule: Sendable, Hashable, Codable {
    /// Which side a size N constrains.
    public enum Fit: String, Sendable, Hashable, Codable, CaseIterable {
        /// The longer side becomes N (the rule as written). The default.
        case max
        /// The width becomes N (the rule document's example).
        case width
    }

    /// The sizes, ascending and unique.
    public let sizes: [Int]
    /// Which side the sizes constrain. ``Fit/max`` by default.
    public let fit: Fit

    /// The documented default sizes: 400, 800, 1200, 1600.
    public static let defaultSizes = [400, 800, 1200, 1600]
    /// The rule as the Rezolve guide writes it.
    public static let rezolve = ThumbnailRule()

    /// Creates a rule. Sizes are sorted and deduplicated; sizes below 1 are dropped.
    public init(sizes: [Int] = ThumbnailRule.defaultSizes, fit: Fit = .max) {
        self.sizes = Array(Set(sizes.filter { $0 >= 1 })).sorted()
        self.fit = fit
    }

    /// The thumbnail sizes for a source of `size` (as displayed), smallest first.
    public func thumbnails(for size: PixelSize) -> [PixelSize] {
        guard size.width > 0, size.height > 0 else { return [] }
        switch fit {
        case .max:
            return sizes.filter { size.maxDimension > $0 }.map { size.fitting(inside: $0) }
        case .width:
            return sizes.filter { size.width > $0 }.map {
                PixelSize(width: $0, height: PixelSize.scaled(size.height, by: $0, over: size.width))
            }
        }
    }

    /// `NAME_thumb_{w}x{h}.{ext}`, the naming of the Rezolve portal.
    public static func fileName(stem: String, size: PixelSize, extension ext: String) -> String {
        "\(stem)_thumb_\(size.width)x\(size.height).\(ext)"
    }

    /// Whether a file name looks like a thumbnail this rule's naming produced
    /// (`…_thumb_{w}x{h}.ext`), so a batch job never treats its own outputs as sources.
    public static func isThumbnailName(_ name: String) -> Bool {
        guard let range = name.range(of: "_thumb_", options: .backwards) else { return false }
        let rest = name[range.upperBound...]
        let core = rest.split(separator: ".", maxSplits: 1).first ?? ""
        let parts = core.split(separator: "x")
        return parts.count == 2 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(\.isNumber) }
    }
}
