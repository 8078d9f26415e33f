import Foundation
import SearchEngine
import Testing
import Tracking
import VisualSearch

/// The ``CatalogReader`` contract: counts, names, vectors, export, `fq` filters,
/// value maps and facets over ``ConformanceSample``, written only against
/// `any CatalogStore` and run by each store's test target.
public enum CatalogReaderConformance {
    struct FilterCase: Sendable, CustomTestStringConvertible {
        let filters: [Filter]
        let expected: Set<String>
        init(_ field: String, _ value: String, _ expected: Set<String>) {
            filters = [Filter(field: field, value: value)]
            self.expected = expected
        }
        init(_ filters: [Filter], _ expected: Set<String>) {
            self.filters = filters
            self.expected = expected
        }
        var testDescription: String { filters.map { "\($0.field):\($0.value)" }.joined(separator: " AND ") + " → \(expected.sorted())" }
    }

    static let stringCases: [FilterCase] = [
        FilterCase("brand", "acme", ["a", "b"]),
        FilterCase("brand", "Acme", ["e"]),
        FilterCase("brand", "ACME", []),
        FilterCase("brand", "acm", []),
        FilterCase("brand", "acme ", []),
        FilterCase("brand", "' OR '1'='1", []),
        FilterCase("brand", "x\"; DROP TABLE images; --", []),
        FilterCase("brand", "%", []),
        FilterCase("brand", "*", []),
        FilterCase("color", "red", []),
    ]

    static let textCases: [FilterCase] = [
        FilterCase("title", "shoe", ["a", "c"]),
        FilterCase("title", "SHOE", ["a", "c"]),
        FilterCase("title", "shoe red", ["a"]),
        FilterCase("title", "Red shoe running", ["a"]),
        FilterCase("title", "cafe", ["b"]),
        FilterCase("title", "CAFÉ MUG", ["b"]),
        FilterCase("title", "lait café", ["b"]),
        FilterCase("title", "shoe mug", []),
        FilterCase("title", "sho", []),
        // Query syntax is never interpreted: operators, columns, quotes and SQL are plain words.
        FilterCase("title", "shoe OR mug", []),
        FilterCase("title", "shoe NOT red", []),
        FilterCase("title", "NEAR(shoe red)", []),
        FilterCase("title", "title:shoe", []),
        FilterCase("title", "\"quoted\" OR", ["d"]),
        FilterCase("title", "'; DROP TABLE images; --", []),
        FilterCase("title", "\") OR 1=1 --", []),
    ]

    static let numberCases: [FilterCase] = [
        FilterCase("price", "20", ["b"]),
        FilterCase("price", "20.0", ["b"]),
        FilterCase("price", " 15 ", ["d"]),
        FilterCase("price", "9.5,20", ["a", "b", "d"]),
        FilterCase("price", "420.2,420.2", ["c"]),
        FilterCase("price", "9.6,19.9", ["d"]),
        FilterCase("price", "1000,2000", []),
        FilterCase("price", "-1e9,1e9", ["a", "b", "c", "d"]),
        FilterCase("count", "-2", ["d"]),
        FilterCase("count", "3", ["a"]),
        FilterCase("count", "3.0", ["a"]),
        FilterCase("count", "0,7", ["a", "c", "e"]),
        FilterCase("rating", "0,5", []),
    ]

    static let combinedCases: [FilterCase] = [
        FilterCase([Filter(field: "brand", value: "acme"), Filter(field: "title", value: "shoe")], ["a"]),
        FilterCase([Filter(field: "brand", value: "acme"), Filter(field: "price", value: "10,30")], ["b"]),
        FilterCase([Filter(field: "count", value: "0,10"), Filter(field: "price", value: "0,100")], ["a", "b"]),
        FilterCase([Filter(field: "brand", value: "acme"), Filter(field: "brand", value: "beta")], []),
    ]

    /// A hostile value, shown escaped in test output (it may hold control characters).
    struct Hostile: Sendable, CustomTestStringConvertible {
        let value: String
        var testDescription: String { value.count > 40 ? String(value.prefix(40).debugDescription) + "…" : value.debugDescription }
    }

