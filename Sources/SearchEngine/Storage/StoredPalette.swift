import Foundation

extension DominantColors {
    /// A palette as a catalog stores it — JSON text, as `JSONEncoder` writes it — decoded
    /// exactly as `JSONDecoder` decodes that text read as a `String` (invalid UTF-8 replaced);
    /// nil where that throws.
    ///
    /// Loading a catalog decodes one palette per image, and `JSONDecoder` costs more per
    /// palette than reading the image's vectors: a sixth of loading 1M images with empty
    /// palettes, five sixths of loading 100k with up to eight colours each. This reads the
    /// stored shape — `{"entries":[{"color":{"l":…,"a":…,"b":…},"fraction":…},…]}`, keys
    /// in any order, any JSON whitespace — itself; anything else (escaped or unknown keys,
    /// a number `JSONDecoder` refuses, malformed text) goes to `JSONDecoder`, so the result
    /// never differs from its. Numbers are read as `JSONDecoder` reads them: the nearest
    /// `Float` (`strtof`'s), ±0 only for a zero written as one without an exponent.
    public init?(json: UnsafeRawBufferPointer) {
        var reader = PaletteJSONReader(bytes: json)
        if let palette = reader.palette() {
            self = palette
        } else if let palette = try? JSONDecoder().decode(DominantColors.self, from: Data(String(decoding: json, as: UTF8.self).utf8)) {
            self = palette
        } else {
            return nil
        }
    }
}

/// Reads the one JSON shape palettes are stored in (``DominantColors/init(json:)``);
/// every method returns nil (or false) for anything outside it.
private struct PaletteJSONReader {
    let bytes: UnsafeRawBufferPointer
    var at = 0

    init(bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    /// The whole text as a palette, with nothing but whitespace after it.
    mutating func palette() -> DominantColors? {
        var entries: [DominantColors.Entry]?
        let read = object { reader, key in
            guard Self.isKey(key, "entries"), entries == nil, reader.take(UInt8(ascii: "[")) else { return false }
            var list: [DominantColors.Entry] = []
            if !reader.take(UInt8(ascii: "]")) {
                repeat {
                    guard let entry = reader.entry() else { return false }
                    list.append(entry)
                } while reader.take(UInt8(ascii: ","))
                guard reader.take(UInt8(ascii: "]")) else { return false }
            }
            entries = list
            return true
        }
        skipSpace()
        guard read, at == bytes.count, let entries else { return nil }
        return DominantColors(entries: entries)
    }

    mutating func entry() -> DominantColors.Entry? {
        var color: LabColor?, fraction: Float?
        let read = object { reader, key in
            if Self.isKey(key, "color"), color == nil {
                color = reader.color()
                return color != nil
            }
            if Self.isKey(key, "fraction"), fraction == nil {
                fraction = reader.number()
                return fraction != nil
            }
            return false
        }
        guard read, let color, let fraction else { return nil }
        return DominantColors.Entry(color: color, fraction: fraction)
    }

    mutating func color() -> LabColor? {
        var l: Float?, a: Float?, b: Float?
        let read = object { reader, key in
            if Self.isKey(key, "l"), l == nil { l = reader.number(); return l != nil }
            if Self.isKey(key, "a"), a == nil { a = reader.number(); return a != nil }
            if Self.isKey(key, "b"), b == nil { b = reader.number(); return b != nil }
            return false
        }
        guard read, let l, let a, let b else { return nil }
        return LabColor(l: l, a: a, b: b)
    }

    /// An object, each member's value read by `member` given its key.
    mutating func object(_ member: (inout PaletteJSONReader, UnsafeRawBufferPointer) -> Bool) -> Bool {
        guard take(UInt8(ascii: "{")) else { return false }
        if take(UInt8(ascii: "}")) { return true }
        repeat {
            guard let key = key(), take(UInt8(ascii: ":")), member(&self, key) else { return false }
        } while take(UInt8(ascii: ","))
        return take(UInt8(ascii: "}"))
    }

    /// A key's bytes: a string without escapes.
    mutating func key() -> UnsafeRawBufferPointer? {
        guard take(UInt8(ascii: "\"")) else { return nil }
        let start = at
        while at < bytes.count, bytes[at] != UInt8(ascii: "\"") {
            guard bytes[at] != UInt8(ascii: "\\"), bytes[at] >= 0x20 else { return nil }
            at += 1
        }
        guard at < bytes.count else { return nil }
        at += 1
        return UnsafeRawBufferPointer(rebasing: bytes[start..<(at - 1)])
    }

    static func isKey(_ key: UnsafeRawBufferPointer, _ name: StaticString) -> Bool {
        key.elementsEqual(UnsafeRawBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount))
    }

