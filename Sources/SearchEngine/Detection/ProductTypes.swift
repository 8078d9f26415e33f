// The product-type vocabulary and the mapping of the ImageNet-1k classes onto it (issue 38).
//
// The `rules` table below is the mapping's ONE home. scripts/model/imagenet_labels.py reads it back (`doc`,
// `check`) to check it and to write the table of docs/product-types.md, so keep its format: one `Rule(...)` a
// line, each followed by `// class name` (or `// first name ... last name` for `first, through: last`), exactly
// as ImageNetClasses.swift spells the classes; other comment lines are free. After an edit run
// `python3 scripts/model/imagenet_labels.py doc`.

/// A named type of the product-type vocabulary: what the detector calls an object.
///
/// Two kinds make up the vocabulary (``ProductTypes/vocabulary``):
/// - the hosted service's fashion types ("top", "dress", "bottom", "shoe", "bag", …), which its
///   `detection` parameter and `product_types` answers use; ``isFashion`` is `true`;
/// - coarse groups of related ImageNet classes ("dog", "car", "fruit", …) chosen for vsearch, so that
///   118 dog breeds or nine kinds of ball are one type; ``isFashion`` is `false`.
///
/// A class that neither kind takes is its own type, under its own name in lower case
/// (``ProductTypes/type(ofClass:)``); those types are not in the vocabulary. docs/product-types.md
/// lists every type with its classes.
public struct ProductTypeEntry: Hashable, Sendable {
    /// The type's name as the API writes it: lower case, plain words ("teddy bear", "musical instrument").
    public let name: String
    /// Whether it is one of the hosted service's fashion types.
    public let isFashion: Bool

    public init(name: String, isFashion: Bool) {
        self.name = name
        self.isFashion = isFashion
    }
}

/// The product types the ImageNet classifier's 1000 classes map onto, and the sums that turn the
/// classifier's class probabilities into type probabilities.
///
/// Every class maps to exactly one type: a fashion type, a coarse group, or its own name
/// (``ImageNetClasses/name(_:)`` in lower case, with a few names made plainer: "tusker" is an
/// "elephant", "swab" a "mop"). The tables are built once, on first use; each call after that
/// only reads them (and the aggregations add up 1000 floats).
public enum ProductTypes {
    /// The named types in a stable order: the 16 fashion types, then the 33 coarse groups.
    public static let vocabulary: [ProductTypeEntry] =
        fashionNames.map { ProductTypeEntry(name: $0, isFashion: true) } + groupNames.map { ProductTypeEntry(name: $0, isFashion: false) }

    /// The product type of ImageNet class `id` (0 ..< ``ImageNetClasses/count``).
    public static func type(ofClass id: Int) -> String {
        precondition(tables.typeOfClass.indices.contains(id), "ImageNet class \(id) is not in 0..<\(ImageNetClasses.count)")
        return tables.typeOfClass[id]
    }

    /// Every class that maps to `type`, in ascending order; empty for a type no class maps to.
    public static func classes(of type: String) -> [Int] {
        guard let index = tables.indexOfType[type] else { return [] }
        return tables.classesOfType[index]
    }

    /// Whether `type` is a type the mapping can give: a vocabulary type or a class's own name.
    /// Types are compared exactly (they are all lower case).
    public static func isKnown(_ type: String) -> Bool {
        tables.indexOfType[type] != nil
    }

    /// Every distinct type the mapping can give: the ``vocabulary`` first, in its order, then the
    /// other types sorted.
    public static var allTypes: [String] { tables.allTypes }

    /// The vocabulary entry named `type`, or `nil` for a class's own name or an unknown type.
    public static func productType(named type: String) -> ProductTypeEntry? {
        vocabulary.first { $0.name == type }
    }

    /// The probability of `type`: the sum of its classes' probabilities (0 for an unknown type).
    /// - Parameter probabilities: the classifier's softmax, one value a class (``ImageNetClasses/count``).
    public static func probability(of type: String, in probabilities: [Float]) -> Float {
        precondition(probabilities.count == ImageNetClasses.count, "\(probabilities.count) probabilities, the classifier has \(ImageNetClasses.count) classes")
        guard let index = tables.indexOfType[type] else { return 0 }
        var sum: Float = 0
        for id in tables.classesOfType[index] { sum += probabilities[id] }
        return sum
    }

    /// The most probable type and its probability (the sum over its classes). A tie goes to the type
    /// that comes first in ``allTypes``.
    /// - Parameter probabilities: the classifier's softmax, one value a class (``ImageNetClasses/count``).
    public static func bestType(probabilities: [Float]) -> (type: String, probability: Float) {
        let sums = typeSums(probabilities)
        var best = 0
        for index in sums.indices where sums[index] > sums[best] { best = index }
        return (type: tables.allTypes[best], probability: sums[best])
    }

