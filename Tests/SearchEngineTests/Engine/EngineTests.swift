import Foundation
import ImageOps
import Testing
@testable import VisualSearch

@Suite("Offline engine over the corpus")
struct EngineTests {
    let engine = Corpus.engine

    @Test("find similar: the image itself first with score 1, scores descending, total = catalog size")
    func similar() throws {
        let response = try engine.search(imageName: "chelsea_cat", parameters: Corpus.parameters())
        #expect(response.status == .ok && response.method == "search")
        #expect(response.total == 102)
        #expect(response.result.first?.imageName == "chelsea_cat")
        #expect(response.result.first?.score == 1)
        let scores = response.result.compactMap(\.score)
        #expect(scores == scores.sorted(by: >))
        #expect(response.requestID?.count == 19)
    }

    @Test("an unknown im_name is imageNotFound")
    func notFound() {
        #expect(throws: VisualSearchError.imageNotFound("no_such")) { try engine.search(imageName: "no_such", parameters: Corpus.parameters()) }
    }

    @Test("recommendations exclude the item itself")
    func recommendations() throws {
        let response = try engine.recommendations(imageName: "coffee_cup", parameters: Corpus.parameters { $0.limit = 20 })
        #expect(!response.result.contains { $0.imageName == "coffee_cup" })
        #expect(response.result.count == 20)
        #expect(response.total == 101)
    }

    @Test("paging: pages are disjoint, in order, and the total does not change")
    func paging() throws {
        let first = try engine.search(imageName: "astronaut", parameters: Corpus.parameters { $0.limit = 5 })
        let second = try engine.search(imageName: "astronaut", parameters: Corpus.parameters { $0.limit = 5; $0.page = 2 })
        let both = try engine.search(imageName: "astronaut", parameters: Corpus.parameters { $0.limit = 10 })
        #expect(first.result + second.result == both.result)
        #expect(first.total == second.total)
        let beyond = try engine.search(imageName: "astronaut", parameters: Corpus.parameters { $0.page = 100 })
        #expect(beyond.result.isEmpty && beyond.total == 102)
        #expect(throws: VisualSearchError.self) { try engine.search(imageName: "astronaut", parameters: Corpus.parameters { $0.page = 0 }) }
        #expect(throws: VisualSearchError.self) { try engine.search(imageName: "astronaut", parameters: Corpus.parameters { $0.limit = 0 }) }
    }

    @Test("fq on a string field is an exact match; several fq combine with AND")
    func stringFilters() throws {
        let response = try engine.search(imageName: "astronaut", parameters: Corpus.parameters {
            $0.filters = [Filter(field: "brand", value: "TuxPaint")]; $0.fields = ["brand"]; $0.limit = 100
        })
        #expect(response.total == 45)
        #expect(response.result.allSatisfy { $0.valueMap?["brand"] == "TuxPaint" })
        let both = try engine.search(imageName: "astronaut", parameters: Corpus.parameters {
            $0.filters = [Filter(field: "brand", value: "TuxPaint"), Filter(field: "subcategory", value: "hats")]; $0.limit = 100
        })
        #expect(both.total == 6)
        let none = try engine.search(imageName: "astronaut", parameters: Corpus.parameters { $0.filters = [Filter(field: "brand", value: "tuxpaint")] })
        #expect(none.total == 0 && none.result.isEmpty)
    }

    @Test("fq on numbers: exact values and inclusive ranges")
    func numericFilters() throws {
        let range = try engine.search(imageName: "astronaut", parameters: Corpus.parameters {
            $0.filters = [Filter(field: "price", value: "10,50")]; $0.fields = ["price"]; $0.limit = 100
        })
        #expect(range.total > 0)
        #expect(range.result.allSatisfy { Double($0.valueMap?["price"] ?? "") .map { (10...50).contains($0) } ?? false })
        let exact = try engine.search(imageName: "astronaut", parameters: Corpus.parameters {
            $0.filters = [Filter(field: "width", value: "512")]; $0.limit = 100
        })
        #expect(exact.result.contains { $0.imageName == "astronaut" })
    }

    @Test("fq on a text field is a full-text match")
    func textFilters() throws {
        let response = try engine.search(imageName: "astronaut", parameters: Corpus.parameters {
            $0.filters = [Filter(field: "description", value: "cat")]; $0.limit = 100
        })
        #expect(response.result.contains { $0.imageName == "chelsea_cat" })
        let words = try engine.search(imageName: "astronaut", parameters: Corpus.parameters {
            $0.filters = [Filter(field: "description", value: "Falcon rocket")]; $0.limit = 100
        })
        #expect(words.result.map(\.imageName) == ["falcon9_rocket"])
    }

