import Foundation
import ImageOps
import SearchEngine
import TestSupport
import Testing
import VisualSearch

/// Every ViSearch and ProductSearch endpoint of the offline engine, through
/// the ``VisualSearchService`` API, over the corpus (102 images with metadata).
@Suite("VisualSearchEngine over the corpus", .timeLimit(.minutes(10)))
struct EngineTests {
    /// An engine over the corpus in memory (no database: the engine's own behaviour; the stores' parity is CatalogStoresTests').
    static func engine(_ configure: (inout VisualSearchEngine.Configuration) -> Void = { _ in }) async -> VisualSearchEngine {
        try! await Corpus.memoryEngine(configure)  // test setup: a failure here fails every test loudly
    }

    static func search(_ name: String, _ configure: (inout SearchParameters) -> Void = { _ in }) async throws -> SearchResponse {
        try await engine().search(SearchRequest(imageName: name, parameters: Corpus.parameters(configure)))
    }

    // MARK: - /search

    @Test("find similar: the image itself first with score 1, scores descending, total = catalog size")
    func similar() async throws {
        let response = try await Self.search("chelsea_cat")
        #expect(response.status == .ok && response.method == "search" && response.error.isEmpty)
        #expect(response.total == 102 && response.page == 1 && response.limit == 10)
        #expect(response.result.count == 10)
        #expect(response.result.first?.imageName == "chelsea_cat")
        #expect(response.result.first?.score == 1)
        let scores = response.result.compactMap(\.score)
        #expect(scores.count == 10 && scores == scores.sorted(by: >))
        #expect(scores.allSatisfy { (0...1).contains($0) })
        #expect(response.requestID?.count == 19)
        #expect(response.imageID == nil && response.facets == nil)
    }

