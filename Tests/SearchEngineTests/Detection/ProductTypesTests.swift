@testable import SearchEngine
import Testing
import TestSupport

@Suite("ProductTypes", .timeLimit(.minutes(10)))
struct ProductTypesTests {
    /// The class id of the ImageNet class named `name`.
    static func id(_ name: String) throws -> Int {
        try #require((0..<ImageNetClasses.count).first { ImageNetClasses.name($0) == name }, "no ImageNet class named \(name)")
    }

    @Test("there are 1000 distinct class names, in the classifier's order")
    func labels() {
        #expect(ImageNetClasses.count == 1000)
        #expect(ImageNetClasses.names.count == ImageNetClasses.count)
        #expect(Set(ImageNetClasses.names).count == ImageNetClasses.count)
        #expect(ImageNetClasses.name(0) == "tench")
        #expect(ImageNetClasses.name(207) == "golden retriever")
        #expect(ImageNetClasses.name(963) == "pizza")
        #expect(ImageNetClasses.name(999) == "toilet tissue")
    }

    @Test("every class maps to a non-empty, lower-case, known type")
    func everyClassHasAType() {
        for id in 0..<ImageNetClasses.count {
            let type = ProductTypes.type(ofClass: id)
            #expect(!type.isEmpty && type == type.lowercased() && type.first != " " && type.last != " ", "class \(id)")
            #expect(ProductTypes.isKnown(type), "class \(id): \(type)")
            #expect(ProductTypes.classes(of: type).contains(id), "class \(id): \(type)")
        }
    }

    @Test("no class is in two rules, and every rule's classes exist")
    func rulesDoNotOverlap() {
        var seen: [Int: String] = [:]
        for rule in ProductTypes.rules {
            #expect(rule.classes.lowerBound >= 0 && rule.classes.upperBound < ImageNetClasses.count, "\(rule.type)")
            for id in rule.classes {
                #expect(seen[id] == nil, "class \(id) is in \(seen[id] ?? "") and \(rule.type)")
                seen[id] = rule.type
            }
        }
    }

