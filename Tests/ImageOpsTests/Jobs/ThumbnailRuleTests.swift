import Testing
@testable import ImageOps

@Suite("Thumbnail rule (Rezolve)")
struct ThumbnailRuleTests {
    static func sizes(_ text: String) -> [PixelSize] {
        text.split(separator: " ").map { part in
            let values = part.split(separator: "x").compactMap { Int($0) }
            return PixelSize(width: values[0], height: values[1])
        }
    }

    @Test("maximum-dimension rule: one size per N below the longer side, aspect kept, rounded half up",
          arguments: [
              // exactly at the sizes: M > N is required, so M == N gives no N-sized thumbnail
              (PixelSize(width: 400, height: 300), ""),
              (PixelSize(width: 401, height: 300), "400x299"),
              (PixelSize(width: 800, height: 800), "400x400"),
              (PixelSize(width: 801, height: 800), "400x400 800x799"),
              (PixelSize(width: 1200, height: 900), "400x300 800x600"),
              (PixelSize(width: 1600, height: 1200), "400x300 800x600 1200x900"),
              (PixelSize(width: 1601, height: 1200), "400x300 800x600 1200x899 1600x1199"),
              // tall, wide, square
              (PixelSize(width: 2400, height: 3301), "291x400 582x800 872x1200 1163x1600"),
              (PixelSize(width: 4000, height: 1000), "400x100 800x200 1200x300 1600x400"),
              (PixelSize(width: 5000, height: 5000), "400x400 800x800 1200x1200 1600x1600"),
              // degenerate strips keep at least one pixel
              (PixelSize(width: 1, height: 20000), "1x400 1x800 1x1200 1x1600"),
              (PixelSize(width: 20000, height: 1), "400x1 800x1 1200x1 1600x1"),
              (PixelSize(width: 100, height: 100), ""),
          ])
    func maxDimension(source: PixelSize, expected: String) {
        #expect(ThumbnailRule.rezolve.thumbnails(for: source) == Self.sizes(expected))
    }

    @Test("width fit reproduces the rule document's example names 400x550 … 1600x2201")
    func widthFitExample() {
        let rule = ThumbnailRule(fit: .width)
        let names = rule.thumbnails(for: PixelSize(width: 2400, height: 3301))
            .map { ThumbnailRule.fileName(stem: "Image", size: $0, extension: "png") }
        #expect(names == ["Image_thumb_400x550.png", "Image_thumb_800x1100.png",
                          "Image_thumb_1200x1651.png", "Image_thumb_1600x2201.png"])
    }

    @Test("width fit never enlarges: only sizes below the width")
    func widthFitShrinksOnly() {
        #expect(ThumbnailRule(fit: .width).thumbnails(for: PixelSize(width: 500, height: 3000)) == [PixelSize(width: 400, height: 2400)])
    }

    @Test("custom sizes are sorted and deduplicated")
    func customSizes() {
        let rule = ThumbnailRule(sizes: [800, 100, 800, 0, -5])
        #expect(rule.sizes == [100, 800])
    }

    @Test("thumbnail names are recognised so a job never eats its own output",
          arguments: [("a_thumb_400x300.jpg", true), ("a_thumb_400x300", true), ("a_thumb_x.jpg", false),
                      ("thumbnail.jpg", false), ("a_thumb_400.jpg", false)])
    func thumbnailNames(name: String, expected: Bool) {
        #expect(ThumbnailRule.isThumbnailName(name) == expected)
    }
}
