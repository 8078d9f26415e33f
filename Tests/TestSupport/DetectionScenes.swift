import Foundation
import ImageOps
import SearchEngine
import Testing
import VisualSearch

/// Pictures of several corpus objects for the detection tests: corpus images
/// (drawings and stamps flattened on white) pasted onto one canvas, and where
/// each object's drawing really is (its tight box of non-white pixels).
public enum DetectionScenes {
    /// A composed picture, its JPEG and each object's box with the corpus image it came from.
    public struct Scene: Sendable {
        public var pixels: PixelBuffer
        public var jpeg: [UInt8]
        public var objects: [(name: String, box: PixelRect)]
    }

    /// `names` (corpus image names without extension), each fitted inside
    /// `side`×`side` and pasted at its origin in `origins`, on a
    /// `width`×`height` canvas of `colour`.
    public static func compose(_ names: [String], at origins: [(Int, Int)], side: Int = 260, width: Int = 1000, height: Int = 700,
                               color: (UInt8, UInt8, UInt8) = (255, 255, 255)) throws -> Scene {
        precondition(names.count == origins.count, "one origin per object")
        var canvas = PixelBuffer(width: width, height: height, hasAlpha: false, fill: (color.0, color.1, color.2, 255))
        var objects: [(name: String, box: PixelRect)] = []
        for (name, origin) in zip(names, origins) {
            let decoded = try ImageDecoder.decode(fileAt: Repository.images + "/\(name).jpg").pixels
            let picture = Resampler.resample(decoded, to: decoded.size.fitting(inside: PixelSize(width: side, height: side)))
            var minX = Int.max, minY = Int.max, maxX = -1, maxY = -1
            for y in 0..<picture.height {
                for x in 0..<picture.width {
                    let i = (y * picture.width + x) * 4
                    let isWhite = picture.bytes[i] > 235 && picture.bytes[i + 1] > 235 && picture.bytes[i + 2] > 235
                    guard origin.0 + x < width, origin.1 + y < height else { continue }
                    if !isWhite {
                        minX = min(minX, x); maxX = max(maxX, x); minY = min(minY, y); maxY = max(maxY, y)
                    }
                    // White stays the canvas's colour: the drawing is cut out of its page.
                    if !isWhite {
                        let o = ((origin.1 + y) * width + origin.0 + x) * 4
                        for channel in 0..<3 { canvas.bytes[o + channel] = picture.bytes[i + channel] }
                    }
                }
            }
            precondition(maxX >= 0, "\(name) is blank")
            objects.append((name, PixelRect(x: origin.0 + minX, y: origin.1 + minY, width: maxX - minX + 1, height: maxY - minY + 1)))
        }
        let jpeg = try ImageEncoders.JPEG(quality: try JPEGQuality(0.92)).encode(canvas)
        return Scene(pixels: canvas, jpeg: jpeg, objects: objects)
    }

    /// Three things of different kinds on white: a sombrero, an electric guitar and a strawberry.
    public static func threeOnWhite() throws -> Scene {
        try compose(["tp_clothes_hats_sombrero", "tp_hobbies_music_string_guitar_electric", "tp_food_fruit_cartoon_strawberry"],
                    at: [(40, 60), (380, 300), (700, 80)])
    }
}

extension DetectionScenes {
    /// Discover on `engine` (over the corpus, with a detector) finds the three things of ``threeOnWhite()``, each
    /// searched with its own image first: the same expectation on every store.
    public static func expectFindsEachThing(_ engine: VisualSearchEngine) async throws {
        let scene = try threeOnWhite()
        let response = try await engine.discoverSearch(DiscoverSearchRequest(ImageQuery(.bytes(scene.jpeg)), resultLimit: 5,
                                                                            parameters: Corpus.parameters()))
        let objects = try #require(response.objects)
        #expect(objects.count == 3, "\(objects.map { ($0.type, $0.box) })")
        #expect(objects.map(\.score) == objects.map(\.score).sorted(by: >))
        #expect(response.objectTypesList?.isEmpty == false)
        for (name, truth) in scene.objects {
            let match = objects.first { object in
                let box = PixelRect(x: object.box[0], y: object.box[1], width: object.box[2] - object.box[0], height: object.box[3] - object.box[1])
                return box.overlap(with: truth) >= 0.5
            }
            let object = try #require(match, "\(name) at \(truth) not among \(objects.map(\.box))")
            #expect(object.result.first?.imageName == name, "\(name)'s object found \(object.result.map(\.imageName))")
            #expect(object.total > 0 && (0...1).contains(object.score) && object.attributes.isEmpty)
        }
    }
}
