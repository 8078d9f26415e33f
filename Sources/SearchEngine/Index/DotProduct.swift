/// The one SIMD loop every scan of the engine runs: a `Float` query against a
/// stored row of `Float`s (colour vectors, the model's projection) or of
/// `Int8`s (learned vectors, ``QuantizedMatrix``), sixteen lanes at a time.
/// Lane `k` sums the products at offsets `k`, `k + 16`, …, whatever the row's
/// scalar, so a row scores the same from either representation of its values.
enum DotProduct {
    @inline(__always)
    static func of<Row: DotProductRow>(_ query: UnsafePointer<Float>, _ row: UnsafePointer<Row>, _ count: Int) -> Float {
        var sum = SIMD16<Float>()
        var offset = 0
        let rawQuery = UnsafeRawPointer(query)
        while offset + 16 <= count {
            let x = rawQuery.loadUnaligned(fromByteOffset: offset * 4, as: SIMD16<Float>.self)
            sum += x * Row.lanes(row + offset)
            offset += 16
        }
        var total = sum.sum()
        while offset < count {
            total += query[offset] * row[offset].floatValue
            offset += 1
        }
        return total
    }
}

/// A scalar a stored row is made of, read sixteen at a time as `Float` lanes.
protocol DotProductRow {
    static func lanes(_ pointer: UnsafePointer<Self>) -> SIMD16<Float>
    var floatValue: Float { get }
}

extension Float: DotProductRow {
    @inline(__always)
    static func lanes(_ pointer: UnsafePointer<Float>) -> SIMD16<Float> {
        UnsafeRawPointer(pointer).loadUnaligned(as: SIMD16<Float>.self)
    }

    @inline(__always)
    var floatValue: Float { self }
}

extension Int8: DotProductRow {
    /// Converted lane by lane: the compiler turns this into one vector widening, where the generic
    /// `SIMD16<Float>(SIMD16<Int8>)` initialiser stays an out-of-line call per element — measured 2.3×
    /// slower over 100k rows of 512 (the learned scan of an upload query, bench/RESULTS.md issue 25).
    @inline(__always)
    static func lanes(_ p: UnsafePointer<Int8>) -> SIMD16<Float> {
        SIMD16<Float>(Float(p[0]), Float(p[1]), Float(p[2]), Float(p[3]), Float(p[4]), Float(p[5]), Float(p[6]), Float(p[7]),
                      Float(p[8]), Float(p[9]), Float(p[10]), Float(p[11]), Float(p[12]), Float(p[13]), Float(p[14]), Float(p[15]))
    }

    @inline(__always)
    var floatValue: Float { Float(self) }
}
