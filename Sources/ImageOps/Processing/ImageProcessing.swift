/// One step of image processing: a small `Sendable`, `Hashable` value that
/// turns pixels into pixels. Implementations live in ``ImageProcessors``.
///
/// Each processor has a stable ``identifier`` such as
/// `"vsearch.resize?w=400,h=300,filter=lanczos3"`, usable as a cache key.
///
/// ```swift
/// let steps: [any ImageProcessing] = [
///     ImageProcessors.Crop(PixelRect(x: 0, y: 0, width: 100, height: 100)),
///     ImageProcessors.Resize(to: PixelSize(width: 50, height: 50)),
/// ]
/// let out = try steps.reduce(image) { try $1.process($0) }
/// ```
public protocol ImageProcessing: Sendable, Hashable {
    /// Applies the step.
    /// - Throws: ``ImageOpsError`` when the step cannot apply to this image.
    func process(_ image: PixelBuffer) throws(ImageOpsError) -> PixelBuffer
    /// A stable description of the step and its parameters.
    var identifier: String { get }
}

/// Namespace for the concrete processors.
public enum ImageProcessors {}