    /// Every type with a probability above `minimum`, most probable first (ties in ``allTypes`` order).
    /// - Parameter probabilities: the classifier's softmax, one value a class (``ImageNetClasses/count``).
    public static func rankedTypes(probabilities: [Float], minimum: Float = 0) -> [(type: String, probability: Float)] {
        let sums = typeSums(probabilities)
        let order = sums.indices.filter { sums[$0] > minimum }.sorted { sums[$0] != sums[$1] ? sums[$0] > sums[$1] : $0 < $1 }
        return order.map { (type: tables.allTypes[$0], probability: sums[$0]) }
    }

    /// The sum of the class probabilities of each type, indexed like ``allTypes``.
    static func typeSums(_ probabilities: [Float]) -> [Float] {
        precondition(probabilities.count == ImageNetClasses.count, "\(probabilities.count) probabilities, the classifier has \(ImageNetClasses.count) classes")
        var sums = [Float](repeating: 0, count: tables.allTypes.count)
        for (id, index) in tables.typeIndexOfClass.enumerated() { sums[index] += probabilities[id] }
        return sums
    }

    // MARK: - The vocabulary

    /// The hosted service's fashion types (its `detection` values and `product_types` answers) that
    /// ImageNet has classes for. The order is the API's: add new ones at the end.
    static let fashionNames: [String] = [
        "top", "dress", "bottom", "outerwear", "swimwear", "shoe", "bag", "watch", "eyewear", "hat", "tie",
        "jewellery", "sock", "glove", "scarf", "umbrella",
    ]

    /// vsearch's coarse groups: families of ImageNet classes that are one kind of thing to a shopper.
    /// ("food" is not one: ImageNet's dishes are each a plainly named product, docs/product-types.md.)
    static let groupNames: [String] = [
        "dog", "cat", "bird", "fish", "insect", "butterfly", "car", "truck", "bicycle", "motorcycle", "boat",
        "aircraft", "train", "ball", "guitar", "piano", "chair", "table", "sofa", "bed", "cup", "bottle", "clock",
        "phone", "computer", "lamp", "flower", "fruit", "vegetable", "teddy bear", "toy", "musical instrument", "tool",
    ]

    // MARK: - The mapping

    /// Classes `classes` are of product type `type`.
    struct Rule: Sendable {
        let type: String
        let classes: ClosedRange<Int>

        init(_ type: String, _ id: Int) {
            self.type = type
            self.classes = id...id
        }

        init(_ type: String, _ first: Int, through last: Int) {
            self.type = type
            self.classes = first...last
        }
    }

