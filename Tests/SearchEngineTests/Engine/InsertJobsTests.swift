import Foundation
import ImageOps
import Networking
@testable import SearchEngine
import TestSupport
import Testing
import VisualSearch

/// The data API of the engine: `/insert` starts a transaction that fetches
/// and indexes images in the background, `/insert/status` reports it,
/// `/remove` takes images out. Each test has a catalog of its own.
@Suite("Data API: insert, insert status, remove", .timeLimit(.minutes(10)))
struct InsertJobsTests {
    /// An engine over a fresh catalog of two images, reading local images only from `uploads`.
    struct Fixture {
        let engine: VisualSearchEngine
        let uploads: String

        init(imageWork: ImageWorkPool? = nil, limits: ImageLimits = .default, fetchHosts: Set<String>? = nil) async throws {
            let input = Repository.temporaryDirectory("insert-input")
            for name in ["astronaut.jpg", "coffee_cup.jpg"] {
                try FileManager.default.copyItem(atPath: Repository.images + "/" + name, toPath: input + "/" + name)
            }
            let store = InMemoryCatalogStore()
            _ = try await Indexer(store: store).run(directory: input)
            uploads = Repository.temporaryDirectory("insert-uploads")
            for name in ["chelsea_cat.jpg", "grace_hopper.jpg"] {
                try FileManager.default.copyItem(atPath: Repository.images + "/" + name, toPath: uploads + "/" + name)
            }
            var configuration = VisualSearchEngine.Configuration()
            configuration.imageSources = ImageSourcePolicy(imageRoots: [uploads], remoteFetch: fetchHosts.map {
                DestinationPolicy(refusesNonPublicAddresses: true, allowedHosts: $0)
            })
            configuration.queryCacheDirectory = Repository.temporaryDirectory("insert-cache")
            configuration.imageWork = imageWork
            configuration.limits = limits
            engine = try await store.engine(configuration: configuration)
        }

        /// The transaction's status once the engine has finished its inserts (awaited, not polled). The
        /// transactions accepted wait until something runs them: here this call, as a command line does.
        func finished(_ transactionID: String) async throws -> InsertStatusResponse.Progress {
            await engine.withInserts { await engine.finishInserts() }
            let status = try await engine.insertStatus(InsertStatusRequest(transactionID: transactionID))
            #expect(status.status == .ok && status.method == "insert/status")
            let progress = try #require(status.result.first)
            #expect(progress.transactionID == transactionID && progress.isFinished)
            return progress
        }

        func insert(_ items: [InsertItem]) async throws -> InsertStatusResponse.Progress {
            let response = try await engine.insert(InsertRequest(items: items))
            #expect(response.status == .ok && response.method == "insert" && response.total == items.count)
            return try await finished(try #require(response.transactionID))
        }
    }

    @Test("inserts decode on the engine's image work pool, each charged the pixels it decodes, and leave the budget whole")
    func insertsUnderThePixelBudget() async throws {
        // No queue deadline in reach: on a loaded machine the second image may wait more than the default 10 s.
        let pool = ImageWorkPool(limits: .init(workers: 1, pixelBudget: 2_000_000, maxWait: .seconds(600)))
        let fixture = try await Fixture(imageWork: pool)
        let progress = try await fixture.insert(["chelsea_cat", "grace_hopper"].map {
            InsertItem(imageName: "new/" + $0, imageURL: "file://" + fixture.uploads + "/" + $0 + ".jpg", metadata: [:])
        })
        #expect(progress.successCount == 2 && progress.failCount == 0, "\(progress.errorList)")
        let statistics = pool.statistics
        #expect(statistics.completed == 2 && statistics.pixelsDecoded > 2 && statistics.running == 0 && statistics.pixelsInFlight == 0,
                "\(statistics)")
    }