    @Test("an unknown im_name is imageNotFound")
    func notFound() async {
        let engine = await Self.engine()
        await #expect(throws: VisualSearchError.imageNotFound("no_such")) {
            try await engine.search(SearchRequest(imageName: "no_such"))
        }
        await #expect(throws: VisualSearchError.imageNotFound("no_such")) {
            try await engine.recommendations(RecommendationsRequest(imageName: "no_such"))
        }
        await #expect(throws: VisualSearchError.imageNotFound("no_such")) {
            try await engine.productRecommendations(ProductRecommendationsRequest(productID: "no_such"))
        }
    }

    @Test("paging: pages are disjoint, in order, and the total does not change; invalid pages and limits are errors")
    func paging() async throws {
        let first = try await Self.search("astronaut") { $0.limit = 5 }
        let second = try await Self.search("astronaut") { $0.limit = 5; $0.page = 2 }
        let both = try await Self.search("astronaut") { $0.limit = 10 }
        #expect(first.result + second.result == both.result)
        #expect(first.total == 102 && second.total == 102)
        #expect(Set(first.result.map(\.imageName)).isDisjoint(with: second.result.map(\.imageName)))
        let beyond = try await Self.search("astronaut") { $0.page = 100 }
        #expect(beyond.result.isEmpty && beyond.total == 102 && beyond.page == 100)
        let farBeyond = try await Self.search("astronaut") { $0.page = Int.max; $0.limit = SearchParameters.maximumLimit }
        #expect(farBeyond.result.isEmpty && farBeyond.total == 102)
        for configure in [{ (p: inout SearchParameters) in p.page = 0 }, { $0.limit = 0 }, { $0.limit = 1001 }, { $0.scoreMin = 2 }] {
            await #expect(throws: VisualSearchError.self) { try await Self.search("astronaut", configure) }
        }
    }

    // MARK: - fq, fl, facets, scores

    @Test("fq on a string field is an exact match; several fq combine with AND")
    func stringFilters() async throws {
        let response = try await Self.search("astronaut") {
            $0.filters = [Filter(field: "brand", value: "TuxPaint")]; $0.fields = ["brand"]; $0.limit = 100
        }
        #expect(response.total == 45 && response.result.count == 45)
        #expect(response.result.allSatisfy { $0.valueMap?["brand"] == "TuxPaint" })
        let both = try await Self.search("astronaut") {
            $0.filters = [Filter(field: "brand", value: "TuxPaint"), Filter(field: "subcategory", value: "hats")]; $0.limit = 100
        }
        #expect(both.total == 6)
        #expect(both.result.allSatisfy { $0.imageName.hasPrefix("tp_clothes_hats_") })
        let none = try await Self.search("astronaut") { $0.filters = [Filter(field: "brand", value: "tuxpaint")] }
        #expect(none.total == 0 && none.result.isEmpty)
    }

    @Test("fq on numbers: exact values and inclusive ranges")
    func numericFilters() async throws {
        let range = try await Self.search("astronaut") {
            $0.filters = [Filter(field: "price", value: "10,50")]; $0.fields = ["price"]; $0.limit = 100
        }
        #expect(range.total > 0 && range.total < 102 && range.result.count == range.total)
        #expect(range.result.allSatisfy { Double($0.valueMap?["price"] ?? "").map { (10...50).contains($0) } ?? false })
        let exact = try await Self.search("astronaut") {
            $0.filters = [Filter(field: "width", value: "512")]; $0.fields = ["width"]; $0.limit = 100
        }
        #expect(exact.result.contains { $0.imageName == "astronaut" })
        #expect(exact.result.allSatisfy { $0.valueMap?["width"] == "512" })
        let inclusive = try await Self.search("astronaut") { $0.filters = [Filter(field: "price", value: "230.51,230.51")] }
        #expect(inclusive.result.map(\.imageName) == ["astronaut"])
    }

    @Test("fq on a text field is a full-text match by words")
    func textFilters() async throws {
        let cat = try await Self.search("astronaut") { $0.filters = [Filter(field: "description", value: "cat")]; $0.limit = 100 }
        #expect(cat.result.contains { $0.imageName == "chelsea_cat" })
        let words = try await Self.search("astronaut") { $0.filters = [Filter(field: "description", value: "Falcon rocket")]; $0.limit = 100 }
        #expect(words.result.map(\.imageName) == ["falcon9_rocket"])
        let reversed = try await Self.search("astronaut") { $0.filters = [Filter(field: "description", value: "ROCKET falcon")]; $0.limit = 100 }
        #expect(reversed.result.map(\.imageName) == ["falcon9_rocket"])
    }

    @Test("an unknown field is unknownField listing the catalog's fields; hostile names never reach SQL",
          arguments: ["brand) OR 1=1 --", "'; DROP TABLE images; --", "im_name", "nope"])
    func hostileFields(field: String) async throws {
        let engine = await Self.engine()
        let known = try await engine.catalog.schema().fields.keys.sorted()
        #expect(known.contains("brand") && known.count >= 10)
        await #expect(throws: VisualSearchError.unknownField(field, known: known)) {
            try await engine.search(SearchRequest(imageName: "astronaut", parameters: Corpus.parameters { $0.filters = [Filter(field: field, value: "x")] }))
        }
        #expect(try await engine.catalog.count() == 102)
    }

    @Test("hostile values are plain values", arguments: ["' OR '1'='1", "x\"; DROP TABLE images; --", "\" OR \"", "NEAR(a b)", "*", "brand:*"])
    func hostileValues(value: String) async throws {
        let engine = await Self.engine()
        let exact = try await engine.search(SearchRequest(imageName: "astronaut", parameters: Corpus.parameters { $0.filters = [Filter(field: "brand", value: value)] }))
        #expect(exact.total == 0)
        do {
            let text = try await engine.search(SearchRequest(imageName: "astronaut", parameters: Corpus.parameters {
                $0.filters = [Filter(field: "description", value: value)]
            }))
            #expect(text.total < 102)
        } catch {
            guard case .invalidParameter(name: "fq", _) = error else {
                Issue.record("\(value.debugDescription) on a text field: \(error)")
                return
            }
        }
        await #expect(throws: VisualSearchError.self) {
            try await engine.search(SearchRequest(imageName: "astronaut", parameters: Corpus.parameters { $0.filters = [Filter(field: "price", value: value)] }))
        }
        #expect(try await engine.catalog.count() == 102)
        #expect(try await (engine.catalog as? any CatalogAdmin)?.integrityCheck() == "ok")
    }

    @Test("score_min and score_max bound the scores; total counts only those; scores only with score=true")
    func scoreRange() async throws {
        let response = try await Self.search("chelsea_cat") { $0.scoreMin = 0.6; $0.scoreMax = 0.99; $0.limit = 100 }
        #expect(!response.result.isEmpty)
        #expect(response.result.allSatisfy { ($0.score ?? 0) >= 0.6 && ($0.score ?? 1) <= 0.99 })
        #expect(response.total == response.result.count)
        #expect(!response.result.contains { $0.imageName == "chelsea_cat" })
        let hidden = try await Self.engine().search(SearchRequest(imageName: "chelsea_cat"))
        #expect(hidden.result.count == 10 && hidden.result.allSatisfy { $0.score == nil })
    }

    @Test("facets: values by count (counts only when asked), numeric min/max as integer strings, * for all, scoped to the matches")
    func facets() async throws {
        let response = try await Self.search("astronaut") { $0.facets = ["brand", "price"]; $0.facetsShowCount = true; $0.facetsLimit = 2 }
        let brand = try #require(response.facets?.first { $0.key == "brand" })
        #expect(brand.items == [Facet.Item(value: "OpenClipart", count: 45), Facet.Item(value: "TuxPaint", count: 45)])
        let price = try #require(response.facets?.first { $0.key == "price" }?.range)
        #expect(Int(price.min) != nil && Int(price.max) != nil && Int(price.min)! < Int(price.max)!)

        let filtered = try await Self.search("astronaut") {
            $0.facets = ["brand"]; $0.facetsShowCount = true; $0.filters = [Filter(field: "category", value: "photo")]
        }
        #expect(filtered.total == 12)
        #expect(filtered.facets?.first?.items?.reduce(0) { $0 + ($1.count ?? 0) } == filtered.total)

        let scored = try await Self.search("chelsea_cat") { $0.facets = ["brand"]; $0.facetsShowCount = true; $0.scoreMin = 0.6 }
        #expect(scored.facets?.first?.items?.reduce(0) { $0 + ($1.count ?? 0) } == scored.total)

        let all = try await Self.search("astronaut") { $0.facets = ["*"] }
        let known = try await Self.engine().catalog.schema().fields.keys.sorted()
        #expect(all.facets?.map(\.key) == known)
        let counts = try await Self.search("astronaut") { $0.facets = ["brand"] }
        #expect(counts.facets?.first?.items?.isEmpty == false)
        #expect(counts.facets?.first?.items?.allSatisfy { $0.count == nil } == true)
    }

    @Test("a facet on an unknown field is a warning; the results still come")
    func facetWarning() async throws {
        let response = try await Self.search("astronaut") { $0.facets = ["nope"] }
        #expect(response.status == .warning)
        #expect(response.error.count == 1 && response.error[0].contains("nope"))
        #expect(response.result.count == 10 && response.facets == nil)
    }

    @Test("fl returns the named fields; get_all_fl every field; no value_map otherwise")
    func fieldLists() async throws {
        let some = try await Self.search("astronaut") { $0.fields = ["brand", "price"] }
        #expect(some.result.first?.valueMap == ["brand": "scikit-image", "price": "230.51"])
        #expect(some.result.allSatisfy { $0.valueMap.map { Set($0.keys).isSubset(of: ["brand", "price"]) } == true })
        let all = try await Self.search("astronaut") { $0.returnsAllFields = true }
        #expect((all.result.first?.valueMap?.count ?? 0) >= 10)
        let none = try await Self.search("astronaut")
        #expect(none.result.allSatisfy { $0.valueMap == nil })
    }

    @Test("dedup drops near-identical results")
    func dedup() async throws {
        let plain = try await Self.search("oc_quay_sign_01") { $0.limit = 3 }
        let deduped = try await Self.search("oc_quay_sign_01") { $0.limit = 3; $0.deduplicates = true; $0.dedupScoreThreshold = 0.95 }
        // oc_quay_sign_01 and oc_quay_sign_01_b are near copies: dedup keeps only one of them.
        #expect(plain.result.prefix(2).map(\.imageName).sorted() == ["oc_quay_sign_01", "oc_quay_sign_01_b"])
        #expect(deduped.result.filter { $0.imageName.hasPrefix("oc_quay_sign_01") }.count == 1)
        #expect(deduped.result.count == 3)
    }

    // MARK: - /recommendations

    @Test("recommendations: similar items without the item itself, deduplicated")
    func recommendations() async throws {
        let engine = await Self.engine()
        let response = try await engine.recommendations(RecommendationsRequest(imageName: "coffee_cup", parameters: Corpus.parameters { $0.limit = 20 }))
        #expect(response.method == "recommendations" && response.status == .ok)
        #expect(!response.result.contains { $0.imageName == "coffee_cup" })
        #expect(response.result.count == 20 && response.total == 101)

        // The same as a deduplicating search without the item.
        let search = try await engine.search(SearchRequest(imageName: "coffee_cup", parameters: Corpus.parameters { $0.limit = 21; $0.deduplicates = true }))
        #expect(response.result == Array(search.result.filter { $0.imageName != "coffee_cup" }.prefix(20)))

        // Dedup is always on: at threshold 0 everything is a copy of the best result.
        let strict = try await engine.recommendations(RecommendationsRequest(imageName: "coffee_cup", parameters: Corpus.parameters { $0.dedupScoreThreshold = 0 }))
        #expect(strict.result.count == 1)
        let plainSearch = try await engine.search(SearchRequest(imageName: "coffee_cup", parameters: Corpus.parameters { $0.dedupScoreThreshold = 0 }))
        #expect(plainSearch.result.count == 10)
    }

    // MARK: - /uploadsearch

    @Test("upload search with bytes: a recompressed crop finds its source; its im_id can be reused")
    func uploadBytes() async throws {
        let engine = await Self.engine()
        let decoded = try ImageDecoder.decode(Repository.bytes("coffee_cup.jpg"), source: "coffee").pixels
        let crop = try ImageProcessors.Crop(PixelRect(x: 60, y: 40, width: 480, height: 320)).process(decoded)
        let query = try ImageEncoders.JPEG(quality: JPEGQuality(0.4)).encode(crop)
        let response = try await engine.uploadSearch(UploadSearchRequest(ImageQuery(.bytes(query)), parameters: Corpus.parameters()))
        #expect(response.method == "uploadsearch" && response.total == 102)
        #expect(response.result.first?.imageName == "coffee_cup")
        let imageID = try #require(response.imageID)

        let again = try await engine.uploadSearch(UploadSearchRequest(ImageQuery(.imageID(imageID)), parameters: Corpus.parameters()))
        #expect(again.result == response.result)
        #expect(again.imageID == imageID)
        await #expect(throws: VisualSearchError.self) {
            try await engine.uploadSearch(UploadSearchRequest(ImageQuery(.imageID("../../etc/passwd"))))
        }
    }

    @Test("upload search with a local file, as it is or prepared like an SDK upload")
    func uploadFile() async throws {
        let engine = await Self.engine()
        for preparation in [UploadSettings.standard, nil] {
            let request = UploadSearchRequest(ImageQuery(.file(Repository.images + "/grace_hopper.jpg"), preparation: preparation),
                                              parameters: Corpus.parameters())
            do {
                let response = try await engine.uploadSearch(request)
                #expect(response.result.first?.imageName == "grace_hopper")
                #expect(preparation != nil, "an unprepared local file was read though the engine reads no local files")
            } catch {
                // Unprepared, the file is read by the engine, under its image policy (uploads only by default).
                #expect(preparation == nil && error.message.contains("`ImageSourcePolicy.imageRoots`"), "\(error)")
            }
        }
    }

    @Test("upload search inside a box finds the image pasted in a larger canvas (without one, it scores far lower unless trimming isolates it); a point works too; a box off the image is an error")
    func boxSearch() async throws {
        let engine = await Self.engine()
        let cat = try ImageDecoder.decode(Repository.bytes("chelsea_cat.jpg"), source: "cat").pixels  // 451×300
        // A noisy green canvas (nothing uniform to trim), the cat against its right edge (no object
        // proposal takes a region touching an edge): the box is what isolates it.
        let canvas = Canvas.paste(cat, onto: Canvas.noise(width: 1000, height: 800, base: (10, 180, 30)), at: 549, 300)
        let jpeg = try ImageEncoders.JPEG(quality: JPEGQuality(0.9)).encode(canvas)
        let boxed = try await engine.uploadSearch(UploadSearchRequest(ImageQuery(.bytes(jpeg), box: PixelBox(x1: 549, y1: 300, x2: 1000, y2: 600)),
                                                                      parameters: Corpus.parameters()))
        #expect(boxed.result.first?.imageName == "chelsea_cat")
        // The control: without the box the green canvas weighs in and the cat scores far lower.
        let whole = try await engine.uploadSearch(UploadSearchRequest(ImageQuery(.bytes(jpeg)), parameters: Corpus.parameters { $0.limit = 102 }))
        let catAlone = try #require(boxed.result.first { $0.imageName == "chelsea_cat" }?.score)
        let catInCanvas = try #require(whole.result.first { $0.imageName == "chelsea_cat" }?.score)
        #expect(catAlone > catInCanvas + 0.1)
        // On a plain canvas the margins are trimmed (and the proposal agrees): found without a box.
        let placed = Canvas.paste(cat, at: 300, 300, width: 1000, height: 800, color: (20, 200, 40))
        let proposed = try await engine.uploadSearch(UploadSearchRequest(
            ImageQuery(.bytes(try ImageEncoders.JPEG(quality: JPEGQuality(0.9)).encode(placed))), parameters: Corpus.parameters()))
        #expect(proposed.result.first?.imageName == "chelsea_cat")
        let point = try await engine.uploadSearch(UploadSearchRequest(ImageQuery(.bytes(jpeg), box: PixelBox(x1: 620, y1: 450, x2: 620, y2: 450)),
                                                                      parameters: Corpus.parameters()))
        #expect(point.total == 102 && point.result.count == 10)
        await #expect(throws: VisualSearchError.self) {
            try await engine.uploadSearch(UploadSearchRequest(ImageQuery(.bytes(jpeg), box: PixelBox(x1: 5000, y1: 0, x2: 6000, y2: 10))))
        }
    }

    @Test("uploads that are not images are typed image errors", arguments: [[UInt8](), Array("not an image".utf8), [0xFF, 0xD8, 0xFF]])
    func badUploads(bytes: [UInt8]) async {
        let engine = await Self.engine()
        await #expect {
            try await engine.uploadSearch(UploadSearchRequest(ImageQuery(.bytes(bytes)), parameters: Corpus.parameters()))
        } throws: { error in
            guard case VisualSearchError.image = error else { return false }
            return true
        }
    }

    @Test("im_url file:// works under an image root; without one it is refused; other schemes are refused")
    func urls() async throws {
        let rooted = await Self.engine { $0.imageSources = ImageSourcePolicy(imageRoots: [Repository.images]) }
        let response = try await rooted.uploadSearch(UploadSearchRequest(ImageQuery(.url("file://" + Repository.images + "/astronaut.jpg")),
                                                                         parameters: Corpus.parameters()))
        #expect(response.result.first?.imageName == "astronaut")

        let closed = await Self.engine()
        await #expect {
            try await closed.uploadSearch(UploadSearchRequest(ImageQuery(.url("file://" + Repository.images + "/astronaut.jpg"))))
        } throws: { error in
            (error as? VisualSearchError)?.message.contains("`ImageSourcePolicy.imageRoots`") == true
        }
        await #expect {
            try await closed.uploadSearch(UploadSearchRequest(ImageQuery(.url("https://images.example/a.jpg"))))
        } throws: { error in
            (error as? VisualSearchError)?.message.contains("`ImageSourcePolicy.remoteFetch`") == true
        }
        await #expect(throws: VisualSearchError.self) {
            try await rooted.uploadSearch(UploadSearchRequest(ImageQuery(.url("ftp://example.com/a.jpg"))))
        }
    }

    @Test("a readable file that is not an image is an error that never shows the file's contents")
    func noEcho() async throws {
        let root = Repository.temporaryDirectory("engine-root")
        let secret = "TOP-SECRET-CONTENT-91c2"
        try Data("\(secret)\n".utf8).write(to: URL(fileURLWithPath: root + "/notes.jpg"))
        let engine = await Self.engine { $0.imageSources = ImageSourcePolicy(imageRoots: [root]) }
        for image in [QueryImage.url("file://" + root + "/notes.jpg"), .url(root + "/notes.jpg"), .url("file:///etc/passwd")] {
            do {
                _ = try await engine.uploadSearch(UploadSearchRequest(ImageQuery(image)))
                Issue.record("\(image) was searched")
            } catch {
                #expect(!error.description.contains(secret) && !error.message.contains(secret))
                #expect(!error.description.contains("root:x:0"))
            }
        }
    }

    // MARK: - /colorsearch

    @Test("colour search ranks images by how much of them is near the colour; #f0f and ff00ff are the same colour")
    func color() async throws {
        let engine = await Self.engine()
        let rust = try await engine.colorSearch(ColorSearchRequest(color: try HexColor(parsing: "#A32B10"), parameters: Corpus.parameters { $0.limit = 5 }))
        #expect(rust.method == "colorsearch" && rust.total > 5 && rust.total < 102)  // images with none of the colour are not matches
        #expect(rust.result.contains { $0.imageName == "coffee_cup" })
        let scores = rust.result.compactMap(\.score)
        #expect(scores.count == 5 && scores == scores.sorted(by: >) && scores.allSatisfy { $0 > 0 && $0 <= 1 })
        let all = try await engine.colorSearch(ColorSearchRequest(color: try HexColor(parsing: "#A32B10"), parameters: Corpus.parameters { $0.limit = 1000 }))
        #expect(all.result.count == all.total && all.result.allSatisfy { ($0.score ?? 0) > 0 })

        let short = try await engine.colorSearch(ColorSearchRequest(color: try HexColor(parsing: "#f0f"), parameters: Corpus.parameters { $0.limit = 20 }))
        let long = try await engine.colorSearch(ColorSearchRequest(color: try HexColor(parsing: "ff00ff"), parameters: Corpus.parameters { $0.limit = 20 }))
        #expect(short.result == long.result && short.total == long.total)
        #expect(short.result != rust.result)
        #expect(throws: VisualSearchError.self) { try HexColor(parsing: "red") }
    }

    @Test("colour search honours fq and facets")
    func colorFilters() async throws {
        let engine = await Self.engine()
        let response = try await engine.colorSearch(ColorSearchRequest(color: try HexColor(parsing: "#A32B10"), parameters: Corpus.parameters {
            $0.filters = [Filter(field: "brand", value: "TuxPaint")]; $0.fields = ["brand"]; $0.facets = ["brand"]; $0.facetsShowCount = true
        }))
        #expect(response.total > 0 && response.total <= 45)  // of the 45 TuxPaint images, those with some of the colour
        #expect(response.result.allSatisfy { $0.valueMap?["brand"] == "TuxPaint" })
        #expect(response.facets?.first?.items == [Facet.Item(value: "TuxPaint", count: response.total)])
    }

    // MARK: - /discoversearch

    @Test("discover search without a detector: the whole image as one object, and the response says detection needs the model")
    func discoverWhole() async throws {
        let engine = await Self.engine()
        let whole = try await engine.discoverSearch(DiscoverSearchRequest(ImageQuery(.bytes(Repository.bytes("astronaut.jpg"))), parameters: Corpus.parameters()))
        #expect(whole.method == "discoversearch")
        #expect(whole.objects?.count == 1 && whole.objects?.first?.type == "image")
        #expect(whole.objects?.first?.box == [0, 0, 512, 512])
        #expect(whole.objects?.first?.result.first?.imageName == "astronaut")
        #expect(whole.offlineNote == VisualSearchEngine.detectionNeedsModel)
        #expect(whole.total == 102 && whole.imageID != nil)
    }

    @Test("discover search: one object per box and point, at most detection_limit, result_limit results each")
    func discoverObjects() async throws {
        let engine = await Self.engine()
        let bytes = Repository.bytes("astronaut.jpg")  // 512×512: prepared at the same size
        let points = [PixelPoint(x: 300, y: 300), PixelPoint(x: 100, y: 400)]
        let all = try await engine.discoverSearch(DiscoverSearchRequest(ImageQuery(.bytes(bytes), box: PixelBox(x1: 0, y1: 0, x2: 256, y2: 256)),
                                                                        points: points, resultLimit: 3, parameters: Corpus.parameters()))
        let objects = try #require(all.objects)
        #expect(objects.map(\.type) == ["box", "point", "point"])
        #expect(objects.map(\.box) == [[0, 0, 256, 256], [236, 236, 364, 364], [36, 336, 164, 464]])
        #expect(objects.allSatisfy { $0.result.count == 3 && $0.total == 102 })
        #expect(all.total == 3 * 102)

        let limited = try await engine.discoverSearch(DiscoverSearchRequest(ImageQuery(.bytes(bytes), box: PixelBox(x1: 0, y1: 0, x2: 256, y2: 256)),
                                                                            points: points, resultLimit: 3, detectionLimit: 2,
                                                                            parameters: Corpus.parameters()))
        #expect(limited.objects?.map(\.type) == ["box", "point"])
        #expect(limited.objects?.map(\.result) == Array(objects.prefix(2)).map(\.result))

        let pointsOnly = try await engine.discoverSearch(DiscoverSearchRequest(ImageQuery(.bytes(bytes)), points: points, detectionLimit: 1,
                                                                               parameters: Corpus.parameters()))
        #expect(pointsOnly.objects?.map(\.type) == ["point"])
        #expect(pointsOnly.objects?.first?.result.count == 10)
    }

    // MARK: - ProductSearch

    @Test("ProductSearch by image: product_id, main_image_url, data and scores")
    func productSearch() async throws {
        let engine = await Self.engine()
        let response = try await engine.productSearch(ProductSearchRequest(ImageQuery(.bytes(Repository.bytes("grace_hopper.jpg"))),
                                                                           parameters: Corpus.parameters { $0.fields = ["brand"] }))
        #expect(response.method == "product/search_by_image" && response.status == .ok)
        let first = try #require(response.result?.first)
        #expect(first.productID == "grace_hopper")
        #expect(first.data?["brand"] == .string("matplotlib"))
        #expect(first.mainImageURL == Repository.images + "/grace_hopper.jpg")
        #expect(first.score != nil)
        #expect(response.total == 102 && response.imageID != nil)
    }

    @Test("ProductSearch recommendations carry product_info and exclude the product")
    func productRecommendations() async throws {
        let engine = await Self.engine()
        let recs = try await engine.productRecommendations(ProductRecommendationsRequest(productID: "grace_hopper", parameters: Corpus.parameters()))
        #expect(recs.method == "product/recommendations")
        #expect(recs.productInfo == ProductSearchResponse.Product(productID: "grace_hopper", mainImageURL: Repository.images + "/grace_hopper.jpg"))
        #expect(recs.result?.count == 10)
        #expect(recs.result?.contains { $0.productID == "grace_hopper" } == false)
        #expect(recs.result?.allSatisfy { $0.score != nil && $0.mainImageURL?.hasPrefix(Repository.images + "/") == true } == true)
        let json = try JSONSerialization.jsonObject(with: JSONEncoder().encode(recs)) as? [String: Any]
        #expect(json?["reqid"] != nil && json?["error"] == nil && json?["product_info"] != nil)
    }
}