    @Test("the vocabulary is 16 fashion types then 33 groups, each with at least one class")
    func vocabulary() {
        let fashion = ProductTypes.vocabulary.filter(\.isFashion).map(\.name)
        #expect(fashion == ["top", "dress", "bottom", "outerwear", "swimwear", "shoe", "bag", "watch", "eyewear", "hat", "tie",
                            "jewellery", "sock", "glove", "scarf", "umbrella"])
        #expect(ProductTypes.vocabulary.count == 49)
        #expect(Set(ProductTypes.vocabulary.map(\.name)).count == ProductTypes.vocabulary.count)
        let leadingFashion = ProductTypes.vocabulary.prefix(fashion.count).allSatisfy { $0.isFashion }
        #expect(leadingFashion)
        for type in ProductTypes.vocabulary {
            #expect(!ProductTypes.classes(of: type.name).isEmpty, "\(type.name) has no class")
        }
        #expect(ProductTypes.productType(named: "shoe") == ProductTypeEntry(name: "shoe", isFashion: true))
        #expect(ProductTypes.productType(named: "dog") == ProductTypeEntry(name: "dog", isFashion: false))
        #expect(ProductTypes.productType(named: "pizza") == nil)
    }

    @Test("spot checks: running shoe, jean, sunglasses, golden retriever, Granny Smith, pizza and more")
    func spotChecks() throws {
        let expected: [(String, String)] = [
            ("running shoe", "shoe"), ("Loafer", "shoe"), ("cowboy boot", "shoe"),
            ("jean", "bottom"), ("miniskirt", "bottom"), ("jersey", "top"), ("cardigan", "top"), ("gown", "dress"),
            ("trench coat", "outerwear"), ("bikini", "swimwear"), ("swimming trunks", "swimwear"),
            ("sunglasses", "eyewear"), ("sunglass", "eyewear"), ("backpack", "bag"), ("purse", "bag"),
            ("digital watch", "watch"), ("cowboy hat", "hat"), ("Windsor tie", "tie"), ("bow tie", "tie"),
            ("necklace", "jewellery"), ("sock", "sock"), ("mitten", "glove"), ("stole", "scarf"), ("umbrella", "umbrella"),
            ("golden retriever", "dog"), ("Chihuahua", "dog"), ("Mexican hairless", "dog"), ("Cardigan", "dog"),
            ("tabby", "cat"), ("Egyptian cat", "cat"), ("tiger", "tiger"), ("lion", "lion"), ("Madagascar cat", "lemur"),
            ("timber wolf", "timber wolf"), ("goldfinch", "bird"), ("goldfish", "fish"), ("jellyfish", "jellyfish"),
            ("ladybug", "insect"), ("monarch", "butterfly"), ("sports car", "car"), ("passenger car", "train"),
            ("plane", "tool"), ("airliner", "aircraft"), ("teddy", "teddy bear"), ("upright", "piano"),
            ("Granny Smith", "fruit"), ("banana", "fruit"), ("broccoli", "vegetable"),
            ("pizza", "pizza"), ("cheeseburger", "cheeseburger"), ("toaster", "toaster"), ("mouse", "computer mouse"),
        ]
        for (name, type) in expected {
            let id = try Self.id(name)
            #expect(ProductTypes.type(ofClass: id) == type, "\(name)")
        }
    }

    @Test("allTypes lists the vocabulary first, then every other type once, sorted")
    func allTypes() {
        let all = ProductTypes.allTypes
        let vocabulary = ProductTypes.vocabulary.map(\.name)
        #expect(Array(all.prefix(vocabulary.count)) == vocabulary)
        let rest = Array(all.dropFirst(vocabulary.count))
        #expect(rest == rest.sorted())
        #expect(Set(all).count == all.count)
        #expect(Set(all) == Set((0..<ImageNetClasses.count).map { ProductTypes.type(ofClass: $0) }))
        #expect(all.contains("pizza") && !all.contains("food"))
        #expect(ProductTypes.isKnown("shoe") && ProductTypes.isKnown("pizza"))
        #expect(!ProductTypes.isKnown("food") && !ProductTypes.isKnown("Shoe") && !ProductTypes.isKnown(""))
        #expect(ProductTypes.classes(of: "no such type").isEmpty)
        #expect(ProductTypes.classes(of: "cat") == [281, 282, 283, 284, 285])
        #expect(ProductTypes.classes(of: "dog") == Array(151...268))
    }

    /// A softmax-like vector: each listed class gets its mass, and what is left is spread evenly over all classes.
    static func probabilities(_ masses: [Int: Float]) -> [Float] {
        let rest = 1 - masses.values.reduce(0, +)
        var p = [Float](repeating: rest / Float(ImageNetClasses.count), count: ImageNetClasses.count)
        for (id, mass) in masses { p[id] += mass }
        return p
    }

    @Test("a type's probability is the sum over its classes")
    func probabilitySums() throws {
        let shoe = ProductTypes.classes(of: "shoe")
        var p = [Float](repeating: 0, count: ImageNetClasses.count)
        for (k, id) in shoe.enumerated() { p[id] = 0.01 * Float(k + 1) }
        p[963] = 0.2
        let expected = (1...shoe.count).reduce(Float(0)) { $0 + 0.01 * Float($1) }
        #expect(abs(ProductTypes.probability(of: "shoe", in: p) - expected) < 1e-6)
        #expect(ProductTypes.probability(of: "pizza", in: p) == 0.2)
        #expect(ProductTypes.probability(of: "dog", in: p) == 0)
        #expect(ProductTypes.probability(of: "no such type", in: p) == 0)

        // The sums over all types add up to the total.
        let uniform = [Float](repeating: 1 / Float(ImageNetClasses.count), count: ImageNetClasses.count)
        let total = ProductTypes.allTypes.reduce(Float(0)) { $0 + ProductTypes.probability(of: $1, in: uniform) }
        #expect(abs(total - 1) < 1e-4)
        #expect(abs(ProductTypes.probability(of: "dog", in: uniform) - 118 / 1000) < 1e-5)
    }

    @Test("the best type gathers its classes: many small dog breeds beat one strong class")
    func bestType() throws {
        // Golden retriever 0.2 and Labrador 0.2 and beagle 0.1: "dog" 0.5 (plus a share of the rest) beats pizza at 0.3.
        let golden = try Self.id("golden retriever"), labrador = try Self.id("Labrador retriever")
        let beagle = try Self.id("beagle"), pizza = try Self.id("pizza")
        let p = Self.probabilities([golden: 0.2, labrador: 0.2, beagle: 0.1, pizza: 0.3])
        let best = ProductTypes.bestType(probabilities: p)
        #expect(best.type == "dog")
        #expect(abs(best.probability - ProductTypes.probability(of: "dog", in: p)) < 1e-6)
        #expect(abs(best.probability - (0.5 + 0.2 * 118 / 1000)) < 1e-4)

        // One strong class alone wins when no family outweighs it.
        let runningShoe = try Self.id("running shoe"), sandal = try Self.id("sandal")
        let q = Self.probabilities([runningShoe: 0.6, sandal: 0.1, pizza: 0.2])
        let shoe = ProductTypes.bestType(probabilities: q)
        #expect(shoe.type == "shoe")
        #expect(abs(shoe.probability - (0.7 + 0.1 * 5 / 1000)) < 1e-4)

        let ranked = ProductTypes.rankedTypes(probabilities: q, minimum: 0.05)
        #expect(ranked.map(\.type) == ["shoe", "pizza"])
        #expect(ranked.allSatisfy { $0.probability > 0.05 })
        #expect(ProductTypes.rankedTypes(probabilities: q).count == ProductTypes.allTypes.count)

        // A tie goes to the type listed first: all zero gives the vocabulary's first type.
        let zero = ProductTypes.bestType(probabilities: [Float](repeating: 0, count: ImageNetClasses.count))
        #expect(zero.type == "top" && zero.probability == 0)
    }
}
