/// Writes the smallest EXIF block that carries a shop's rights notice: a
/// big-endian TIFF structure whose IFD0 holds only Artist (0x013B) and
/// Copyright (0x8298). No orientation (outputs are upright), no GPS, no
/// camera or maker-note tags: nothing else of the source can leak through it.
enum EXIFWriter {
    /// The TIFF bytes, or `nil` when there is nothing to write.
    static func tiff(for metadata: ImageMetadata) -> [UInt8]? {
        let entries = [(UInt16(0x013B), metadata.artist), (UInt16(0x8298), metadata.copyright)]
            .compactMap { tag, text in text.map { (tag, Array($0.utf8) + [0]) } }
        guard !entries.isEmpty else { return nil }
        func u16(_ value: Int) -> [UInt8] { [UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
        func u32(_ value: Int) -> [UInt8] { [UInt8(value >> 24 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)] }
        let ifdOffset = 8
        var dataOffset = ifdOffset + 2 + entries.count * 12 + 4
        var ifd: [UInt8] = u16(entries.count)
        var data: [UInt8] = []
        for (tag, value) in entries {
            ifd += u16(Int(tag)) + u16(2) + u32(value.count)
            if value.count <= 4 {
                ifd += value + [UInt8](repeating: 0, count: 4 - value.count)
            } else {
                ifd += u32(dataOffset)
                data += value
                dataOffset += value.count
            }
        }
        ifd += u32(0)  // no next IFD
        return [0x4D, 0x4D, 0x00, 0x2A] + u32(ifdOffset) + ifd + data
    }
}
