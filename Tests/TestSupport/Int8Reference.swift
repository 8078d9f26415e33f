/// The `Int8` form of a vector computed the plain way, which `QuantizedMatrix`
/// and the stores' saved forms are held to.
public enum Int8Reference {
    /// The quantization as first written — `Int8((x * scale).rounded())` and the inverse
    /// length of those — which every faster form must match bit for bit.
    public static func reference(_ vector: [Float]) -> ([Int8], Float)? {
        let largest = vector.reduce(Float(0)) { max($0, abs($1)) }
        guard largest > 0, largest.isFinite else { return nil }
        let scale = 127 / largest
        let row = vector.map { Int8(($0 * scale).rounded()) }
        let squared = row.reduce(Int32(0)) { $0 + Int32($1) * Int32($1) }
        return (row, 1 / Float(squared).squareRoot())
    }
}