    /// The classes whose type is not their own lower-case name. No class is in two rules
    /// (ProductTypesTests and `imagenet_labels.py check` see to it). Reasons for the borderline
    /// ones are in docs/product-types.md.
    static let rules: [Rule] = [
        // MARK: Fashion types (the hosted service's)
        Rule("top", 610),                   // jersey
        Rule("top", 841),                   // sweatshirt
        Rule("top", 474),                   // cardigan
        // A bra is worn on the upper body; the vocabulary has no underwear type.
        Rule("top", 459),                   // brassiere
        Rule("dress", 578),                 // gown
        Rule("dress", 399),                 // abaya
        Rule("dress", 614),                 // kimono
        Rule("bottom", 608),                // jean
        Rule("bottom", 655),                // miniskirt
        Rule("bottom", 689),                // overskirt
        // Skirts are bottoms, the hoop skirt (crinoline) too, though its pictures often show the whole dress.
        Rule("bottom", 601),                // hoopskirt
        Rule("bottom", 775),                // sarong
        Rule("outerwear", 869),             // trench coat
        Rule("outerwear", 568),             // fur coat
        Rule("outerwear", 617),             // lab coat
        Rule("outerwear", 735),             // poncho
        Rule("outerwear", 501),             // cloak
        // A suit's jacket is what shows: outerwear is the closest type.
        Rule("outerwear", 834),             // suit
        Rule("swimwear", 445),              // bikini
        // ImageNet's "maillot" is a leotard: the same garment to the eye as a one-piece swimsuit.
        Rule("swimwear", 638),              // maillot
        Rule("swimwear", 639),              // maillot tank suit
        Rule("swimwear", 842),              // swimming trunks
        Rule("shoe", 770),                  // running shoe
        Rule("shoe", 630),                  // Loafer
        Rule("shoe", 502),                  // clog
        Rule("shoe", 774),                  // sandal
        Rule("shoe", 514),                  // cowboy boot
        Rule("bag", 414),                   // backpack
        Rule("bag", 748),                   // purse
        Rule("bag", 636),                   // mailbag
        // Wallets and carrier bags are sold beside bags; the vocabulary has no small-leather-goods type.
        Rule("bag", 893),                   // wallet
        Rule("bag", 728),                   // plastic bag
        Rule("watch", 531),                 // digital watch
        // ImageNet has no analogue wristwatch class; such watches tend to come out "stopwatch" (not measured here).
        Rule("watch", 826),                 // stopwatch
        Rule("eyewear", 836),               // sunglass
        Rule("eyewear", 837),               // sunglasses
        Rule("hat", 515),                   // cowboy hat
        Rule("hat", 808),                   // sombrero
        Rule("hat", 452),                   // bonnet
        Rule("hat", 667),                   // mortarboard
        Rule("hat", 793),                   // shower cap
        // Caps and a balaclava are headwear; helmets are not hats (their own names).
        Rule("hat", 433),                   // bathing cap
        Rule("hat", 439),                   // bearskin
        Rule("hat", 796),                   // ski mask
        Rule("tie", 457),                   // bow tie
        Rule("tie", 906),                   // Windsor tie
        Rule("tie", 451),                   // bolo tie
        Rule("jewellery", 679),             // necklace
        Rule("sock", 806),                  // sock
        // A Christmas stocking is a big sock to the eye.
        Rule("sock", 496),                  // Christmas stocking
        Rule("glove", 658),                 // mitten
        Rule("scarf", 824),                 // stole
        Rule("scarf", 552),                 // feather boa
        Rule("umbrella", 879),              // umbrella
        // MARK: Coarse groups
        Rule("dog", 151, through: 268),     // Chihuahua ... Mexican hairless
        Rule("cat", 281, through: 285),     // tabby ... Egyptian cat
        Rule("bird", 7, through: 24),       // cock ... great grey owl
        Rule("bird", 80, through: 100),     // black grouse ... black swan
        Rule("bird", 127, through: 146),    // white stork ... albatross
        Rule("fish", 0, through: 6),        // tench ... stingray
        Rule("fish", 389, through: 397),    // barracouta ... puffer
        Rule("insect", 300, through: 320),  // tiger beetle ... damselfly
        Rule("butterfly", 321, through: 326),// admiral ... lycaenid
        Rule("car", 436),                   // beach wagon
        Rule("car", 468),                   // cab
        Rule("car", 511),                   // convertible
        Rule("car", 609),                   // jeep
        Rule("car", 627),                   // limousine
        Rule("car", 656),                   // minivan
        Rule("car", 661),                   // Model T
        Rule("car", 751),                   // racer
        Rule("car", 817),                   // sports car
        // Trucks and lorries; the ambulance, the police van and the buses keep their own names.
        Rule("truck", 555),                 // fire engine
        Rule("truck", 569),                 // garbage truck
        Rule("truck", 675),                 // moving van
        Rule("truck", 717),                 // pickup
        Rule("truck", 864),                 // tow truck
        Rule("truck", 867),                 // trailer truck
        Rule("bicycle", 444),               // bicycle-built-for-two
        Rule("bicycle", 671),               // mountain bike
        Rule("motorcycle", 665),            // moped
        Rule("motorcycle", 670),            // motor scooter
        // Every watercraft, ships included ("pirate" is ImageNet's pirate ship).
        Rule("boat", 403),                  // aircraft carrier
        Rule("boat", 472),                  // canoe
        Rule("boat", 484),                  // catamaran
        Rule("boat", 510),                  // container ship
        Rule("boat", 554),                  // fireboat
        Rule("boat", 576),                  // gondola
        Rule("boat", 625),                  // lifeboat
        Rule("boat", 628),                  // liner
        Rule("boat", 724),                  // pirate
        Rule("boat", 780),                  // schooner
        Rule("boat", 814),                  // speedboat
        Rule("boat", 833),                  // submarine
        Rule("boat", 871),                  // trimaran
        Rule("boat", 914),                  // yawl
        Rule("aircraft", 404),              // airliner
        Rule("aircraft", 405),              // airship
        Rule("aircraft", 895),              // warplane
        // ImageNet's "wing" is an aeroplane's wing, mostly seen with the aeroplane.
        Rule("aircraft", 908),              // wing
        Rule("train", 466),                 // bullet train
        Rule("train", 547),                 // electric locomotive
        Rule("train", 565),                 // freight car
        // ImageNet's "passenger car" is a railway carriage, not a car.
        Rule("train", 705),                 // passenger car
        Rule("train", 820),                 // steam locomotive
        Rule("train", 829),                 // streetcar
        Rule("ball", 429),                  // baseball
        Rule("ball", 430),                  // basketball
        Rule("ball", 522),                  // croquet ball
        Rule("ball", 574),                  // golf ball
        Rule("ball", 722),                  // ping-pong ball
        Rule("ball", 768),                  // rugby ball
        Rule("ball", 805),                  // soccer ball
        Rule("ball", 852),                  // tennis ball
        Rule("ball", 890),                  // volleyball
        Rule("guitar", 402),                // acoustic guitar
        Rule("guitar", 546),                // electric guitar
        Rule("piano", 579),                 // grand piano
        Rule("piano", 881),                 // upright
        Rule("chair", 423),                 // barber chair
        Rule("chair", 559),                 // folding chair
        Rule("chair", 765),                 // rocking chair
        // A throne is a chair to a shopper; the park bench is not a chair and keeps its name.
        Rule("chair", 857),                 // throne
        Rule("table", 532),                 // dining table
        Rule("sofa", 831),                  // studio couch
        // A crib is a bed; the cradle and the bassinet keep their own names.
        Rule("bed", 564),                   // four-poster
        Rule("bed", 520),                   // crib
        Rule("cup", 968),                   // cup
        Rule("cup", 504),                   // coffee mug
        Rule("bottle", 440),                // beer bottle
        Rule("bottle", 907),                // wine bottle
        Rule("bottle", 898),                // water bottle
        Rule("bottle", 737),                // pop bottle
        Rule("bottle", 720),                // pill bottle
        Rule("clock", 409),                 // analog clock
        Rule("clock", 530),                 // digital clock
        Rule("clock", 892),                 // wall clock
        Rule("phone", 487),                 // cellular telephone
        Rule("phone", 528),                 // dial telephone
        Rule("phone", 707),                 // pay-phone
        Rule("computer", 527),              // desktop computer
        Rule("computer", 620),              // laptop
        Rule("computer", 681),              // notebook
        Rule("computer", 590),              // hand-held computer
        Rule("lamp", 846),                  // table lamp
        Rule("lamp", 619),                  // lampshade
        // ImageNet's "rapeseed" pictures are fields of its yellow flowers.
        Rule("flower", 984),                // rapeseed
        Rule("flower", 985),                // daisy
        Rule("flower", 986),                // yellow lady's slipper
        Rule("fruit", 948, through: 957),   // Granny Smith ... pomegranate
        // "hip" is the rose hip.
        Rule("fruit", 989),                 // hip
        Rule("vegetable", 936, through: 947),// head cabbage ... mushroom
        Rule("vegetable", 987),             // corn
        // "ear" is an ear of maize.
        Rule("vegetable", 998),             // ear
        Rule("teddy bear", 850),            // teddy
        Rule("toy", 611),                   // jigsaw puzzle
        Rule("toy", 723),                   // pinwheel
        Rule("musical instrument", 401),    // accordion
        Rule("musical instrument", 420),    // banjo
        Rule("musical instrument", 432),    // bassoon
        Rule("musical instrument", 486),    // cello
        Rule("musical instrument", 494),    // chime
        Rule("musical instrument", 513),    // cornet
        Rule("musical instrument", 541),    // drum
        Rule("musical instrument", 542),    // drumstick
        Rule("musical instrument", 558),    // flute
        Rule("musical instrument", 566),    // French horn
        Rule("musical instrument", 577),    // gong
        Rule("musical instrument", 593),    // harmonica
        Rule("musical instrument", 594),    // harp
        Rule("musical instrument", 641),    // maraca
        Rule("musical instrument", 642),    // marimba
        Rule("musical instrument", 683),    // oboe
        Rule("musical instrument", 684),    // ocarina
        Rule("musical instrument", 687),    // organ
        Rule("musical instrument", 699),    // panpipe
        // "pick" is a guitar plectrum; ImageNet's "brass" is a memorial plaque, not an instrument.
        Rule("musical instrument", 714),    // pick
        Rule("musical instrument", 776),    // sax
        Rule("musical instrument", 822),    // steel drum
        Rule("musical instrument", 875),    // trombone
        Rule("musical instrument", 889),    // violin
        Rule("tool", 477),                  // carpenter's kit
        Rule("tool", 491),                  // chain saw
        Rule("tool", 587),                  // hammer
        Rule("tool", 596),                  // hatchet
        // ImageNet's "plane" is a carpenter's plane, not an aircraft.
        Rule("tool", 726),                  // plane
        Rule("tool", 740),                  // power drill
        Rule("tool", 784),                  // screwdriver
        Rule("tool", 792),                  // shovel
        // MARK: Plainer names for single classes (torchvision's short name misleads or is not the everyday word)
        Rule("elephant", 101),              // tusker
        Rule("newt", 27),                   // eft
        Rule("horse", 339),                 // sorrel
        Rule("pig", 341),                   // hog
        Rule("rabbit", 330),                // wood rabbit
        Rule("angora rabbit", 332),         // Angora
        // "Madagascar cat" is the ring-tailed lemur: not a cat.
        Rule("lemur", 383),                 // Madagascar cat
        Rule("red panda", 387),             // lesser panda
        Rule("amphibious vehicle", 408),    // amphibian
        Rule("beehive", 410),               // apiary
        Rule("dustbin", 412),               // ashcan
        Rule("ballpoint pen", 418),         // ballpoint
        Rule("banister", 421),              // bannister
        Rule("wheelbarrow", 428),           // barrow
        Rule("lighthouse", 437),            // beacon
        Rule("memorial plaque", 458),       // brass
        Rule("cauldron", 469),              // caldron
        Rule("chest of drawers", 493),      // chiffonier
        Rule("sweet shop", 509),            // confectionery
        Rule("slow cooker", 521),           // Crock Pot
        Rule("dishcloth", 533),             // dishrag
        Rule("filing cabinet", 553),        // file
        Rule("gas mask", 570),              // gasmask
        Rule("hair dryer", 589),            // hand blower
        Rule("combine harvester", 595),     // harvester
        Rule("clothes iron", 606),          // iron
        Rule("rickshaw", 612),              // jinrikisha
        Rule("magnifying glass", 633),      // loupe
        Rule("sawmill", 634),               // lumbermill
        Rule("mortar and pestle", 666),     // mortar
        Rule("tent", 672),                  // mountain tent
        Rule("computer mouse", 673),        // mouse
        Rule("baby bottle", 680),           // nipple
        Rule("pyjamas", 697),               // pajama
        Rule("flowerpot", 738),             // pot
        Rule("hockey puck", 746),           // puck
        Rule("ruler", 769),                 // rule
        Rule("weighing scale", 778),        // scale
        Rule("slot machine", 800),          // slot
        Rule("mop", 840),                   // swab
        Rule("light switch", 844),          // switch
        Rule("thatched roof", 853),         // thatch
        Rule("vacuum cleaner", 882),        // vacuum
        Rule("washing machine", 897),       // washer
        Rule("shipwreck", 913),             // wreck
        Rule("website", 916),               // web site
        Rule("hot dog", 934),               // hotdog
        Rule("mountain", 970),              // alp
        Rule("baseball player", 981),       // ballplayer
        Rule("toilet paper", 999),          // toilet tissue
    ]

