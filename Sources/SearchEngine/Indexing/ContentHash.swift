/// A 128-bit FNV-1a hash of a file's bytes, as 32 hex digits: the catalog's
/// change detector (an unchanged hash means an image need not be decoded
/// again) and the query-image cache key. Not a cryptographic hash.
public enum ContentHash {
    static let offset: UInt128 = 0x6C62_272E_07BB_0142_62B8_2175_6295_C58D
    static let prime: UInt128 = 0x0000_0000_0100_0000_0000_0000_0000_013B

    /// The hash of `bytes`.
    public static func of(_ bytes: [UInt8]) -> String {
        var hash = offset
        for byte in bytes {
            hash ^= UInt128(byte)
            hash &*= prime
        }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 32 - digits.count) + digits
    }
}
