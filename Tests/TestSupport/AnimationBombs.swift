/// Tiny files that declare huge canvases, written byte by byte (issue 37):
/// an animated WebP whose frames are lossless (VP8L) images of one colour —
/// a few bytes whatever their size, since a one-symbol prefix code takes no
/// bits a pixel — and a GIF whose logical screen is far larger than its
/// one-pixel frame. Each decoder allocates for the canvas, not the file.
///
/// ```swift
/// let bomb = AnimationBombs.webp(canvas: (5600, 5600), frames: [(x: 0, y: 0, width: 5600, height: 5600)])
/// ```
public enum AnimationBombs {
    /// A frame of an animated WebP: where it lies on the canvas (`x`, `y` even) and its size.
    public typealias Frame = (x: Int, y: Int, width: Int, height: Int)

    /// An animated WebP (VP8X with the animation flag, ANIM, one ANMF a frame),
    /// each frame a lossless image of `color` (RGBA).
    public static func webp(canvas: (width: Int, height: Int), frames: [Frame],
                            color: (UInt8, UInt8, UInt8, UInt8) = (200, 40, 30, 255)) -> [UInt8] {
        var chunks: [UInt8] = []
        var vp8x: [UInt8] = [0x02 | 0x10, 0, 0, 0]  // animation and alpha flags, reserved
        vp8x += le(canvas.width - 1, bytes: 3) + le(canvas.height - 1, bytes: 3)
        chunks += chunk("VP8X", vp8x)
        chunks += chunk("ANIM", [0, 0, 0, 0] + le(0, bytes: 2))  // transparent background, loop for ever
        for frame in frames {
            var anmf = le(frame.x / 2, bytes: 3) + le(frame.y / 2, bytes: 3)
            anmf += le(frame.width - 1, bytes: 3) + le(frame.height - 1, bytes: 3)
            anmf += le(100, bytes: 3) + [0x02]  // 100 ms, no blending, no disposal
            anmf += chunk("VP8L", vp8l(width: frame.width, height: frame.height, color: color))
            chunks += chunk("ANMF", anmf)
        }
        return Array("RIFF".utf8) + le(4 + chunks.count, bytes: 4) + Array("WEBP".utf8) + chunks
    }

    /// A still lossless WebP of one colour (to check ``vp8l(width:height:color:)`` decodes as meant).
    public static func stillWebP(width: Int, height: Int, color: (UInt8, UInt8, UInt8, UInt8)) -> [UInt8] {
        let body = chunk("VP8L", vp8l(width: width, height: height, color: color))
        return Array("RIFF".utf8) + le(4 + body.count, bytes: 4) + Array("WEBP".utf8) + body
    }

    /// A VP8L bitstream of one colour: signature, size, no transform, no
    /// colour cache, no meta codes, and five simple prefix codes of one
    /// symbol each (green, red, blue, alpha, distance) — zero bits a pixel.
    public static func vp8l(width: Int, height: Int, color: (UInt8, UInt8, UInt8, UInt8)) -> [UInt8] {
        var writer = BitWriter()
        writer.write(0x2F, bits: 8)
        writer.write(width - 1, bits: 14)
        writer.write(height - 1, bits: 14)
        writer.write(color.3 == 255 ? 0 : 1, bits: 1)  // alpha used
        writer.write(0, bits: 3)  // version
        writer.write(0, bits: 1)  // no transform
        writer.write(0, bits: 1)  // no colour cache
        writer.write(0, bits: 1)  // no meta prefix codes
        for symbol in [Int(color.1), Int(color.0), Int(color.2), Int(color.3), 0] {
            writer.write(1, bits: 1)  // simple code
            writer.write(0, bits: 1)  // one symbol
            writer.write(1, bits: 1)  // an 8-bit symbol
            writer.write(symbol, bits: 8)
        }
        return writer.bytes + [0, 0, 0, 0]
    }

    /// A GIF89a of a `screen`-sized logical screen holding one 1×1 frame (35 bytes).
    public static func gif(screen: (width: Int, height: Int)) -> [UInt8] {
        var bytes = Array("GIF89a".utf8) + le(screen.width, bytes: 2) + le(screen.height, bytes: 2)
        bytes += [0x80, 0, 0]  // a global colour table of 2 entries; background 0; no aspect ratio
        bytes += [200, 40, 30, 255, 255, 255]
        bytes += [0x2C] + le(0, bytes: 2) + le(0, bytes: 2) + le(1, bytes: 2) + le(1, bytes: 2) + [0]
        // LZW, minimum code size 2: clear (4), index 0, end (5) in 3-bit codes.
        bytes += [0x02, 0x02, 0x44, 0x01, 0x00]
        return bytes + [0x3B]
    }

    static func chunk(_ tag: String, _ payload: [UInt8]) -> [UInt8] {
        Array(tag.utf8) + le(payload.count, bytes: 4) + payload + (payload.count % 2 == 1 ? [0] : [])
    }

    static func le(_ value: Int, bytes: Int) -> [UInt8] {
        (0..<bytes).map { UInt8((value >> (8 * $0)) & 0xFF) }
    }

    /// Bits least significant first, as VP8L reads them.
    struct BitWriter {
        var bytes: [UInt8] = []
        var used = 0

        mutating func write(_ value: Int, bits: Int) {
            for bit in 0..<bits {
                if used % 8 == 0 { bytes.append(0) }
                if (value >> bit) & 1 == 1 { bytes[bytes.count - 1] |= UInt8(1 << (used % 8)) }
                used += 1
            }
        }
    }
}