    // MARK: - Tables, built once

    struct Tables: Sendable {
        /// Type of each class.
        let typeOfClass: [String]
        /// Vocabulary first, then the other types sorted.
        let allTypes: [String]
        /// Position in `allTypes` of each type.
        let indexOfType: [String: Int]
        /// Position in `allTypes` of each class's type.
        let typeIndexOfClass: [Int]
        /// The classes of each type, indexed like `allTypes`, ascending.
        let classesOfType: [[Int]]

        init(names: [String], rules: [Rule], vocabulary: [String]) {
            var typeOfClass = names.map { $0.lowercased() }
            for rule in rules {
                for id in rule.classes where typeOfClass.indices.contains(id) { typeOfClass[id] = rule.type }
            }
            let others = Set(typeOfClass).subtracting(vocabulary).sorted()
            let allTypes = vocabulary + others
            var indexOfType: [String: Int] = [:]
            for (index, type) in allTypes.enumerated() where indexOfType[type] == nil { indexOfType[type] = index }
            var classesOfType = [[Int]](repeating: [], count: allTypes.count)
            var typeIndexOfClass: [Int] = []
            typeIndexOfClass.reserveCapacity(typeOfClass.count)
            for (id, type) in typeOfClass.enumerated() {
                // Every class's type is in allTypes by construction.
                let index = indexOfType[type] ?? 0
                typeIndexOfClass.append(index)
                classesOfType[index].append(id)
            }
            self.typeOfClass = typeOfClass
            self.allTypes = allTypes
            self.indexOfType = indexOfType
            self.typeIndexOfClass = typeIndexOfClass
            self.classesOfType = classesOfType
        }
    }

    static let tables = Tables(names: ImageNetClasses.names, rules: rules, vocabulary: fashionNames + groupNames)
}
