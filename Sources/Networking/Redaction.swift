import Foundation

/// Makes URLs safe to log: credentials never reach an error, a log line or a terminal.
///
/// The values of secret-bearing query parameters become `***` and any
/// `user:password@` is removed; everything else, including the order and
/// spelling of the rest, is kept.
///
/// ```swift
/// Redaction.url("https://u:p@api.example/search?access_key=AK&q=red&Sig=9f")
/// // "https://api.example/search?access_key=***&q=red&Sig=***"
/// ```
public enum Redaction {
    /// Query parameter names whose values are secrets, compared case-insensitively
    /// after percent-decoding: `access_key`, `app_key`, `secret`, `secret_key`,
    /// `key`, `token`, `password`, `sig`, `signature`, `code` (the tracker's code).
    static let secretParameters: Set<String> = [
        "access_key", "app_key", "secret", "secret_key", "key", "token", "password", "sig", "signature", "code",
    ]

    /// The URL as text with secret query values replaced by `***` and any user information removed.
    public static func url(_ url: URL) -> String {
        self.url(url.absoluteString)
    }

    /// The same for a URL already written as text. Text that is not a URL
    /// comes back unchanged apart from a query-like tail after `?`, which is redacted the same way.
    public static func url(_ text: String) -> String {
        var rest = Substring(text)
        var result = ""
        // scheme://[userinfo@]authority
        if let schemeEnd = rest.range(of: "://") {
            result += rest[..<schemeEnd.upperBound]
            rest = rest[schemeEnd.upperBound...]
            let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
            let authority = rest[..<authorityEnd]
            if let at = authority.lastIndex(of: "@") {
                result += authority[authority.index(after: at)...]
            } else {
                result += authority
            }
            rest = rest[authorityEnd...]
        }
        guard let questionMark = rest.firstIndex(of: "?") else { return result + rest }
        result += rest[...questionMark]
        rest = rest[rest.index(after: questionMark)...]
        let fragmentStart = rest.firstIndex(of: "#") ?? rest.endIndex
        let query = rest[..<fragmentStart]
        result += query.split(separator: "&", omittingEmptySubsequences: false).map(redactParameter).joined(separator: "&")
        return result + rest[fragmentStart...]
    }

    /// `name=value` with the value hidden when the name is a secret's.
    static func redactParameter(_ parameter: Substring) -> String {
        guard let equals = parameter.firstIndex(of: "=") else { return String(parameter) }
        let rawName = parameter[..<equals]
        let name = (String(rawName).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String(rawName)).lowercased()
        return secretParameters.contains(name) ? rawName + "=***" : String(parameter)
    }
}
