/// Reads the Orientation tag (0x0112) from a JPEG's APP1 "Exif" segment.
///
/// Every read is bounds-checked against the buffer; a malformed or missing
/// EXIF block yields `nil` (treated as upright), never a crash.
enum EXIFReader {
    /// The orientation stored in a JPEG file, or `nil` when there is none or it is unreadable.
    static func orientation(inJPEG bytes: UnsafeRawBufferPointer) -> Orientation? {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return nil }
        var offset = 2
        while offset + 4 <= bytes.count {
            guard bytes[offset] == 0xFF else { return nil }
            let marker = bytes[offset + 1]
            if marker == 0xFF { offset += 1; continue }  // fill byte
            if marker == 0xDA || marker == 0xD9 { return nil }  // start of scan / end: no EXIF before the data
            if (0xD0...0xD7).contains(marker) || marker == 0x01 { offset += 2; continue }
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            guard length >= 2, offset + 2 + length <= bytes.count else { return nil }
            let segmentStart = offset + 4
            let segmentEnd = offset + 2 + length
            if marker == 0xE1, segmentEnd - segmentStart >= 14,
               bytes[segmentStart] == 0x45, bytes[segmentStart + 1] == 0x78, bytes[segmentStart + 2] == 0x69,
               bytes[segmentStart + 3] == 0x66, bytes[segmentStart + 4] == 0, bytes[segmentStart + 5] == 0 {
                let tiff = UnsafeRawBufferPointer(rebasing: bytes[(segmentStart + 6)..<segmentEnd])
                if let orientation = orientation(inTIFF: tiff) { return orientation }
            }
            offset = segmentEnd
        }
        return nil
    }

    /// Whether a JPEG stream contains a frame header (SOF0...SOF15, not DHT/JPG/DAC)
    /// before its data ends, walking the marker segments with bounds checks.
    static func hasFrameHeader(inJPEG bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return false }
        var offset = 2
        while offset + 4 <= bytes.count {
            guard bytes[offset] == 0xFF else { return false }
            let marker = bytes[offset + 1]
            if marker == 0xFF { offset += 1; continue }
            if (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC {
                return offset + 2 + 8 <= bytes.count  // the SOF segment's fixed part is present
            }
            if marker == 0xDA || marker == 0xD9 { return false }
            if (0xD0...0xD7).contains(marker) || marker == 0x01 { offset += 2; continue }
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            guard length >= 2 else { return false }
            offset += 2 + length
        }
        return false
    }

    /// The Orientation tag in IFD0 of a TIFF structure.
    static func orientation(inTIFF tiff: UnsafeRawBufferPointer) -> Orientation? {
        guard tiff.count >= 8 else { return nil }
        let littleEndian: Bool
        switch (tiff[0], tiff[1]) {
        case (0x49, 0x49): littleEndian = true
        case (0x4D, 0x4D): littleEndian = false
        default: return nil
        }
        func u16(_ at: Int) -> Int? {
            guard at >= 0, at + 2 <= tiff.count else { return nil }
            return littleEndian ? Int(tiff[at]) | Int(tiff[at + 1]) << 8 : Int(tiff[at]) << 8 | Int(tiff[at + 1])
        }
        func u32(_ at: Int) -> Int? {
            guard let low = u16(littleEndian ? at : at + 2), let high = u16(littleEndian ? at + 2 : at) else { return nil }
            return high << 16 | low
        }
        guard u16(2) == 42, let ifd = u32(4), let count = u16(ifd) else { return nil }
        for entry in 0..<min(count, 1000) {
            let at = ifd + 2 + entry * 12
            guard let tag = u16(at) else { return nil }
            if tag == 0x0112 {
                guard let type = u16(at + 2), type == 3, let value = u16(at + 8) else { return nil }
                return Orientation(rawValue: value)
            }
        }
        return nil
    }
}
