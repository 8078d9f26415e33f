import Foundation
import Testing
@testable import VisualSearch

/// The sample bodies of docs/wire-protocol.md §3.4 and §4.4, and the SDKs' variants, decode.
@Suite("Golden response decoding")
struct ResponseDecodingTests {
    func decode<T: Decodable>(_ type: T.Type, _ text: String) throws -> T {
        try JSONDecoder().decode(T.self, from: Data(text.utf8))
    }

    @Test("search with facets (string items and a numeric range)")
    func search() throws {
        let response = try decode(SearchResponse.self, """
            {"status":"OK","method":"search","error":[],"page":1,"limit":2,"total":240,
             "result":[{"im_name":"dress_017","score":0.9132,"value_map":{"price":"59.900000","brand":"acme"}},
                       {"im_name":"dress_203","score":0.8871,"value_map":{"price":"35.000000","brand":"zeta"}}],
             "facets":[{"key":"brand","items":[{"value":"acme","count":120},{"value":"zeta","count":80}]},
                       {"key":"price","range":{"min":"9","max":"420"}}],
             "reqid":"1158812345678901234"}
            """)
        #expect(response.total == 240 && response.result.count == 2 && response.requestID == "1158812345678901234")
        #expect(response.result[0].valueMap?["price"] == "59.900000")
        #expect(response.facets?[0].items?[1] == Facet.Item(value: "zeta", count: 80))
        #expect(response.facets?[1].range == Facet.Range(min: "9", max: "420"))
    }

    @Test("uploadsearch with product types, im_id, no scores")
    func upload() throws {
        let response = try decode(SearchResponse.self, """
            {"status":"OK","method":"uploadsearch","error":[],"page":1,"limit":2,"total":1000,
             "product_types":[{"type":"top","score":0.93,"box":[84,223,425,639],"attributes":{}},{"type":"bag","score":0.24,"box":[538,437,684,694],"attributes":{}}],
             "product_types_list":[{"type":"bag","attributes_list":{}}],
             "result":[{"im_name":"top_88","score":0.71},{"im_name":"top_12","score":0.69}],
             "im_id":"20240101a1b2c3d4e5f6.jpg","reqid":"1158812345678905678"}
            """)
        #expect(response.imageID == "20240101a1b2c3d4e5f6.jpg" && response.productTypes?.first?.box == [84, 223, 425, 639])
        #expect(response.result[1].valueMap == nil)
    }

    @Test("the error shape, and Android's \"Fail\"")
    func failure() throws {
        let response = try decode(SearchResponse.self, #"{"status":"Fail","method":"search","error":["Image not found with im_name."],"page":0,"limit":0,"total":0,"result":[]}"#)
        #expect(response.status == .fail && response.error == ["Image not found with im_name."])
    }

    @Test("Java's numeric facet range and numeric value_map values are read as strings")
    func javaNumbers() throws {
        let response = try decode(SearchResponse.self, #"{"status":"OK","method":"search","result":[{"im_name":"a","value_map":{"price":12.5,"count":3}}],"facets":[{"key":"price","range":{"min":1,"max":420}}]}"#)
        #expect(response.result[0].valueMap == ["price": "12.5", "count": "3"])
        #expect(response.facets?[0].range == Facet.Range(min: "1", max: "420"))
        #expect(response.page == 0 && response.requestID == nil)  // missing optional fields are absent, never sentinels
    }

    @Test("ProductSearch search_by_image with nested data")
    func productSearch() throws {
        let response = try decode(ProductSearchResponse.self, """
            {"reqid":"018f2a9c7d10aa55b1c3e4f5a6b7c8","status":"OK","method":"product/search_by_image","im_id":"20240101aa11bb22cc33.jpg",
             "page":1,"limit":2,"total":956,
             "product_types":[{"type":"top","score":0.912,"box":[132,285,682,931],"attributes":{}}],
             "catalog_fields_mapping":{"product_id":"sku","main_image_url":"medium_image","title":"product_name","price":"sale_price"},
             "result":[{"product_id":"SKU-1","main_image_url":"https://cdn.example/1.jpg","score":0.83,
                        "data":{"product_name":"Linen shirt","sale_price":{"currency":"SGD","value":"44.0"}}},
                       {"product_id":"SKU-2","main_image_url":"https://cdn.example/2.jpg","score":0.81,
                        "data":{"product_name":"Cotton tee","sale_price":{"currency":"SGD","value":"19.0"}}}],
             "facets":[{"key":"brand_name","items":[{"value":"Acme","count":30}]}]}
            """)
        #expect(response.result?.count == 2 && response.catalogFieldsMapping?["product_id"] == "sku")
        #expect(response.result?[0].data?["sale_price"] == .object(["currency": .string("SGD"), "value": .string("44.0")]))
        #expect(response.result?[0].data?["product_name"]?.stringValue == "Linen shirt")
    }

    @Test("ProductSearch error object")
    func productError() throws {
        let response = try decode(ProductSearchResponse.self, #"{"reqid":"x","status":"fail","method":"product/search_by_image","error":{"code":401,"message":"Invalid app key"}}"#)
        #expect(response.error == .init(code: 401, message: "Invalid app key") && response.result == nil)
    }

    @Test("data API: insert with a numeric trans_id and error objects; insert status")
    func dataAPI() throws {
        let insert = try decode(DataAPIResponse.self, #"{"status":"OK","method":"insert","trans_id":311412450342764544,"error":[{"im_name":"a","index":0,"error_code":104,"error_message":"Image download failed"}],"total":1}"#)
        #expect(insert.transactionID == "311412450342764544" && insert.error.first?.message == "Image download failed")
        let status = try decode(InsertStatusResponse.self, #"{"status":"OK","method":"insert/status","result":[{"trans_id":"311412450342764544","processed_percent":100,"total":1,"success_count":1,"fail_count":0,"start_time":"2024-01-01T00:00:00Z","update_time":"2024-01-01T00:00:01Z"}]}"#)
        #expect(status.result.first?.isFinished == true && status.result.first?.errorList.isEmpty == true)
    }

    @Test("what the engine encodes decodes back to the same value")
    func engineRoundTrip() throws {
        let response = SearchResponse(method: "search", page: 1, limit: 1, total: 1,
                                      result: [ImageResult(imageName: "a", score: 0.5, valueMap: ["b": "c"])], requestID: "1",
                                      facets: [Facet(key: "b", items: [Facet.Item(value: "c", count: 1)])])
        #expect(try JSONDecoder().decode(SearchResponse.self, from: JSONEncoder().encode(response)) == response)
    }
}
