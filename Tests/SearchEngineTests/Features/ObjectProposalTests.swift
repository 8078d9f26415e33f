import ImageOps
@testable import SearchEngine
import TestSupport
import Testing

@Suite("ObjectProposal", .timeLimit(.minutes(10)))
struct ObjectProposalTests {
    /// A 3:1 banner: the picture on the left, a headline (white bars) on the right.
    static func banner(_ picture: PixelBuffer) -> (PixelBuffer, PixelRect) {
        let height = 128, width = 384
        let small = Resampler.resample(picture, to: picture.size.fitting(inside: PixelSize(width: 110, height: 110)), filter: .triangle)
        let x = 12, y = (height - small.height) / 2
        var banner = Canvas.paste(small, at: x, y, width: width, height: height, color: (11, 61, 145))
        banner = Canvas.fill(banner, PixelRect(x: 250, y: 55, width: 100, height: 6), color: (255, 255, 255))
        banner = Canvas.fill(banner, PixelRect(x: 250, y: 70, width: 70, height: 6), color: (255, 255, 255))
        return (banner, PixelRect(x: x, y: y, width: small.width, height: small.height))
    }

    @Test("on a banner the proposal is the picture, not the headline")
    func bannerProposal() throws {
        let photo = try ImageDecoder.decode(fileAt: Repository.images + "/coffee_cup.jpg").pixels
        let (banner, placed) = Self.banner(photo)
        let proposal = try #require(ObjectProposal.region(in: banner))
        #expect(abs(proposal.x - placed.x) <= 1 && abs(proposal.y - placed.y) <= 1)
        #expect(abs(proposal.width - placed.width) <= 2 && abs(proposal.height - placed.height) <= 2)
    }

    @Test("a photograph, a uniform image and a tiny image have no proposal")
    func none() throws {
        let photo = try ImageDecoder.decode(fileAt: Repository.images + "/chelsea_cat.jpg").pixels
        #expect(ObjectProposal.region(in: photo) == nil)
        #expect(ObjectProposal.region(in: PixelBuffer(width: 64, height: 64, hasAlpha: false, fill: (9, 9, 9, 255))) == nil)
        #expect(ObjectProposal.region(in: PixelBuffer(width: 4, height: 4, hasAlpha: false, fill: (9, 9, 9, 255))) == nil)
    }

    @Test("specks smaller than the minimum share are no proposal")
    func specks() {
        var page = PixelBuffer(width: 100, height: 100, hasAlpha: false, fill: (255, 255, 255, 255))
        page = Canvas.fill(page, PixelRect(x: 40, y: 40, width: 5, height: 5), color: (0, 0, 0))
        #expect(ObjectProposal.region(in: page) == nil)
    }
}