    /// Whether the next byte (after whitespace) is `byte`, consuming it when it is.
    mutating func take(_ byte: UInt8) -> Bool {
        skipSpace()
        guard at < bytes.count, bytes[at] == byte else { return false }
        at += 1
        return true
    }

    mutating func skipSpace() {
        while at < bytes.count {
            switch bytes[at] {
            case 0x20, 0x09, 0x0A, 0x0D: at += 1
            default: return
            }
        }
    }

    /// Powers of ten a `Double` holds exactly.
    static let powersOfTen: [Double] = (0...22).map { exponent in (0..<exponent).reduce(1) { value, _ in value * 10 } }

    /// A JSON number as the nearest `Float`; nil for one that is none (out of range, or
    /// rounding to zero though not written as zero), as `JSONDecoder` refuses those.
    ///
    /// Up to 19 significant digits with a decimal exponent within ±22 are one exact `Double`
    /// operation (the digits and the power of ten are both exact), so correctly rounded;
    /// rounding that `Double` to `Float` gives the nearest `Float` of the written number
    /// unless the `Double` is exactly halfway between two `Float`s (where the written
    /// number may lie on either side). Those, and every other number, go to `strtof`.
    mutating func number() -> Float? {
        skipSpace()
        let start = at
        let negative = at < bytes.count && bytes[at] == UInt8(ascii: "-")
        if negative { at += 1 }
        var significand: UInt64 = 0, significantDigits = 0, exponent = 0
        func digit(_ reader: inout PaletteJSONReader) -> UInt64? {
            guard reader.at < reader.bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(reader.bytes[reader.at]) else { return nil }
            defer { reader.at += 1 }
            return UInt64(reader.bytes[reader.at] - UInt8(ascii: "0"))
        }
        func accumulate(_ value: UInt64) {  // past 19 significant digits the number goes to strtof
            if significand > 0 || value > 0 { significantDigits += 1 }
            if significantDigits <= 19 { significand = significand * 10 + value }
        }
        guard let first = digit(&self) else { return nil }
        if first == 0 {
            // JSON allows no digit after a leading zero but '.' or an exponent.
            if at < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[at]) { return nil }
        } else {
            accumulate(first)
            while let next = digit(&self) { accumulate(next) }
        }
        if at < bytes.count, bytes[at] == UInt8(ascii: ".") {
            at += 1
            guard let next = digit(&self) else { return nil }
            accumulate(next)
            exponent -= 1
            while let next = digit(&self) {
                accumulate(next)
                exponent -= 1
            }
        }
        let hasExponent = at < bytes.count && (bytes[at] == UInt8(ascii: "e") || bytes[at] == UInt8(ascii: "E"))
        if hasExponent {
            at += 1
            let negativeExponent = at < bytes.count && bytes[at] == UInt8(ascii: "-")
            if at < bytes.count, bytes[at] == UInt8(ascii: "-") || bytes[at] == UInt8(ascii: "+") { at += 1 }
            guard var written = digit(&self) else { return nil }
            while let next = digit(&self) { written = min(written * 10 + next, 100_000) }
            exponent += negativeExponent ? -Int(written) : Int(written)
        }
        // A zero with an exponent goes to JSONDecoder, which refuses some ("0e5": it looks
        // for a nonzero digit before the 'e' from both ends); JSONEncoder writes none.
        if significand == 0 { return hasExponent ? nil : negative ? -0.0 : 0 }
        if significantDigits <= 19, significand < 1 << 53, abs(exponent) <= 22 {
            let power = Self.powersOfTen[abs(exponent)]
            let value = exponent < 0 ? Double(significand) / power : Double(significand) * power
            let halfway = value.bitPattern & 0x1FFF_FFFF == 0x1000_0000  // the 29 bits a Float drops
            if value >= Double(Float.leastNormalMagnitude), value <= Double(Float.greatestFiniteMagnitude), !halfway {
                return negative ? -Float(value) : Float(value)
            }
        }
        return Self.parsed(UnsafeRawBufferPointer(rebasing: bytes[start..<at]))
    }

    /// `text` (a JSON number) read by `strtof`, as `JSONDecoder` reads it; nil when not finite or rounded to zero.
    static func parsed(_ text: UnsafeRawBufferPointer) -> Float? {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: text.count + 1) { buffer -> Float? in
            UnsafeMutableRawBufferPointer(buffer).copyMemory(from: text)
            buffer[text.count] = 0
            var end: UnsafeMutablePointer<CChar>?
            let value = strtof(buffer.baseAddress!, &end)
            guard end == buffer.baseAddress! + text.count, value.isFinite, value != 0 else { return nil }
            return value
        }
    }
}
