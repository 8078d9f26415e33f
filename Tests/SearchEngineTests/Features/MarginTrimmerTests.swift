import ImageOps
@testable import SearchEngine
import TestSupport
import Testing

@Suite("MarginTrimmer", .timeLimit(.minutes(10)))
struct MarginTrimmerTests {
    static func cat() throws -> PixelBuffer {
        try ImageDecoder.decode(fileAt: Repository.images + "/chelsea_cat.jpg").pixels
    }

    @Test("a border of any colour around a photo is trimmed back to the photo", arguments: [
        (UInt8(0), UInt8(0), UInt8(0)), (255, 255, 255), (30, 58, 138), (245, 222, 179), (178, 34, 34),
    ])
    func border(color: (UInt8, UInt8, UInt8)) throws {
        let photo = try Self.cat()
        let framed = Canvas.paste(photo, at: 17, 23, width: photo.width + 34, height: photo.height + 46, color: color)
        #expect(MarginTrimmer.content(of: framed) == PixelRect(x: 17, y: 23, width: photo.width, height: photo.height))
    }

    @Test("letterbox bars on one axis go; the other axis is left alone")
    func letterbox() throws {
        let photo = try Self.cat()
        let boxed = Canvas.paste(photo, at: 0, 40, width: photo.width, height: photo.height + 80, color: (0, 0, 0))
        #expect(MarginTrimmer.content(of: boxed) == PixelRect(x: 0, y: 40, width: photo.width, height: photo.height))
    }

    @Test("a drawing's white page goes with the border around it, in one call")
    func drawingInBorder() {
        let drawing = PixelBuffer(width: 30, height: 20, hasAlpha: false, fill: (200, 40, 40, 255))
        let page = Canvas.paste(drawing, at: 25, 15, width: 80, height: 50, color: (255, 255, 255))
        let bordered = Canvas.paste(page, at: 8, 8, width: 96, height: 66, color: (40, 160, 40))
        #expect(MarginTrimmer.content(of: bordered) == PixelRect(x: 33, y: 23, width: 30, height: 20))
    }

    @Test("a photo without margins, a uniform image and a fully transparent one are kept whole")
    func keptWhole() throws {
        let photo = try Self.cat()
        #expect(MarginTrimmer.content(of: photo) == PixelRect(x: 0, y: 0, width: photo.width, height: photo.height))
        let grey = PixelBuffer(width: 50, height: 40, hasAlpha: false, fill: (128, 128, 128, 255))
        #expect(MarginTrimmer.content(of: grey) == PixelRect(x: 0, y: 0, width: 50, height: 40))
        let clear = PixelBuffer(width: 50, height: 40, hasAlpha: true, fill: (0, 0, 0, 0))
        #expect(MarginTrimmer.content(of: clear) == PixelRect(x: 0, y: 0, width: 50, height: 40))
    }

    @Test("a cut-out on transparent margins is trimmed to its shape's box, as the same cut-out flattened on white is")
    func transparentCutOut() {
        // A red disk with a blue band through it, on transparency: rows through it are part
        // transparent, part red, and must not count as margin.
        var cutOut = PixelBuffer(width: 60, height: 60, hasAlpha: true, fill: (0, 0, 0, 0))
        for y in 0..<60 {
            for x in 0..<60 where (x - 30) * (x - 30) + (y - 28) * (y - 28) <= 15 * 15 {
                let index = (y * 60 + x) * 4
                let blue = (26...29).contains(y)
                cutOut.bytes[index] = blue ? 20 : 220; cutOut.bytes[index + 1] = 20; cutOut.bytes[index + 2] = blue ? 220 : 20
                cutOut.bytes[index + 3] = 255
            }
        }
        let disk = PixelRect(x: 15, y: 13, width: 31, height: 31)
        let content = MarginTrimmer.content(of: cutOut)
        // The disk's outermost rows and columns hold a pixel or two (under 2% of a line): they may go.
        #expect(disk.contains(content) && content.width >= 27 && content.height >= 27, "\(content)")
        #expect(MarginTrimmer.content(of: cutOut.flattened()) == content)
    }

    @Test("a drawing in flat colours is never trimmed away")
    func flatDrawing() {
        let drawing = PixelBuffer(width: 30, height: 20, hasAlpha: false, fill: (200, 40, 40, 255))
        let page = Canvas.paste(drawing, at: 25, 15, width: 80, height: 50, color: (255, 255, 255))
        #expect(MarginTrimmer.content(of: page) == PixelRect(x: 25, y: 15, width: 30, height: 20))
    }

    @Test("a line with a few odd pixels (JPEG noise, a speck) is still margin; one with a stripe of picture is not")
    func tolerance() {
        var image = PixelBuffer(width: 100, height: 60, hasAlpha: false, fill: (255, 255, 255, 255))
        image = Canvas.fill(image, PixelRect(x: 20, y: 20, width: 60, height: 20), color: (10, 10, 10))
        image = Canvas.fill(image, PixelRect(x: 3, y: 2, width: 1, height: 1), color: (0, 0, 0))  // 1% of row 2
        #expect(MarginTrimmer.content(of: image) == PixelRect(x: 20, y: 20, width: 60, height: 20))
        image = Canvas.fill(image, PixelRect(x: 0, y: 5, width: 5, height: 1), color: (0, 0, 0))  // 5% of row 5
        #expect(MarginTrimmer.content(of: image).y == 5)
    }
}
