import Testing
@testable import ImageOps

@Suite("PixelBox")
struct PixelBoxTests {
    let size = PixelSize(width: 200, height: 100)

    @Test("parses x1,y1,x2,y2 with spaces")
    func parsing() throws {
        #expect(try PixelBox(parsing: "10, 20,30 ,40") == PixelBox(x1: 10, y1: 20, x2: 30, y2: 40))
    }

    @Test("rejects malformed text and reversed corners", arguments: ["1,2,3", "a,b,c,d", "1,2,3,4,5", "", "5,0,4,10", "0,5,10,4"])
    func rejects(text: String) {
        #expect(throws: ImageOpsError.self) { try PixelBox(parsing: text) }
    }

    @Test("a box inside the image selects exactly its pixels (x2, y2 exclusive)")
    func inside() throws {
        #expect(try PixelBox(x1: 10, y1: 20, x2: 110, y2: 70).region(in: size) == PixelRect(x: 10, y: 20, width: 100, height: 50))
    }

    @Test("a box past the edges is clamped to the image")
    func clamped() throws {
        #expect(try PixelBox(x1: -5, y1: -5, x2: 500, y2: 500).region(in: size) == PixelRect(x: 0, y: 0, width: 200, height: 100))
        #expect(try PixelBox(x1: 190, y1: 90, x2: 210, y2: 110).region(in: size) == PixelRect(x: 190, y: 90, width: 10, height: 10))
    }

    @Test("a box entirely outside the image is an error")
    func outside() {
        #expect(throws: ImageOpsError.self) { try PixelBox(x1: 300, y1: 0, x2: 400, y2: 50).region(in: size) }
    }

    @Test("a box starting at Int.max is an error, not an overflow trap (fuzz finding, Fuzz/Regressions/query)")
    func extremeCoordinates() {
        #expect(throws: ImageOpsError.self) { try PixelBox(x1: .max, y1: 0, x2: .max, y2: 5).region(in: size) }
        #expect(throws: ImageOpsError.self) { try PixelBox(x1: 0, y1: .max, x2: 5, y2: .max).region(in: size) }
    }

    @Test("a zero-size box is a point: a neighbourhood of a quarter of the short side around it, kept inside")
    func point() throws {
        let box = PixelBox(x1: 100, y1: 50, x2: 100, y2: 50)
        #expect(box.isPoint)
        #expect(try box.region(in: size) == PixelRect(x: 88, y: 38, width: 25, height: 25))
        #expect(try PixelBox(x1: 0, y1: 0, x2: 0, y2: 0).region(in: size) == PixelRect(x: 0, y: 0, width: 25, height: 25))
        #expect(try PixelBox(x1: 200, y1: 100, x2: 200, y2: 100).region(in: size) == PixelRect(x: 175, y: 75, width: 25, height: 25))
    }

    @Test("scaling truncates each coordinate, as the ViSearch SDKs do")
    func scaling() {
        #expect(PixelBox(x1: 10, y1: 15, x2: 333, y2: 999).scaled(by: 0.5) == PixelBox(x1: 5, y1: 7, x2: 166, y2: 499))
    }
}
