/// A 128-bit FNV-1a hash of a file's bytes, as 32 hex digits: the catalog's
/// change detector (an unchanged hash means an image need not be decoded
/// again) and the query-image cache key. Not a cryptographic hash.
public enum ContentHash {
    static let offset: UInt128 = 0x6C62_272E_07BB_0142_62B8_2175_6295_C58D

    /// The hash of `bytes`.
    ///
    /// The prime is 2⁸⁸ + 0x13B, so `hash × prime` is `hash × 0x13B` plus the
    /// low word shifted 24 bits into the high word: two 64-bit multiplies per
    /// byte instead of a full 128-bit product (the same value; a tenth of a
    /// catalog image's indexing time before).
    public static func of(_ bytes: [UInt8]) -> String {
        var high = UInt64(truncatingIfNeeded: offset >> 64), low = UInt64(truncatingIfNeeded: offset)
        bytes.withUnsafeBufferPointer { bytes in
            for byte in bytes {
                low ^= UInt64(byte)
                let product = low.multipliedFullWidth(by: 0x13B)
                high = high &* 0x13B &+ product.high &+ (low &<< 24)
                low = product.low
            }
        }
        let hash = UInt128(high) << 64 | UInt128(low)
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 32 - digits.count) + digits
    }
}
