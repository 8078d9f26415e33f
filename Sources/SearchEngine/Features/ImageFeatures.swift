import ImageOps

/// Features of an encoded image, the same way for what is indexed and what
/// is queried: decoded with shrink-on-load to what the features need, then
/// one small copy for the colour vector (and the palette, for catalog items).
public enum ImageFeatures {
    /// A catalog row for one encoded image.
    /// - Throws: ``ImageOpsError`` naming `source`.
    public static func catalogItem(named name: String, bytes: [UInt8], source: String, metadata: [String: String],
                                   limits: ImageLimits = .default) throws(ImageOpsError) -> CatalogItem {
        let decoded = try ImageDecoder.decode(bytes, source: source, options: DecodingOptions(
            minimumSize: PixelSize(width: ColorFeatures.workingSide, height: ColorFeatures.workingSide), limits: limits))
        // One small copy serves both the features and the palette.
        let small = Resampler.resample(decoded.pixels, to: decoded.pixels.size.fitting(inside: ColorFeatures.workingSide),
                                       filter: .triangle)
        return CatalogItem(imageName: name, source: source, width: decoded.header.size.width,
                           height: decoded.header.size.height, contentHash: ContentHash.of(bytes),
                           features: ColorFeatures.vector(of: small),
                           palette: DominantColors.palette(of: small), metadata: metadata)
    }

    /// The query vector of an encoded image, inside `box` when given (in the
    /// image's upright pixels; clamped; a point selects its neighbourhood),
    /// and the region searched.
    /// - Throws: ``ImageOpsError`` naming `source`.
    public static func query(_ bytes: [UInt8], box: PixelBox?, source: String = "query image",
                             limits: ImageLimits = .default) throws(ImageOpsError) -> (vector: [Float], region: PixelRect) {
        let header = try ImageDecoder.readHeader(bytes, source: source, limits: limits)
        let full = header.size
        let region = try box?.region(in: full) ?? PixelRect(x: 0, y: 0, width: full.width, height: full.height)
        // Decode just large enough that the region keeps ColorFeatures.workingSide pixels.
        let scale = min(1, Double(ColorFeatures.workingSide) / Double(max(region.width, region.height)))
        let minimum = PixelSize(width: max(1, Int((Double(full.width) * scale).rounded(.up))),
                                height: max(1, Int((Double(full.height) * scale).rounded(.up))))
        let decoded = try ImageDecoder.decode(bytes, source: source, options: DecodingOptions(minimumSize: minimum, limits: limits))
        let sx = Double(decoded.pixels.width) / Double(full.width), sy = Double(decoded.pixels.height) / Double(full.height)
        let x = min(decoded.pixels.width - 1, Int(Double(region.x) * sx)), y = min(decoded.pixels.height - 1, Int(Double(region.y) * sy))
        let crop = PixelRect(x: x, y: y,
                             width: max(1, min(decoded.pixels.width - x, Int((Double(region.width) * sx).rounded()))),
                             height: max(1, min(decoded.pixels.height - y, Int((Double(region.height) * sy).rounded()))))
        let pixels = try ImageProcessors.Crop(crop).process(decoded.pixels)
        return (ColorFeatures.vector(of: pixels), region)
    }
}
