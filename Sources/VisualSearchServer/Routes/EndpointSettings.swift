import Foundation
import ImageOps

/// What a route collection needs of the server's settings: who may call it,
/// how large a body may be and how long an answer may take. Routes take
/// these and nothing else of ``ServerConfiguration`` (``ServerConfiguration/endpoints``),
/// so a route mounted in your own application is configured on its own.
public struct EndpointSettings: Sendable {
    /// The keys callers must present; open (no keys) by default.
    public var credentials: ServerCredentials
    /// The largest request body read, in bytes.
    public var maxBodyBytes: Int
    /// The longest an endpoint may take before the caller gets a 503, in seconds.
    public var requestTimeout: Double
    /// What error messages call a library setting (``ServerConfiguration/settingNames``).
    public var settingNames: [SettingName: String]
    /// What one search may ask for: results a page, paging depth, discover objects (400 beyond). ``QueryLimits``' defaults unless set.
    public var queries = QueryLimits()

    public init(credentials: ServerCredentials = ServerCredentials(), maxBodyBytes: Int = 16 << 20, requestTimeout: Double = 30,
                settingNames: [SettingName: String] = [:]) {
        self.credentials = credentials
        self.maxBodyBytes = maxBodyBytes
        self.requestTimeout = requestTimeout
        self.settingNames = settingNames
    }
}

extension ServerConfiguration {
    /// The settings every route collection of this server takes.
    public var endpoints: EndpointSettings {
        var settings = EndpointSettings(credentials: credentials, maxBodyBytes: maxBodyBytes, requestTimeout: requestTimeout, settingNames: settingNames)
        settings.queries = limits.queries
        return settings
    }
}
