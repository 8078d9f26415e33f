/// The marker segments of a JPEG stream before its first scan, walked with
/// every read bounds-checked: where EXIF (APP1) and ICC profiles (APP2) live.
enum JPEGSegments {
    /// Calls `body` with each segment's marker and payload (after the length
    /// field), in order, until the start of scan, the end of the data, damage,
    /// or `body` returning `false`.
    static func forEach(in bytes: UnsafeRawBufferPointer, _ body: (UInt8, UnsafeRawBufferPointer) -> Bool) {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return }
        var offset = 2
        while offset + 4 <= bytes.count {
            guard bytes[offset] == 0xFF else { return }
            let marker = bytes[offset + 1]
            if marker == 0xFF { offset += 1; continue }  // fill byte
            if marker == 0xDA || marker == 0xD9 { return }  // start of scan / end of image
            if (0xD0...0xD7).contains(marker) || marker == 0x01 { offset += 2; continue }
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            guard length >= 2, offset + 2 + length <= bytes.count else { return }
            let payload = UnsafeRawBufferPointer(rebasing: bytes[(offset + 4)..<(offset + 2 + length)])
            guard body(marker, payload) else { return }
            offset += 2 + length
        }
    }

    /// The TIFF structure of the first APP1 `Exif\0\0` segment, or `nil`.
    static func exif(in bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        var found: UnsafeRawBufferPointer?
        forEach(in: bytes) { marker, payload in
            if marker == 0xE1, payload.count >= 14, payload.starts(with: exifSignature) {
                found = UnsafeRawBufferPointer(rebasing: payload[6...])
                return false
            }
            return true
        }
        return found
    }

    /// `Exif\0\0`, the APP1 signature of EXIF.
    static let exifSignature: [UInt8] = [0x45, 0x78, 0x69, 0x66, 0, 0]
    /// `ICC_PROFILE\0`, the APP2 signature of an ICC profile chunk.
    static let iccSignature: [UInt8] = Array("ICC_PROFILE".utf8) + [0]

    /// The ICC profile carried in APP2 `ICC_PROFILE` segments, joined in
    /// their sequence order (a profile over 64 KB spans several segments).
    /// - Returns: the profile, `nil` without one, or a problem when chunks
    ///   are missing, repeated or disagree on their count.
    static func iccProfile(in bytes: UnsafeRawBufferPointer) -> Result<[UInt8], ICCChunkProblem>? {
        var chunks: [Int: UnsafeRawBufferPointer] = [:]
        var declaredCount: Int?
        var problem: String?
        forEach(in: bytes) { marker, payload in
            guard marker == 0xE2, payload.count >= 14, payload.starts(with: iccSignature) else { return true }
            let sequence = Int(payload[12]), count = Int(payload[13])
            if sequence < 1 || sequence > count || (declaredCount.map { $0 != count } ?? false) || chunks[sequence] != nil {
                problem = "ICC profile chunk \(sequence) of \(count) is out of order or repeated"
                return false
            }
            declaredCount = count
            chunks[sequence] = UnsafeRawBufferPointer(rebasing: payload[14...])
            return true
        }
        if let problem { return .failure(ICCChunkProblem(reason: problem)) }
        guard let declaredCount else { return nil }
        guard chunks.count == declaredCount else {
            return .failure(ICCChunkProblem(reason: "ICC profile has \(chunks.count) of its \(declaredCount) chunks"))
        }
        var profile: [UInt8] = []
        for sequence in 1...declaredCount { profile += chunks[sequence]! }
        return .success(profile)
    }

    /// Why an embedded ICC profile could not be assembled.
    struct ICCChunkProblem: Error, Hashable {
        var reason: String
    }

    /// Whether `marker` starts a frame header: SOF0...SOF15, not DHT, JPG or DAC.
    static func isFrameHeader(_ marker: UInt8) -> Bool {
        (0xC0...0xCF).contains(marker) && marker != 0xC4 && marker != 0xC8 && marker != 0xCC
    }

    /// Whether a JPEG stream contains a frame header (SOF0...SOF15, not DHT/JPG/DAC)
    /// before its data ends, walking the marker segments with bounds checks.
    static func hasFrameHeader(in bytes: UnsafeRawBufferPointer) -> Bool {
        guard bytes.count >= 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return false }
        var offset = 2
        while offset + 4 <= bytes.count {
            guard bytes[offset] == 0xFF else { return false }
            let marker = bytes[offset + 1]
            if marker == 0xFF { offset += 1; continue }
            if isFrameHeader(marker) {
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

    /// The DCT coefficients a decoder holds at once for a progressive JPEG
    /// (SOF2, SOF6, SOF10, SOF14): every block of every component, 64 × 2
    /// bytes each, for the whole image, whatever the output scale; 0 for a
    /// sequential JPEG, whose decoder keeps one row of blocks, and for
    /// streams whose frame header cannot be read.
    static func progressiveCoefficientBytes(in bytes: UnsafeRawBufferPointer) -> Int {
        var total = 0
        forEach(in: bytes) { marker, payload in
            guard isFrameHeader(marker) else { return true }
            guard [0xC2, 0xC6, 0xCA, 0xCE].contains(marker), payload.count >= 6 else { return false }
            let height = Int(payload[1]) << 8 | Int(payload[2]), width = Int(payload[3]) << 8 | Int(payload[4])
            let components = Int(payload[5])
            guard payload.count >= 6 + 3 * components, components > 0 else { return false }
            var horizontal: [Int] = [], vertical: [Int] = []
            for component in 0..<components {
                let sampling = Int(payload[7 + 3 * component])
                horizontal.append(sampling >> 4)
                vertical.append(sampling & 0x0F)
            }
            let maxH = max(1, horizontal.max() ?? 1), maxV = max(1, vertical.max() ?? 1)
            for component in 0..<components {
                let columns = (width * horizontal[component] + maxH * 8 - 1) / (maxH * 8)
                let rows = (height * vertical[component] + maxV * 8 - 1) / (maxV * 8)
                total += columns * rows * 128
            }
            return false
        }
        return total
    }

    /// `jpeg` with `segments` (each a marker and payload) inserted after SOI
    /// and a leading JFIF APP0, where EXIF and ICC segments belong.
    static func inserting(_ segments: [(marker: UInt8, payload: [UInt8])], into jpeg: [UInt8]) -> [UInt8] {
        guard !segments.isEmpty, jpeg.count >= 4 else { return jpeg }
        var position = 2
        if jpeg[2] == 0xFF, jpeg[3] == 0xE0, jpeg.count >= 6 {
            position = Swift.min(jpeg.count, 4 + (Int(jpeg[4]) << 8 | Int(jpeg[5])))
        }
        var out: [UInt8] = []
        out.reserveCapacity(jpeg.count + segments.reduce(0) { $0 + $1.payload.count + 4 })
        out += jpeg[0..<position]
        for segment in segments {
            let length = segment.payload.count + 2
            out += [0xFF, segment.marker, UInt8(length >> 8), UInt8(length & 0xFF)]
            out += segment.payload
        }
        out += jpeg[position...]
        return out
    }

    /// An ICC profile as APP2 payloads of at most 65,519 profile bytes each.
    static func iccSegments(_ profile: [UInt8]) -> [(marker: UInt8, payload: [UInt8])] {
        let chunkSize = 65_535 - 2 - 14
        let count = (profile.count + chunkSize - 1) / chunkSize
        guard count >= 1, count <= 255 else { return [] }
        return (0..<count).map { index in
            let chunk = profile[(index * chunkSize)..<Swift.min(profile.count, (index + 1) * chunkSize)]
            return (0xE2, iccSignature + [UInt8(index + 1), UInt8(count)] + chunk)
        }
    }
}