    @Test("unknown fields and malformed values are errors; hostile text never reaches SQL",
          arguments: ["brand) OR 1=1 --", "'; DROP TABLE images; --", "im_name", "nope"])
    func hostileFields(field: String) throws {
        #expect(throws: VisualSearchError.unknownField(field)) {
            try engine.search(imageName: "astronaut", parameters: Corpus.parameters { $0.filters = [Filter(field: field, value: "x")] })
        }
        #expect(try engine.catalog.count() == 102)
    }

    @Test("hostile values are plain values", arguments: ["' OR '1'='1", "x\"; DROP TABLE images; --", "\" OR \"", "NEAR(a b)", "*", "brand:*"])
    func hostileValues(value: String) throws {
        let exact = try engine.search(imageName: "astronaut", parameters: Corpus.parameters { $0.filters = [Filter(field: "brand", value: value)] })
        #expect(exact.total == 0)
        _ = try? engine.search(imageName: "astronaut", parameters: Corpus.parameters { $0.filters = [Filter(field: "description", value: value)] })
        #expect(throws: VisualSearchError.self) {
            try engine.search(imageName: "astronaut", parameters: Corpus.parameters { $0.filters = [Filter(field: "price", value: value)] })
        }
        #expect(try engine.catalog.count() == 102)
        #expect(try engine.catalog.integrityCheck() == "ok")
    }

    @Test("score_min and score_max bound the scores; total counts only those")
    func scoreRange() throws {
        let response = try engine.search(imageName: "chelsea_cat", parameters: Corpus.parameters { $0.scoreMin = 0.6; $0.scoreMax = 0.99; $0.limit = 100 })
        #expect(response.result.allSatisfy { ($0.score ?? 0) >= 0.6 && ($0.score ?? 1) <= 0.99 })
        #expect(response.total == response.result.count)
        #expect(!response.result.contains { $0.imageName == "chelsea_cat" })
        let hidden = try engine.search(imageName: "chelsea_cat", parameters: SearchParameters())
        #expect(hidden.result.allSatisfy { $0.score == nil })
    }

    @Test("facets: string values by count (counts only when asked), numeric min/max as integer strings, * for all")
    func facets() throws {
        let response = try engine.search(imageName: "astronaut", parameters: Corpus.parameters {
            $0.facets = ["brand", "price"]; $0.facetsShowCount = true; $0.facetsLimit = 2
        })
        let brand = response.facets?.first { $0.key == "brand" }
        #expect(brand?.items?.count == 2)
        #expect(brand?.items?.first?.count == 45)
        let price = response.facets?.first { $0.key == "price" }
        #expect(price?.range.map { Int($0.min) != nil && Int($0.max) != nil } == true)
        let filtered = try engine.search(imageName: "astronaut", parameters: Corpus.parameters {
            $0.facets = ["brand"]; $0.facetsShowCount = true; $0.filters = [Filter(field: "category", value: "photo")]
        })
        #expect(filtered.facets?.first?.items?.reduce(0) { $0 + ($1.count ?? 0) } == filtered.total)
        let all = try engine.search(imageName: "astronaut", parameters: Corpus.parameters { $0.facets = ["*"] })
        #expect((all.facets?.count ?? 0) >= 10)
        let counts = try engine.search(imageName: "astronaut", parameters: Corpus.parameters { $0.facets = ["brand"] })
        #expect(counts.facets?.first?.items?.allSatisfy { $0.count == nil } == true)
    }

    @Test("fl returns the named fields; get_all_fl every field; no value_map otherwise")
    func fieldLists() throws {
        let some = try engine.search(imageName: "astronaut", parameters: Corpus.parameters { $0.fields = ["brand", "price"] })
        #expect(some.result.first?.valueMap.map { Set($0.keys) } == ["brand", "price"])
        let all = try engine.search(imageName: "astronaut", parameters: Corpus.parameters { $0.returnsAllFields = true })
        #expect((all.result.first?.valueMap?.count ?? 0) >= 10)
        let none = try engine.search(imageName: "astronaut", parameters: Corpus.parameters())
        #expect(none.result.first?.valueMap == nil)
    }

    @Test("upload search: a recompressed crop finds its source; the im_id can be reused")
    func upload() throws {
        let decoded = try ImageDecoder.decode(Corpus.bytes("coffee_cup.jpg"), source: "coffee").pixels
        let crop = try ImageProcessors.Crop(PixelRect(x: 60, y: 40, width: 480, height: 320)).process(decoded)
        let query = try ImageEncoders.JPEG(quality: JPEGQuality(0.4)).encode(crop)
        let response = try engine.uploadSearch(.bytes(query), parameters: Corpus.parameters())
        #expect(response.result.first?.imageName == "coffee_cup")
        #expect(response.method == "uploadsearch")
        let imageID = try #require(response.imageID)
        let again = try engine.uploadSearch(.imageID(imageID), parameters: Corpus.parameters())
        #expect(again.result.map(\.imageName) == response.result.map(\.imageName))
        #expect(throws: VisualSearchError.self) { try engine.uploadSearch(.imageID("../../etc/passwd"), parameters: Corpus.parameters()) }
    }

    @Test("upload search inside a box finds the image pasted in a larger canvas; a point works too")
    func boxSearch() throws {
        let cat = try ImageDecoder.decode(Corpus.bytes("chelsea_cat.jpg"), source: "cat").pixels  // 451×300
        var canvas = PixelBuffer(width: 1000, height: 800, hasAlpha: false, fill: (20, 200, 40, 255))
        for y in 0..<cat.height {
            for x in 0..<cat.width {
                let source = (y * cat.width + x) * 4, target = ((y + 300) * canvas.width + (x + 400)) * 4
                for c in 0..<4 { canvas.bytes[target + c] = cat.bytes[source + c] }
            }
        }
        let jpeg = try ImageEncoders.JPEG(quality: JPEGQuality(0.9)).encode(canvas)
        let boxed = try engine.uploadSearch(.bytes(jpeg), box: PixelBox(x1: 400, y1: 300, x2: 851, y2: 600), parameters: Corpus.parameters())
        #expect(boxed.result.first?.imageName == "chelsea_cat")
        let point = try engine.uploadSearch(.bytes(jpeg), box: PixelBox(x1: 620, y1: 450, x2: 620, y2: 450), parameters: Corpus.parameters())
        #expect(point.total == 102)
        #expect(throws: VisualSearchError.self) {
            try engine.uploadSearch(.bytes(jpeg), box: PixelBox(x1: 5000, y1: 0, x2: 6000, y2: 10), parameters: Corpus.parameters())
        }
    }

    @Test("uploads that are not images are typed errors", arguments: [[UInt8](), Array("not an image".utf8), [0xFF, 0xD8, 0xFF]])
    func badUploads(bytes: [UInt8]) {
        #expect(throws: VisualSearchError.self) { try engine.uploadSearch(.bytes(bytes), parameters: Corpus.parameters()) }
    }

    @Test("file:// URLs work; other schemes are refused")
    func urls() throws {
        let response = try engine.uploadSearch(.url("file://" + Corpus.images + "/astronaut.jpg"), parameters: Corpus.parameters())
        #expect(response.result.first?.imageName == "astronaut")
        #expect(throws: VisualSearchError.self) { try engine.uploadSearch(.url("ftp://example.com/a.jpg"), parameters: Corpus.parameters()) }
    }

    @Test("colour search ranks images by how much of them is near the colour")
    func colour() throws {
        let response = try engine.colorSearch("#A32B10", parameters: Corpus.parameters { $0.limit = 5 })
        #expect(response.result.contains { $0.imageName == "coffee_cup" })
        let scores = response.result.compactMap(\.score)
        #expect(scores == scores.sorted(by: >) && scores.allSatisfy { (0...1).contains($0) })
        #expect(throws: VisualSearchError.self) { try engine.colorSearch("red", parameters: Corpus.parameters()) }
    }

    @Test("discover search: one object per box (or the whole image), and the response says there is no detector")
    func discover() throws {
        let bytes = Corpus.bytes("astronaut.jpg")
        let whole = try engine.discoverSearch(.bytes(bytes), parameters: Corpus.parameters())
        #expect(whole.objects?.count == 1 && whole.objects?.first?.type == "image")
        #expect(whole.objects?.first?.result.first?.imageName == "astronaut")
        #expect(whole.offlineNote == VisualSearchEngine.offlineDetectionNote)
        let two = try engine.discoverSearch(.bytes(bytes), boxes: [PixelBox(x1: 0, y1: 0, x2: 256, y2: 256), PixelBox(x1: 300, y1: 300, x2: 300, y2: 300)],
                                            parameters: Corpus.parameters())
        #expect(two.objects?.map(\.type) == ["box", "point"])
    }

    @Test("ProductSearch shapes: product_id, main_image_url, data; recommendations carry product_info")
    func productSearch() throws {
        let byImage = try engine.productSearch(byImage: .bytes(Corpus.bytes("grace_hopper.jpg")), parameters: Corpus.parameters { $0.fields = ["brand"] })
        #expect(byImage.method == "product/search_by_image")
        #expect(byImage.result?.first?.productID == "grace_hopper")
        #expect(byImage.result?.first?.data?["brand"] == .string("matplotlib"))
        #expect(byImage.result?.first?.mainImageURL?.hasSuffix("grace_hopper.jpg") == true)
        let recs = try engine.productRecommendations(productID: "grace_hopper", parameters: Corpus.parameters())
        #expect(recs.productInfo?.productID == "grace_hopper")
        #expect(recs.result?.contains { $0.productID == "grace_hopper" } == false)
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(recs)) as? [String: Any]
        #expect(json?["reqid"] != nil && json?["error"] == nil)
    }

    @Test("dedup drops near-identical results")
    func dedup() throws {
        let plain = try engine.search(imageName: "oc_quay_sign_01", parameters: Corpus.parameters { $0.limit = 3 })
        let deduped = try engine.search(imageName: "oc_quay_sign_01", parameters: Corpus.parameters { $0.limit = 3; $0.deduplicates = true; $0.dedupScoreThreshold = 0.95 })
        // oc_quay_sign_01 and oc_quay_sign_01_b are near copies: dedup keeps only one of them.
        #expect(plain.result.prefix(2).map(\.imageName).sorted() == ["oc_quay_sign_01", "oc_quay_sign_01_b"])
        #expect(deduped.result.filter { $0.imageName.hasPrefix("oc_quay_sign_01") }.count == 1)
    }
}
