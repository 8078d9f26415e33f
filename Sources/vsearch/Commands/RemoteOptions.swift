import ArgumentParser
import Foundation
import VisualSearch

/// `--endpoint` and credentials: run a query command against the hosted
/// service or a `vsearch serve` instead of the local catalog.
struct RemoteOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Query this ViSearch-compatible service instead of the local catalog, e.g. http://127.0.0.1:8080 or https://visearch.visenze.com. Default: $VSEARCH_ENDPOINT.", valueName: "url"))
    var endpoint: String?

    @Option(name: .customLong("app-key"), help: ArgumentHelp("App key (sent as access_key). Default: $VSEARCH_APP_KEY.", valueName: "key"))
    var appKey: String?

    @Option(name: .customLong("access-key"), help: ArgumentHelp("Access key for Basic auth, with the secret in $VSEARCH_SECRET_KEY.", valueName: "key"))
    var accessKey: String?

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
        if accessKey != nil && (environment["VSEARCH_SECRET_KEY"] ?? "").isEmpty {
            throw ValidationError("--access-key needs the secret key in the environment variable VSEARCH_SECRET_KEY")
        }
        guard timeout > 0 else { throw ValidationError("--timeout must be positive") }
    }

    /// The client configuration for remote mode.
    func configuration(endpoint url: URL) -> ClientConfiguration {
        let credentials: ClientConfiguration.Credentials
        if let accessKey {
            credentials = .accessKey(accessKey, secret: environment["VSEARCH_SECRET_KEY"] ?? "")
        } else if let key = appKey ?? environment["VSEARCH_APP_KEY"], !key.isEmpty {
            credentials = .appKey(key)
        } else {
            credentials = .none
        }
        return ClientConfiguration(baseURL: url, credentials: credentials, timeout: timeout)
    }
}
