import ArgumentParser
import Foundation
import SearchEngine
import VisualSearch

/// `--endpoint` and credentials: run a query command against the hosted
/// service or a `vsearch serve` instead of the local catalog. The same
/// `--app-key` and `--access-key KEY:SECRET` forms as `vsearch serve`.
struct ServiceOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Query this ViSearch-compatible service instead of the local catalog, e.g. http://127.0.0.1:8080 or https://visearch.visenze.com. Default $VSEARCH_ENDPOINT.", valueName: "url"))
    var endpoint: String?

    @Option(name: .customLong("app-key"), help: ArgumentHelp("App key (sent as access_key; ProductSearch's app_key). Default $VSEARCH_APP_KEY.", valueName: "key"))
    var appKey: String?

    @Option(name: .customLong("access-key"), help: ArgumentHelp("Access key and secret for HTTP Basic auth, as KEY:SECRET; or KEY with the secret in $VSEARCH_SECRET_KEY (keeps it out of `ps`).", valueName: "key:secret"))
    var accessKey: String?

    @Option(name: .customLong("placement-id"), help: "ProductSearch placement id.")
    var placementID = 1

    @Option(help: "Seconds without progress before a remote request fails.")
    var timeout: Double = 10

    var environment: [String: String] { ProcessInfo.processInfo.environment }

    /// The endpoint URL when remote mode is on.
    var endpointURL: URL? {
        guard let text = endpoint ?? environment["VSEARCH_ENDPOINT"], !text.isEmpty else { return nil }
        return URL(string: text)
    }

    func validate() throws {
        if let text = endpoint ?? environment["VSEARCH_ENDPOINT"], !text.isEmpty {
            guard let url = URL(string: text), let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https", url.host != nil else {
                throw ValidationError("--endpoint \"\(text)\" is not an http(s) URL such as http://127.0.0.1:8080")
            }
        }
        if let accessKey, !accessKey.contains(":"), (environment["VSEARCH_SECRET_KEY"] ?? "").isEmpty {
            throw ValidationError("--access-key needs KEY:SECRET, or the secret in the environment variable VSEARCH_SECRET_KEY")
        }
        guard timeout > 0 else { throw ValidationError("--timeout must be positive") }
        guard placementID >= 0 else { throw ValidationError("--placement-id must not be negative") }
    }

    /// The credentials given.
    var credentials: ClientConfiguration.Credentials {
        if let accessKey {
            let parts = accessKey.split(separator: ":", maxSplits: 1).map(String.init)
            return .accessKey(parts[0], secret: parts.count == 2 ? parts[1] : environment["VSEARCH_SECRET_KEY"] ?? "")
        }
        if let key = appKey ?? environment["VSEARCH_APP_KEY"], !key.isEmpty { return .appKey(key) }
        return .none
    }

    /// The client for remote mode.
    func client(endpoint url: URL) -> ViSearchClient {
        let credentials = self.credentials
        let product = ProductSearchConfiguration(baseURL: url, appKey: credentials.key ?? "", placementID: placementID)
        return ViSearchClient(configuration: ClientConfiguration(baseURL: url, credentials: credentials, productSearch: product,
                                                                 timeout: timeout))
    }
}

/// A command that asks a ``VisualSearchService`` one thing: written once,
/// it runs against the local catalog's engine or, with `--endpoint`, the HTTP client.
protocol ServiceCall {
    associatedtype Answer: Encodable & Sendable
    /// The endpoint's method name, for failure output.
    static var method: String { get }
    func call<Service: VisualSearchService>(_ service: Service) async throws(Service.Failure) -> Answer
    /// How the local engine blends recommendations (the defaults unless the command has the flags).
    var recommendationBlend: RecommendationBlend { get }
    /// The metadata fields the call names (`--fl`, `--facets`; `*` is every field): on a local
    /// catalog an undeclared one is refused before the call, as `--fq` is, so a typo is never silent.
    var namedFields: [String] { get }
}

extension ServiceCall {
    var recommendationBlend: RecommendationBlend { RecommendationBlend() }
    var namedFields: [String] { [] }
}

/// Runs a ``ServiceCall`` locally or remotely; failures are reported and become exit codes.
enum ServiceRunner {
    /// Runs `body` with the answer, and the engine when the call ran locally (for sources of results), the
    /// catalog still open. A failure of the call is reported and becomes an exit code; with `json`, it also
    /// prints the API's failure shape on stdout, so machine output is always JSON. What `body` throws is passed on.
    static func run<Call: ServiceCall, Result>(_ call: Call, catalog: CatalogOptions, model: ModelOptions, service: ServiceOptions, json: Bool,
                                               _ body: (Call.Answer, VisualSearchEngine?) async throws -> Result) async throws -> Result {
        var answered = false
        do {
            if let url = service.endpointURL {
                let answer = try await call.call(service.client(endpoint: url))
                answered = true
                return try await body(answer, nil)
            }
            return try await catalog.withEngineUnreported(model: model, recommendations: call.recommendationBlend) { engine in
                let schema = try await engine.catalog.schema()
                if let unknown = call.namedFields.first(where: { $0 != "*" && schema.fields[$0] == nil }) {
                    throw VisualSearchError.unknownField(unknown, known: schema.fields.keys.sorted())
                }
                let answer: Call.Answer
                do throws(VisualSearchError) {
                    answer = try await call.call(engine)
                } catch {
                    // "Image not found" from a catalog with nothing in it: say that, it is the likelier mistake.
                    let missing: String? = if case .imageNotFound(let name) = error { name } else { nil }
                    let count = missing == nil ? nil : try? await engine.catalog.count()
                    if let missing, count == 0 { throw InputError.emptyCatalog(location: catalog.location.description, name: missing) }
                    throw error
                }
                answered = true
                return try await body(answer, engine)
            }
        } catch let code as ExitCode {
            throw code
        } catch where answered {
            throw error
        } catch {
            if json {
                let message = SettingFlags.rename(CLIError.searchError(error).map(CLIError.message(for:)) ?? "\(error)")
                Terminal.json(SearchResponse(status: .fail, method: Call.method, error: [message], page: 0, limit: 0, total: 0, result: []))
            }
            throw CLIError.report(error)
        }
    }
}
