import ImageOps
@testable import SearchEngine
import Testing
import TestSupport

@Suite("Foreground proposals on a plain background")
struct ForegroundProposalsTests {
    static func canvas(_ width: Int, _ height: Int, _ color: (UInt8, UInt8, UInt8) = (255, 255, 255)) -> PixelBuffer {
        PixelBuffer(width: width, height: height, hasAlpha: false, fill: (color.0, color.1, color.2, 255))
    }

    /// The IoU of `a` and `b`.
    static func iou(_ a: PixelRect, _ b: PixelRect) -> Double { a.overlap(with: b) }

    @Test("three shapes on white are three objects with their own boxes, largest first")
    func threeObjects() throws {
        let placed = [PixelRect(x: 40, y: 50, width: 200, height: 150), PixelRect(x: 400, y: 60, width: 120, height: 260),
                      PixelRect(x: 150, y: 400, width: 90, height: 90)]
        var picture = Self.canvas(800, 600)
        for (index, rect) in placed.enumerated() {
            picture = Canvas.fill(picture, rect, color: [(200, 30, 30), (20, 90, 200), (30, 160, 60)][index])
        }
        let proposals = try #require(ForegroundProposals().proposals(in: picture))
        #expect(proposals.count == 3)
        for rect in placed {
            #expect(proposals.contains { Self.iou($0.region, rect) >= 0.9 }, "\(rect) not found in \(proposals.map(\.region))")
        }
        #expect(proposals.map { $0.region.width * $0.region.height } == proposals.map { $0.region.width * $0.region.height }.sorted(by: >))
    }

    @Test("two parts a narrow gap apart are one object; far apart, two")
    func gaps() throws {
        var near = Self.canvas(640, 480, (240, 235, 220))
        near = Canvas.fill(near, PixelRect(x: 100, y: 100, width: 80, height: 60), color: (10, 10, 10))
        near = Canvas.fill(near, PixelRect(x: 184, y: 100, width: 80, height: 60), color: (10, 10, 10))
        #expect(try #require(ForegroundProposals().proposals(in: near)).count == 1)
        var far = Self.canvas(640, 480, (240, 235, 220))
        far = Canvas.fill(far, PixelRect(x: 100, y: 100, width: 80, height: 60), color: (10, 10, 10))
        far = Canvas.fill(far, PixelRect(x: 400, y: 100, width: 80, height: 60), color: (10, 10, 10))
        #expect(try #require(ForegroundProposals().proposals(in: far)).count == 2)
    }

    @Test("a photograph-like border (noise) is not plain: no proposals; a speck is noise, not an object")
    func notPlain() {
        #expect(ForegroundProposals().proposals(in: Canvas.noise(width: 400, height: 300, base: (40, 80, 60))) == nil)
        var speck = Self.canvas(500, 500)
        speck = Canvas.fill(speck, PixelRect(x: 200, y: 200, width: 6, height: 6), color: (0, 0, 0))
        #expect(ForegroundProposals().proposals(in: speck)?.isEmpty == true)
    }

    @Test("on a transparent picture every opaque group is an object")
    func transparent() throws {
        var picture = PixelBuffer(width: 300, height: 200, hasAlpha: true, fill: (0, 0, 0, 0))
        for y in 50..<150 { for x in 30..<110 { let i = (y * 300 + x) * 4; picture.bytes[i] = 200; picture.bytes[i + 3] = 255 } }
        for y in 60..<120 { for x in 200..<260 { let i = (y * 300 + x) * 4; picture.bytes[i + 2] = 200; picture.bytes[i + 3] = 255 } }
        let proposals = try #require(ForegroundProposals().proposals(in: picture))
        #expect(proposals.count == 2)
        #expect(proposals.contains { Self.iou($0.region, PixelRect(x: 30, y: 50, width: 80, height: 100)) >= 0.9 })
    }
}
