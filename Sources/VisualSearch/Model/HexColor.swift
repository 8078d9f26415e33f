/// A colour as the ViSearch API writes it: six lower-case hex digits
/// (`ff00ff`). Parsing accepts `#ff00ff`, `ff00ff`, `#f0f` and `f0f`, on the
/// command line, in the client and in the server alike.
///
/// ```swift
/// try HexColor(parsing: "#F0F").hex   // "ff00ff"
/// ```
public struct HexColor: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Six lower-case hex digits.
    public let hex: String

    /// Parses `#rrggbb`, `rrggbb`, `#rgb` or `rgb`.
    /// - Throws: ``VisualSearchError/invalidParameter(name:reason:)`` naming `color`.
    public init(parsing text: String) throws(VisualSearchError) {
        let digits = text.hasPrefix("#") ? String(text.dropFirst()) : text
        guard digits.count == 6 || digits.count == 3, digits.allSatisfy(\.isHexDigit) else {
            throw .invalidParameter(name: "color", reason: "\"\(text)\" is not a hex colour such as ff00ff, #ff00ff or #f0f")
        }
        let lower = digits.lowercased()
        hex = lower.count == 6 ? lower : String(lower.flatMap { [$0, $0] })
    }

    /// The colour with these components.
    public init(red: UInt8, green: UInt8, blue: UInt8) {
        hex = [red, green, blue].map { $0 < 16 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
    }

    /// Red, green and blue, 0...255.
    public var components: (red: UInt8, green: UInt8, blue: UInt8) {
        let value = UInt32(hex, radix: 16) ?? 0
        return (UInt8(value >> 16 & 0xff), UInt8(value >> 8 & 0xff), UInt8(value & 0xff))
    }

    /// `#rrggbb`.
    public var description: String { "#" + hex }
}