    @Test("an image inserted by file:// under an image root is indexed, found by search, then removed")
    func insertSearchRemove() async throws {
        let fixture = try await Fixture()
        let engine = fixture.engine
        let url = "file://" + fixture.uploads + "/chelsea_cat.jpg"
        let progress = try await fixture.insert([InsertItem(imageName: "shop/cat", imageURL: url, metadata: ["brand": "acme", "price": "12.5"])])
        #expect(progress.total == 1 && progress.successCount == 1 && progress.failCount == 0 && progress.errorList.isEmpty)
        #expect(progress.processedPercent == 100)

        let found = try await engine.search(SearchRequest(imageName: "shop/cat", parameters: Corpus.parameters { $0.fields = ["brand", "price"] }))
        #expect(found.total == 3)
        #expect(found.result.first == ImageResult(imageName: "shop/cat", score: 1, valueMap: ["brand": "acme", "price": "12.5"]))
        #expect(await engine.source(of: "shop/cat") == url)
        #expect(try await engine.catalog.schema().fields == ["brand": .string, "price": .float])
        let byPrice = try await engine.search(SearchRequest(imageName: "astronaut", parameters: Corpus.parameters { $0.filters = [Filter(field: "price", value: "10,20")] }))
        #expect(byPrice.result.map(\.imageName) == ["shop/cat"])
        let upload = try await engine.uploadSearch(UploadSearchRequest(ImageQuery(.bytes(Repository.bytes("chelsea_cat.jpg")))))
        #expect(upload.result.first?.imageName == "shop/cat")

        let removed = try await engine.remove(RemoveRequest(imageNames: ["shop/cat", "never-there"]))
        #expect(removed.status == .warning && removed.method == "remove" && removed.total == 1)
        // The name the catalog did not have is listed, with its place in the request.
        #expect(removed.error == [DataAPIError(imageName: "never-there", index: 1, code: nil, message: "not in the catalog")])
        await #expect(throws: VisualSearchError.imageNotFound("shop/cat")) { try await engine.search(SearchRequest(imageName: "shop/cat")) }
        #expect(try await engine.catalog.count() == 2)
    }

    @Test("each image that cannot be fetched fails alone, reported at its index with the reason")
    func failures() async throws {
        let fixture = try await Fixture()
        let progress = try await fixture.insert([
            InsertItem(imageName: "cat", imageURL: "file://" + fixture.uploads + "/chelsea_cat.jpg"),
            InsertItem(imageName: "escape", imageURL: "file://" + fixture.uploads + "/../" + "secret.jpg"),
            InsertItem(imageName: "corpus", imageURL: Repository.images + "/astronaut.jpg"),
            InsertItem(imageName: "remote", imageURL: "https://images.example/x.jpg"),
            InsertItem(imageName: "hopper", imageURL: fixture.uploads + "/grace_hopper.jpg"),
            InsertItem(imageName: "gopher", imageURL: "gopher://x/y.jpg"),
        ])
        #expect(progress.total == 6 && progress.successCount == 2 && progress.failCount == 4)
        let errors = progress.errorList.sorted { ($0.index ?? -1) < ($1.index ?? -1) }
        #expect(errors.map(\.index) == [1, 2, 3, 5])
        #expect(errors.map(\.imageName) == ["escape", "corpus", "remote", "gopher"])
        #expect(errors.allSatisfy { $0.code == 400 })
        #expect(errors[0].message.contains("not inside an image root") && errors[1].message.contains("not inside an image root"))
        #expect(errors[2].message.contains("`ImageSourcePolicy.remoteFetch`"))
        #expect(errors[3].message.contains("not an http(s) URL"))
        #expect(try await fixture.engine.catalog.loadIndex().names.sorted() == ["astronaut", "cat", "coffee_cup", "hopper"])
    }

    @Test("failures beyond the first batch are reported at their index in the whole request")
    func batches() async throws {
        let fixture = try await Fixture()
        var items = (0..<18).map { InsertItem(imageName: "copy\($0)", imageURL: fixture.uploads + "/grace_hopper.jpg") }
        items[17] = InsertItem(imageName: "missing", imageURL: fixture.uploads + "/missing.jpg")
        items[3] = InsertItem(imageName: "remote", imageURL: "https://images.example/x.jpg")
        let progress = try await fixture.insert(items)
        #expect(progress.successCount == 16 && progress.failCount == 2)
        #expect(progress.errorList.map(\.index).sorted { ($0 ?? -1) < ($1 ?? -1) } == [3, 17])
        #expect(progress.errorList.first { $0.index == 17 }?.imageName == "missing")
        #expect(try await fixture.engine.catalog.count() == 18)
    }

    @Test("inserting an image again replaces its metadata, not the image count")
    func reinsert() async throws {
        let fixture = try await Fixture()
        let url = fixture.uploads + "/chelsea_cat.jpg"
        _ = try await fixture.insert([InsertItem(imageName: "cat", imageURL: url, metadata: ["brand": "first"])])
        let again = try await fixture.insert([InsertItem(imageName: "cat", imageURL: url, metadata: ["brand": "second"])])
        #expect(again.successCount == 1)
        #expect(try await fixture.engine.catalog.count() == 3)
        let response = try await fixture.engine.search(SearchRequest(imageName: "cat", parameters: Corpus.parameters { $0.fields = ["brand"] }))
        #expect(response.result.first?.valueMap == ["brand": "second"])
    }

