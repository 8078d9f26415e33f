/// A fixed linear map shipped with a model: `P · (v − mean)`, from the
/// model's output to fewer dimensions (principal components fitted once on
/// package-shipped images, never on what is reported), so a catalog keeps a
/// smaller vector per image. The file is float32 little-endian: `mean`
/// (input floats) then the `output × input` matrix, row after row.
struct EmbeddingProjection: Sendable {
    let inputDimension: Int
    let outputDimension: Int
    let mean: [Float]
    /// Row-major `outputDimension × inputDimension`.
    let matrix: [Float]

    init(bytes: [UInt8], inputDimension: Int, outputDimension: Int, path: String) throws(EmbeddingError) {
        let floats = inputDimension * (outputDimension + 1)
        guard bytes.count == floats * 4 else {
            throw .modelDamaged(path: path, reason: "the projection has \(bytes.count) bytes; \(outputDimension)×\(inputDimension) needs \(floats * 4)")
        }
        let values = bytes.withUnsafeBytes { raw in
            (0..<floats).map { Float(bitPattern: UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: $0 * 4, as: UInt32.self))) }
        }
        guard values.allSatisfy(\.isFinite) else { throw .modelDamaged(path: path, reason: "the projection holds values that are not finite") }
        self.inputDimension = inputDimension
        self.outputDimension = outputDimension
        mean = Array(values[0..<inputDimension])
        matrix = Array(values[inputDimension...])
    }

    /// `P · (vector − mean)`.
    func apply(to vector: [Float]) -> [Float] {
        precondition(vector.count == inputDimension)
        let centred = zip(vector, mean).map { $0 - $1 }
        return centred.withUnsafeBufferPointer { v in
            matrix.withUnsafeBufferPointer { m in
                (0..<outputDimension).map { row in
                    DotProduct.of(v.baseAddress!, m.baseAddress! + row * inputDimension, inputDimension)
                }
            }
        }
    }
}
