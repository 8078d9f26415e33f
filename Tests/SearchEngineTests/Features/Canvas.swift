import ImageOps

/// Small compositions for the features tests: a picture on a canvas of one
/// colour, mirrored copies, filled rectangles.
enum Canvas {
    /// A `width`×`height` canvas of `colour` with `picture` pasted at `x`, `y`.
    static func paste(_ picture: PixelBuffer, at x: Int, _ y: Int, width: Int, height: Int,
                      colour: (UInt8, UInt8, UInt8)) -> PixelBuffer {
        var canvas = PixelBuffer(width: width, height: height, hasAlpha: false, fill: (colour.0, colour.1, colour.2, 255))
        for row in 0..<picture.height where y + row < height {
            for column in 0..<picture.width where x + column < width {
                let from = (row * picture.width + column) * 4, to = ((y + row) * width + x + column) * 4
                for channel in 0..<3 { canvas.bytes[to + channel] = picture.bytes[from + channel] }
            }
        }
        return canvas
    }

    /// `picture` with a rectangle filled with `colour`.
    static func fill(_ picture: PixelBuffer, _ rect: PixelRect, colour: (UInt8, UInt8, UInt8)) -> PixelBuffer {
        var out = picture
        for y in rect.y..<(rect.y + rect.height) {
            for x in rect.x..<(rect.x + rect.width) {
                let index = (y * out.width + x) * 4
                out.bytes[index] = colour.0; out.bytes[index + 1] = colour.1; out.bytes[index + 2] = colour.2
            }
        }
        return out
    }

    /// The picture mirrored left to right.
    static func mirrored(_ picture: PixelBuffer) -> PixelBuffer {
        var out = picture
        for y in 0..<picture.height {
            for x in 0..<picture.width {
                let from = (y * picture.width + x) * 4, to = (y * picture.width + picture.width - 1 - x) * 4
                for channel in 0..<4 { out.bytes[to + channel] = picture.bytes[from + channel] }
            }
        }
        return out
    }

    /// The dot product of two vectors.
    static func dot(_ a: [Float], _ b: [Float]) -> Float { zip(a, b).reduce(0) { $0 + $1.0 * $1.1 } }
}