    @Test("an empty insert and an unknown transaction are invalid parameters")
    func invalid() async throws {
        let fixture = try await Fixture()
        await #expect {
            try await fixture.engine.insert(InsertRequest(items: []))
        } throws: { error in
            guard case VisualSearchError.invalidParameter = error else { return false }
            return true
        }
        await #expect {
            try await fixture.engine.insertStatus(InsertStatusRequest(transactionID: "123456789"))
        } throws: { error in
            guard case VisualSearchError.invalidParameter(name: "trans_id", _) = error else { return false }
            return true
        }
        #expect(try await fixture.engine.remove(RemoveRequest(imageNames: ["nobody"])).total == 0)
        #expect(try await fixture.engine.catalog.count() == 2)
    }

    /// Issue 24: the whole error list was saved again after every batch of 16
    /// (10,000 images: 40 s and a 2.4 MB status), with no cap and no way to stop it.
    @Test("one request takes at most 1,000 images: 1,001 is a 400 naming the limit; nothing starts")
    func requestCap() async throws {
        let fixture = try await Fixture()
        let items = (0...1000).map { InsertItem(imageName: "n\($0)", imageURL: "https://images.example/\($0).jpg") }
        await #expect {
            try await fixture.engine.insert(InsertRequest(items: items))
        } throws: { error in
            guard case VisualSearchError.invalidParameter(_, let reason) = error else { return false }
            return reason.contains("1001 images") && reason.contains("1000")
        }
        #expect(fixture.engine.runningInserts == 0)
    }

    @Test("1,000 failing images: every failure counted; the first 100 listed once each, at their index")
    func thousandFailures() async throws {
        let fixture = try await Fixture()
        let items = (0..<1000).map { InsertItem(imageName: "n\($0)", imageURL: "https://images.example/\($0).jpg") }
        let progress = try await fixture.insert(items)
        #expect(progress.total == 1000 && progress.failCount == 1000 && progress.successCount == 0)
        #expect(progress.errorList.compactMap(\.index) == Array(0..<InsertJobs.maxErrorsKept))
        #expect(try await fixture.engine.catalog.count() == 2)
    }

    /// Issue 37: 1,000 failing images with 15 kB names made a 30 MB status, kept in the catalog.
    @Test("1,000 failing images with 15 kB names: the status keeps 100 errors, names cut to 200 characters, in well under 200 kB")
    func boundedStatus() async throws {
        let fixture = try await Fixture()
        let long = String(repeating: "x", count: 15_000)
        let items = (0..<1000).map { InsertItem(imageName: "\($0)-" + long, imageURL: fixture.uploads + "/\($0)-missing.jpg") }
        let progress = try await fixture.insert(items)
        #expect(progress.failCount == 1000 && progress.errorList.count == 100)
        for (index, error) in progress.errorList.enumerated() {
            let name = try #require(error.imageName)
            #expect(error.index == index && name.hasPrefix("\(index)-xxx") && name.count == InsertJobs.maxNameCharacters + 1 && name.hasSuffix("…"))
            #expect(error.message.count <= InsertJobs.maxMessageCharacters + 1)
        }
        let saved = try JSONEncoder().encode(progress)
        #expect(saved.count < 200_000, "\(saved.count) bytes")
        // A name the message repeats is cut there too, so what went wrong survives the cut.
        let bounded = InsertJobs.bounded(DataAPIError(imageName: long, index: 3, code: 400, message: long + ": corrupt JPEG"))
        #expect(bounded.message == String(long.prefix(200)) + "…: corrupt JPEG")
    }

    @Test("inserts are decoded under the engine's image limits, not the command line's: a 2 MP image under a 1 MP limit fails, named, undecoded")
    func insertsUnderTheEngineLimits() async throws {
        let pool = ImageWorkPool(limits: .init(workers: 1))
        let photo = try ImageEncoders.PNG().encode(PixelBuffer(width: 2000, height: 1000, hasAlpha: false, fill: (40, 90, 160, 255)))
        let fixture = try await Fixture(imageWork: pool, limits: ImageLimits(maxPixels: 1_000_000))
        try Data(photo).write(to: URL(fileURLWithPath: fixture.uploads + "/wide.png"))
        let progress = try await fixture.insert([InsertItem(imageName: "wide", imageURL: fixture.uploads + "/wide.png"),
                                                 InsertItem(imageName: "cat", imageURL: fixture.uploads + "/chelsea_cat.jpg")])
        #expect(progress.successCount == 1 && progress.failCount == 1)
        let error = try #require(progress.errorList.first)
        #expect(error.imageName == "wide" && error.message.contains("2000×1000 exceeds the pixel limit of 1000000 pixels"), "\(error.message)")
        // Refused from its header: the pool was charged a token pixel for it, never its 2,000,000.
        #expect(pool.statistics.pixelsDecoded < 1_000_000, "\(pool.statistics.pixelsDecoded) pixels charged")
        // The batch's bytes were held in the budget while it ran (one reservation), and given back.
        #expect(pool.statistics.reservationsGranted == 1)
        #expect(pool.statistics.pixelsReserved == 0 && pool.statistics.pixelsInFlight == 0)
    }

    @Test("a batch's downloads wait until the pixel budget holds their most (16 MiB each): none is fetched while the budget is taken")
    func downloadsReserveTheBudget() async throws {
        let photo = Repository.bytes("chelsea_cat.jpg")
        let stub = LoopbackStub([.serve(contentType: "image/jpeg", bytes: photo)])
        defer { stub.stop() }
        // No queue deadline in reach: under a loaded suite a decode may wait longer than the default 10 s.
        let pool = ImageWorkPool(limits: .init(workers: 1, pixelBudget: 64_000_000, maxWait: .seconds(600)))
        let fixture = try await Fixture(imageWork: pool, fetchHosts: [stub.hostAndPort])
        let taken = try await pool.reserve(pixels: 64_000_000)  // someone else's bytes fill the budget
        let progress = try await fixture.engine.withInserts { () async throws in
            let response = try await fixture.engine.insert(InsertRequest(items: (0..<3).map {
                InsertItem(imageName: "remote\($0)", imageURL: stub.url("/cat\($0).jpg").absoluteString)
            }))
            #expect(await pool.until { pool.statistics.reservationsWaiting > 0 })
            #expect(pool.statistics.reservationsWaiting == 1)
            #expect(stub.requests.isEmpty, "fetched before the budget held the bytes: \(stub.requests)")
            taken.release()
            return try await fixture.finished(try #require(response.transactionID))
        }
        #expect(progress.successCount == 3, "\(progress.errorList)")
        #expect(stub.requests.count == 3 && pool.statistics.reservationsGranted == 2)
        #expect(pool.statistics.pixelsReserved == 0 && pool.statistics.pixelsInFlight == 0)
    }

    @Test("progress is saved at the end and otherwise at most every half second")
    func saveSpacing() {
        let start = ContinuousClock.now
        #expect(!InsertJobs.savesProgress(processed: 16, of: 1000, lastSaved: start, now: start + .milliseconds(499)))
        #expect(InsertJobs.savesProgress(processed: 16, of: 1000, lastSaved: start, now: start + .milliseconds(500)))
        #expect(InsertJobs.savesProgress(processed: 1000, of: 1000, lastSaved: start, now: start))
    }

    @Test("cancelling the scope that runs the inserts stops a transaction between batches; what ran is committed and its progress saved")
    func cancellation() async throws {
        let fixture = try await Fixture()
        let items = (0..<1000).map { InsertItem(imageName: "copy\($0)", imageURL: fixture.uploads + "/grace_hopper.jpg") }
        let jobs = fixture.engine.jobs
        let id = try await fixture.engine.withInserts { () async throws in
            let id = try #require(try await fixture.engine.insert(InsertRequest(items: items)).transactionID)
            #expect(await jobs.queue.until { jobs.queue.read { $0.begun.contains(id) } })
            return id
        }  // the scope ends at once: the runner's task is cancelled, the first batch at most has run
        #expect(fixture.engine.runningInserts == 0)
        let saved = try #require(try await fixture.engine.insertStatus(InsertStatusRequest(transactionID: id)).result.first)
        let count = try await fixture.engine.catalog.count()
        #expect(saved.processedPercent < 100 && count - 2 <= InsertJobs.batchSize)
        #expect(saved.successCount == count - 2, "the saved progress reports exactly what was committed")
    }
}
