import ImageOps

/// The geometry of the pipeline's regions: what the colour embedder is
/// given once margins are trimmed, and rectangles carried between the
/// reduced copy and the decoded pixels.
extension FeaturePipeline {
    /// What the colour embedder describes: `pixels` inside `content`, the
    /// uniform margins found on `small` (their reduced copy) — or `small`
    /// itself when nothing was trimmed (the embedder would reduce `pixels` to it).
    static func colorContent(_ pixels: PixelBuffer, small: PixelBuffer, content: PixelRect) -> PixelBuffer {
        if content.width == small.width && content.height == small.height { return small }
        let rect = mapped(insetTrimmedSides(content, of: small.size), from: small.size, to: pixels.size)
        // `mapped` stays inside `pixels`, so the crop cannot fail.
        return (try? ImageProcessors.Crop(rect).process(pixels)) ?? pixels
    }

    /// `content` less one pixel on each side where a margin was trimmed: the
    /// first line inside a margin is, in the reduced copy, a blend of the
    /// margin and the picture (kept when the content is too small to spare it).
    static func insetTrimmedSides(_ content: PixelRect, of size: PixelSize) -> PixelRect {
        let left = content.x > 0 ? 1 : 0, top = content.y > 0 ? 1 : 0
        let right = content.x + content.width < size.width ? 1 : 0, bottom = content.y + content.height < size.height ? 1 : 0
        guard content.width - left - right >= 4, content.height - top - bottom >= 4 else { return content }
        return PixelRect(x: content.x + left, y: content.y + top, width: content.width - left - right,
                         height: content.height - top - bottom)
    }

    /// A rectangle of an image of size `from` in the pixels of the same image
    /// at size `to`: the pixels wholly inside it (a trimmed border's blended
    /// edge stays out), at least one.
    static func mapped(_ rect: PixelRect, from: PixelSize, to: PixelSize) -> PixelRect {
        let sx = Double(to.width) / Double(from.width), sy = Double(to.height) / Double(from.height)
        let x0 = min(to.width - 1, Int((Double(rect.x) * sx).rounded(.up)))
        let y0 = min(to.height - 1, Int((Double(rect.y) * sy).rounded(.up)))
        let x1 = max(x0 + 1, min(to.width, Int((Double(rect.x + rect.width) * sx).rounded(.down))))
        let y1 = max(y0 + 1, min(to.height, Int((Double(rect.y + rect.height) * sy).rounded(.down))))
        return PixelRect(x: x0, y: y0, width: x1 - x0, height: y1 - y0)
    }
}

extension PixelSize {
    /// This size scaled by `factor`, rounded up, at least 1×1.
    func scaled(by factor: Double) -> PixelSize {
        PixelSize(width: max(1, Int((Double(width) * factor).rounded(.up))), height: max(1, Int((Double(height) * factor).rounded(.up))))
    }

    /// The smallest size at least as large as both.
    func covering(_ other: PixelSize) -> PixelSize {
        PixelSize(width: max(width, other.width), height: max(height, other.height))
    }
}
