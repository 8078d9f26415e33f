import ImageOps
@testable import SearchEngine
import Testing
import TestSupport

@Suite("Non-maximum suppression")
struct NonMaximumSuppressionTests {
    struct Box: Equatable {
        var rect: PixelRect
        var score: Float
        init(_ x: Int, _ y: Int, _ width: Int, _ height: Int, _ score: Float) {
            rect = PixelRect(x: x, y: y, width: width, height: height)
            self.score = score
        }
    }

    static func select(_ boxes: [Box], overlap: Double = 0.5, containment: Double = 1.0, limit: Int = .max) -> [Box] {
        NonMaximumSuppression.select(boxes, region: \.rect, score: \.score, overlap: overlap, containment: containment, limit: limit)
    }

    @Test("of two boxes overlapping beyond the threshold the better-scored stays; apart, both stay, best first")
    func keepsTheBest() {
        let a = Box(0, 0, 100, 100, 0.6), b = Box(10, 10, 100, 100, 0.9), c = Box(300, 0, 50, 50, 0.7)
        #expect(Self.select([a, b, c]) == [b, c])
        // IoU of a and b is 8100 / 11900 = 0.68: kept both only when the threshold is above it.
        #expect(Self.select([a, b, c], overlap: 0.7) == [b, c, a])
    }

    @Test("a box mostly inside a better one goes when containment is asked for, however small its IoU")
    func dropsParts() {
        let whole = Box(0, 0, 200, 200, 0.9), part = Box(10, 10, 50, 50, 0.8)
        #expect(Self.select([whole, part]) == [whole, part])
        #expect(Self.select([whole, part], containment: 0.8) == [whole])
    }

    @Test("the outcome does not depend on the input's order; ties go to the larger box; the limit counts kept boxes")
    func deterministic() {
        let boxes = [Box(0, 0, 10, 10, 0.5), Box(100, 0, 20, 20, 0.5), Box(200, 0, 10, 10, 0.9), Box(202, 0, 10, 10, 0.8)]
        let forward = Self.select(boxes), backward = Self.select(boxes.reversed())
        #expect(forward == backward)
        #expect(forward.map(\.rect.x) == [200, 100, 0])
        #expect(Self.select(boxes, limit: 2).map(\.rect.x) == [200, 100])
    }
}
