import ImageOps
import SearchEngine
import TestSupport
import Testing

@Suite("ColorFeatures", .timeLimit(.minutes(10)))
struct ColorFeaturesTests {
    static func norm(_ vector: [Float]) -> Float { vector.reduce(0) { $0 + $1 * $1 }.squareRoot() }

    @Test("a photo's vector has the declared size and unit length; with itself it scores 1")
    func photo() throws {
        let photo = try ImageDecoder.decode(fileAt: Repository.images + "/chelsea_cat.jpg").pixels
        let vector = ColorFeatures.vector(of: photo)
        #expect(vector.count == ColorFeatures.dimensions)
        #expect(abs(Self.norm(vector) - 1) < 1e-3)
        let dot = zip(vector, vector).reduce(0) { $0 + $1.0 * $1.1 }
        #expect(Similarity.score(dot: dot) > 0.999)
    }

    @Test("degenerate images do not crash: one pixel and flat grey have unit vectors, fully transparent has none")
    func degenerate() {
        let tiny = ColorFeatures.vector(of: PixelBuffer(width: 1, height: 1, hasAlpha: false, fill: (255, 0, 0, 255)))
        #expect(abs(Self.norm(tiny) - 1) < 1e-3)
        let grey = ColorFeatures.vector(of: PixelBuffer(width: 16, height: 16, hasAlpha: false, fill: (128, 128, 128, 255)))
        #expect(abs(Self.norm(grey) - 1) < 1e-3)
        let clear = ColorFeatures.vector(of: PixelBuffer(width: 4, height: 4, hasAlpha: true, fill: (0, 0, 0, 0)))
        #expect(clear.count == ColorFeatures.dimensions && clear.allSatisfy { $0 == 0 })
    }

    @Test("a colour is nearer to itself in a different size than to another colour")
    func discrimination() {
        let red = ColorFeatures.vector(of: PixelBuffer(width: 40, height: 30, hasAlpha: false, fill: (200, 30, 30, 255)))
        let bigRed = ColorFeatures.vector(of: PixelBuffer(width: 400, height: 300, hasAlpha: false, fill: (200, 30, 30, 255)))
        let blue = ColorFeatures.vector(of: PixelBuffer(width: 40, height: 30, hasAlpha: false, fill: (30, 30, 200, 255)))
        let dot = { (a: [Float], b: [Float]) in zip(a, b).reduce(0) { $0 + $1.0 * $1.1 } }
        #expect(Similarity.score(dot: dot(red, bigRed)) > 0.99)
        #expect(Similarity.score(dot: dot(red, blue)) < Similarity.score(dot: dot(red, bigRed)) - 0.2)
    }
}
