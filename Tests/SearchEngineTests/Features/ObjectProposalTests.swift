import ImageOps
@testable import SearchEngine
import TestSupport
import Testing

@Suite("ObjectProposal", .timeLimit(.minutes(10)))
struct ObjectProposalTests {

    @Test("on a banner the proposal is the picture, not the headline")
    func bannerProposal() throws {
        let photo = try ImageDecoder.decode(fileAt: Repository.images + "/coffee_cup.jpg").pixels
        let (banner, placed) = Canvas.banner(photo)
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
