import ImageOps

/// Small compositions for the features tests: a picture on a canvas of one
/// colour or of noise, filled rectangles.
public enum Canvas {
    /// A `width`×`height` canvas of `colour` with `picture` pasted at `x`, `y`.
    public static func paste(_ picture: PixelBuffer, at x: Int, _ y: Int, width: Int, height: Int,
                      color: (UInt8, UInt8, UInt8)) -> PixelBuffer {
        paste(picture, onto: PixelBuffer(width: width, height: height, hasAlpha: false, fill: (color.0, color.1, color.2, 255)), at: x, y)
    }

    /// `picture` pasted onto `canvas` at `x`, `y` (clipped).
    public static func paste(_ picture: PixelBuffer, onto canvas: PixelBuffer, at x: Int, _ y: Int) -> PixelBuffer {
        var out = canvas
        for row in 0..<picture.height where y + row < canvas.height {
            for column in 0..<picture.width where x + column < canvas.width {
                let from = (row * picture.width + column) * 4, to = ((y + row) * canvas.width + x + column) * 4
                for channel in 0..<3 { out.bytes[to + channel] = picture.bytes[from + channel] }
            }
        }
        return out
    }

    /// A canvas of `base` with a fixed pseudo-random jitter of up to +127 per
    /// 16 px block: blotches that survive reduction to 128 px, so no line of
    /// it is uniform even after shrink-on-load.
    public static func noise(width: Int, height: Int, base: (UInt8, UInt8, UInt8)) -> PixelBuffer {
        var state: UInt32 = 12345
        let columns = (width + 15) / 16
        let jitter = (0..<(columns * ((height + 15) / 16))).map { _ -> UInt8 in
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: state >> 25)
        }
        return PixelBuffer(width: width, height: height, hasAlpha: false) { bytes in
            for y in 0..<height {
                for x in 0..<width {
                    let index = (y * width + x) * 4, j = jitter[(y / 16) * columns + x / 16]
                    bytes[index] = base.0 &+ j; bytes[index + 1] = base.1 &+ j / 2; bytes[index + 2] = base.2 &+ j
                    bytes[index + 3] = 255
                }
            }
        }
    }

    /// `picture` with a rectangle filled with `colour`.
    public static func fill(_ picture: PixelBuffer, _ rect: PixelRect, color: (UInt8, UInt8, UInt8)) -> PixelBuffer {
        var out = picture
        for y in rect.y..<(rect.y + rect.height) {
            for x in rect.x..<(rect.x + rect.width) {
                let index = (y * out.width + x) * 4
                out.bytes[index] = color.0; out.bytes[index + 1] = color.1; out.bytes[index + 2] = color.2
            }
        }
        return out
    }

    /// The dot product of two vectors.
    public static func dot(_ a: [Float], _ b: [Float]) -> Float { zip(a, b).reduce(0) { $0 + $1.0 * $1.1 } }

    /// A 3:1 banner: the picture on the left, a headline (white bars) on the right.
    public static func banner(_ picture: PixelBuffer) -> (PixelBuffer, PixelRect) {
        let height = 128, width = 384
        let small = Resampler.resample(picture, to: picture.size.fitting(inside: PixelSize(width: 110, height: 110)), filter: .triangle)
        let x = 12, y = (height - small.height) / 2
        var banner = Canvas.paste(small, at: x, y, width: width, height: height, color: (11, 61, 145))
        banner = Canvas.fill(banner, PixelRect(x: 250, y: 55, width: 100, height: 6), color: (255, 255, 255))
        banner = Canvas.fill(banner, PixelRect(x: 250, y: 70, width: 70, height: 6), color: (255, 255, 255))
        return (banner, PixelRect(x: x, y: y, width: small.width, height: small.height))
    }
}
