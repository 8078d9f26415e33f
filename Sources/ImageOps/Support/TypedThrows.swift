extension Array where Element == UInt8 {
    /// `withUnsafeBytes` for bodies that throw ``ImageOpsError`` (the
    /// standard library's version rethrows an untyped error).
    func withImageBytes<Result>(
        _ body: (UnsafeRawBufferPointer) throws(ImageOpsError) -> Result
    ) throws(ImageOpsError) -> Result {
        let outcome: Swift.Result<Result, ImageOpsError> = withUnsafeBytes { raw in
            Swift.Result { () throws(ImageOpsError) -> Result in try body(raw) }
        }
        return try outcome.get()
    }
}