    /// Every check of the contract, each naming the stores it applies to.
    public static var checks: [ConformanceCheck] {
        var checks: [ConformanceCheck] = []
        checks.append(ConformanceCheck("imageNames pages through the names in byte order: upper case before lower, accents after ASCII", stores: [.sqlite, .postgreSQL, .inMemory]) { kind in
            let factory = StoreFactory(kind)
            try await ConformanceSample.withSeeded(factory) { seeded async throws in
                try await seeded.store.upsert([Items.item("B-upper", seed: 7), Items.item("é", seed: 8), Items.item("a0", seed: 9)], schema: ConformanceSample.schema)
                let all = ["B-upper", "a", "a0", "b", "c", "d", "e", "é"]
                #expect(try await seeded.store.imageNames(offset: 0, limit: 100) == all)
                #expect(try await seeded.store.imageNames(offset: 0, limit: 3) == Array(all[0..<3]))
                #expect(try await seeded.store.imageNames(offset: 3, limit: 3) == Array(all[3..<6]))
                #expect(try await seeded.store.imageNames(offset: 6, limit: 3) == Array(all[6...]))
                #expect(try await seeded.store.imageNames(offset: 8, limit: 3) == [])
            }
        })
        checks.append(ConformanceCheck("count and contentHashes reflect the images", stores: [.sqlite, .postgreSQL, .inMemory]) { kind in
            let factory = StoreFactory(kind)
            try await ConformanceSample.withSeeded(factory) { seeded async throws in
                #expect(try await seeded.store.count() == 5)
                #expect(try await seeded.store.contentHashes() == ["a": "hash-a-1", "b": "hash-b-2", "c": "hash-c-3", "d": "hash-d-4", "e": "hash-e-5"])
            }
        })
        checks.append(ConformanceCheck("loadIndex round-trips names, sources, vectors and palettes, with one distinct id per image", stores: [.sqlite, .postgreSQL, .inMemory]) { kind in
            let factory = StoreFactory(kind)
            try await ConformanceSample.withSeeded(factory) { seeded async throws in
                let index = try await seeded.store.loadIndex()
                #expect(index.count == 5 && index.dimensions == ColorFeatures.dimensions)
                #expect(Set(index.ids).count == 5)
                for (seed, name) in ["a", "b", "c", "d", "e"].enumerated().map({ ($0.offset + 1, $0.element) }) {
                    let row = try #require(index.row(named: name))
                    #expect(index.names[row] == name)
                    #expect(index.sources[row] == "/images/\(name).jpg")
                    #expect(index.vector(at: row) == Items.vector(seed), "\(name)'s vector")
                    #expect(index.palettes[row] == Items.palette(seed), "\(name)'s palette")
                    #expect(index.row(id: index.ids[row]) == row)
                }
                // The order is stable: loading again gives the same rows.
                let again = try await seeded.store.loadIndex()
                #expect(again.names == index.names && again.ids == index.ids)
            }
        })
        checks.append(ConformanceCheck("export lists every image by im_name with its stored metadata", stores: [.sqlite, .postgreSQL, .inMemory]) { kind in
            let factory = StoreFactory(kind)
            try await ConformanceSample.withSeeded(factory) { seeded async throws in
                let exported = try await seeded.store.export()
                #expect(exported.map(\.imageName) == ["a", "b", "c", "d", "e"])
                #expect(exported[0] == ExportedImage(imageName: "a", source: "/images/a.jpg", width: 101, height: 51,
                                                     metadata: ["brand": "acme", "title": "Red Running Shoe", "price": "9.5", "count": "3"]))
                #expect(exported[4].metadata == ["brand": "Acme", "count": "7"])
            }
        })
        for filter in stringCases {
            checks.append(ConformanceCheck("string fields match exactly (case-sensitive, no patterns)", case: filter, stores: [.sqlite, .postgreSQL, .inMemory]) { kind in
                let factory = StoreFactory(kind)
                try await ConformanceSample.withSeeded(factory) { seeded async throws in
                    #expect(try await seeded.matching(filter.filters) == filter.expected)
                }
            })
        }
        for filter in textCases {
            checks.append(ConformanceCheck("text fields match by words: all of them, any order, case- and accent-insensitive, no query syntax", case: filter, stores: [.sqlite, .postgreSQL, .inMemory]) { kind in
                let factory = StoreFactory(kind)
                try await ConformanceSample.withSeeded(factory) { seeded async throws in
                    #expect(try await seeded.matching(filter.filters) == filter.expected)
                    #expect(try await seeded.store.count() == 5)
                    #expect(try await seeded.store.integrityCheck() == "ok")
                }
            })
        }
        for filter in numberCases {
            checks.append(ConformanceCheck("int and float fields match a value exactly or min,max inclusively", case: filter, stores: [.sqlite, .postgreSQL, .inMemory]) { kind in
                let factory = StoreFactory(kind)
                try await ConformanceSample.withSeeded(factory) { seeded async throws in
                    #expect(try await seeded.matching(filter.filters) == filter.expected)
                }
            })
        }
        for filter in combinedCases {
            checks.append(ConformanceCheck("several filters combine with AND", case: filter, stores: [.sqlite, .postgreSQL, .inMemory]) { kind in
                let factory = StoreFactory(kind)
                try await ConformanceSample.withSeeded(factory) { seeded async throws in
                    #expect(try await seeded.matching(filter.filters) == filter.expected)
                }
            })
        }
        checks.append(ConformanceCheck("no filters: nil, meaning every image", stores: [.sqlite, .postgreSQL, .inMemory]) { kind in
            let factory = StoreFactory(kind)
            try await ConformanceSample.withSeeded(factory) { seeded async throws in
                #expect(try await seeded.store.matchingIDs([], schema: ConformanceSample.schema) == nil)
            }
        })
        for hostile in ["*", "\"", "'", "-", "^", "+", "(", "\" \"", "a\"b", "NEAR", "AND", "\u{0}", "shoe\u{0}red", "\u{7}\u{1B}[0m", "shoe*", "{title}: shoe", String(repeating: "shoe ", count: 500)].map(Hostile.init) {
            checks.append(ConformanceCheck("hostile text is harmless: it matches nothing or is refused as a parameter, and the catalog is intact", case: hostile, stores: [.sqlite, .postgreSQL, .inMemory]) { kind in
                let factory = StoreFactory(kind)
                let value = hostile.value
                try await ConformanceSample.withSeeded(factory) { seeded async throws in
                    do {
                        let matched = try #require(try await seeded.matching([Filter(field: "title", value: value)]))
                        #expect(matched.isSubset(of: ["a", "c"]), "\(matched) for \(value.debugDescription)")
                    } catch let error as CatalogStoreError {
                        guard case .invalidValue(let name, _) = error else {
                            Issue.record("\(value.debugDescription) gave \(String(describing: error).debugDescription), not an invalid parameter")
                            return
                        }
                        #expect(name == "fq")
                    }
                    #expect(try await seeded.store.count() == 5)
                    #expect(try await seeded.store.integrityCheck() == "ok")
                }
            })
        }
        for field in ["nope", "im_name", "Brand", "brand) OR 1=1 --", "'; DROP TABLE images; --", ""] {
            checks.append(ConformanceCheck("an undeclared field is unknownField, listing the declared ones", case: field, stores: [.sqlite, .postgreSQL, .inMemory]) { kind in
                let factory = StoreFactory(kind)
                try await ConformanceSample.withSeeded(factory) { seeded async throws in
                    let schema = try await seeded.store.schema()
                    await #expect(throws: CatalogStoreError.unknownField(field, known: ConformanceSample.declaredFields)) {
                        try await seeded.store.matchingIDs([Filter(field: "brand", value: "acme"), Filter(field: field, value: "x")], schema: schema)
                    }
                    #expect(try await seeded.store.count() == 5)
                }
            })
        }
        for value in ["abc", "5,1", "1,2,3", "nan", ",", "inf,1", "", "1;DROP TABLE images"] {
            checks.append(ConformanceCheck("a malformed number is an invalid fq parameter naming the field", case: value, stores: [.sqlite, .postgreSQL, .inMemory]) { kind in
                let factory = StoreFactory(kind)
                try await ConformanceSample.withSeeded(factory) { seeded async throws in
                    await #expect {
                        try await seeded.store.matchingIDs([Filter(field: "price", value: value)], schema: ConformanceSample.schema)
                    } throws: { error in
                        guard case CatalogStoreError.invalidValue(let name, let reason) = error else { return false }
                        return name == "fq" && reason.contains("price")
                    }
                }
            })
        }
        checks.append(ConformanceCheck("valueMaps gives every field, or only the fields asked for; images without values have none", stores: [.sqlite, .postgreSQL, .inMemory]) { kind in
            let factory = StoreFactory(kind)
            try await ConformanceSample.withSeeded(factory) { seeded async throws in
                let a = try #require(seeded.ids["a"]), e = try #require(seeded.ids["e"])
                let all = try await seeded.store.valueMaps(for: [a, e], fields: nil)
                #expect(all == [a: ["brand": "acme", "title": "Red Running Shoe", "price": "9.5", "count": "3"],
                                e: ["brand": "Acme", "count": "7"]])
                let some = try await seeded.store.valueMaps(for: [a, e], fields: ["title", "count"])
                #expect(some == [a: ["title": "Red Running Shoe", "count": "3"], e: ["count": "7"]])
                #expect(try await seeded.store.valueMaps(for: [], fields: nil).isEmpty)
                #expect(try await seeded.store.valueMaps(for: [a], fields: []).values.allSatisfy(\.isEmpty))
                #expect(try await seeded.store.valueMaps(for: [a], fields: ["color"]).values.allSatisfy(\.isEmpty))
                #expect(try await seeded.store.valueMaps(for: [987_654_321], fields: nil).values.allSatisfy(\.isEmpty))
            }
        })
        checks.append(ConformanceCheck("facets: values by descending count then value; numeric min and max; nil range without values", stores: [.sqlite, .postgreSQL, .inMemory]) { kind in
            let factory = StoreFactory(kind)
            try await ConformanceSample.withSeeded(factory) { seeded async throws in
                let facets = try await seeded.store.facetCounts(["brand", "price", "count", "color", "rating"], schema: ConformanceSample.schema, ids: nil, limit: 10)
                #expect(facets == [
                    .values(field: "brand", counts: [(value: "acme", count: 2), (value: "Acme", count: 1), (value: "beta", count: 1), (value: "zeta", count: 1)]),
                    .range(field: "price", min: 9.5, max: 420.2),
                    .range(field: "count", min: -2, max: 10),
                    .values(field: "color", counts: []),
                    .range(field: "rating", min: nil, max: nil),
                ])
            }
        })
        checks.append(ConformanceCheck("facets: the limit keeps the most frequent values", stores: [.sqlite, .postgreSQL, .inMemory]) { kind in
            let factory = StoreFactory(kind)
            try await ConformanceSample.withSeeded(factory) { seeded async throws in
                #expect(try await seeded.store.facetCounts(["brand"], schema: ConformanceSample.schema, ids: nil, limit: 2)
                    == [.values(field: "brand", counts: [(value: "acme", count: 2), (value: "Acme", count: 1)])])
                #expect(try await seeded.store.facetCounts(["brand"], schema: ConformanceSample.schema, ids: nil, limit: 1)
                    == [.values(field: "brand", counts: [(value: "acme", count: 2)])])
            }
        })
        checks.append(ConformanceCheck("facets count only the given images; an empty scope has no values and no range", stores: [.sqlite, .postgreSQL, .inMemory]) { kind in
            let factory = StoreFactory(kind)
            try await ConformanceSample.withSeeded(factory) { seeded async throws in
                let scoped = try await seeded.store.facetCounts(["brand", "price"], schema: ConformanceSample.schema, ids: seeded.idsOf("c", "d", "e"), limit: 10)
                #expect(scoped == [
                    .values(field: "brand", counts: [(value: "Acme", count: 1), (value: "beta", count: 1), (value: "zeta", count: 1)]),
                    .range(field: "price", min: 15, max: 420.2),
                ])
                let none = try await seeded.store.facetCounts(["brand", "price"], schema: ConformanceSample.schema, ids: [], limit: 10)
                #expect(none == [.values(field: "brand", counts: []), .range(field: "price", min: nil, max: nil)])
            }
        })
        checks.append(ConformanceCheck("facets: * is every declared field (sorted), duplicates count once, an unknown field is unknownField", stores: [.sqlite, .postgreSQL, .inMemory]) { kind in
            let factory = StoreFactory(kind)
            try await ConformanceSample.withSeeded(factory) { seeded async throws in
                let all = try await seeded.store.facetCounts(["*", "brand"], schema: ConformanceSample.schema, ids: nil, limit: 10)
                #expect(all.map(\.field) == ConformanceSample.declaredFields)
                await #expect(throws: CatalogStoreError.unknownField("nope", known: ConformanceSample.declaredFields)) {
                    try await seeded.store.facetCounts(["brand", "nope"], schema: ConformanceSample.schema, ids: nil, limit: 10)
                }
            }
        })
        return checks
    }
}

extension FieldAggregate {
    /// The field an aggregate is about.
    var field: String {
        switch self {
        case .values(let field, _), .range(let field, _, _): field
        }
    }
}