/// The engine over catalogs of its own that another instance changes (in memory; a missing SQLite file is SQLiteCatalogTests').
@Suite("VisualSearchEngine and its catalog", .timeLimit(.minutes(10)))
struct EngineCatalogTests {
    /// An engine that asks the catalog's version on every query: another instance's change is seen by the next
    /// query, not up to ``VisualSearchEngine/Configuration/versionCheckInterval`` (1 ms) later.
    static func engineAskingEveryQuery(_ store: InMemoryCatalogStore) async throws -> VisualSearchEngine {
        var configuration = VisualSearchEngine.Configuration()
        configuration.versionCheckInterval = .zero
        return try await store.engine(configuration: configuration)
    }

    @Test("an engine sees what another store instance on the same catalog adds and removes")
    func reload() async throws {
        let store = InMemoryCatalogStore()
        let engine = try await Self.engineAskingEveryQuery(store)
        await #expect(throws: VisualSearchError.imageNotFound("astronaut")) { try await engine.search(SearchRequest(imageName: "astronaut")) }

        let other: any CatalogStore = store.sharingState()
        let input = Repository.temporaryDirectory("engine-input")
        try FileManager.default.copyItem(atPath: Repository.images + "/astronaut.jpg", toPath: input + "/astronaut.jpg")
        try FileManager.default.copyItem(atPath: Repository.images + "/coffee_cup.jpg", toPath: input + "/coffee_cup.jpg")
        _ = try await Indexer(store: other).run(directory: input, metadata: try MetadataTable(csv: "im_name,brand\nastronaut,nasa\n"))

        let found = try await engine.search(SearchRequest(imageName: "astronaut", parameters: Corpus.parameters {
            $0.filters = [Filter(field: "brand", value: "nasa")]
        }))
        #expect(found.total == 1 && found.result.first?.imageName == "astronaut")
        #expect(await engine.source(of: "coffee_cup") == input + "/coffee_cup.jpg")

        #expect(try await other.remove(["astronaut"]) == 1)
        await #expect(throws: VisualSearchError.imageNotFound("astronaut")) { try await engine.search(SearchRequest(imageName: "astronaut")) }
        #expect(try await engine.search(SearchRequest(imageName: "coffee_cup")).total == 1)
    }

    @Test("a field another instance declares is known to a running engine")
    func schemaReload() async throws {
        let store = InMemoryCatalogStore()
        try await store.upsert([Items.item("a", seed: 1)], schema: FieldSchema())
        let engine = try await Self.engineAskingEveryQuery(store)
        #expect(try await engine.search(SearchRequest(imageName: "a")).total == 1)

        let another: any CatalogStore = store.sharingState()
        try await another.declare(FieldSchema(fields: ["brand": .string]))
        let filtered = try await engine.search(SearchRequest(imageName: "a", parameters: Corpus.parameters { $0.filters = [Filter(field: "brand", value: "x")] }))
        #expect(filtered.total == 0)
    }
}
