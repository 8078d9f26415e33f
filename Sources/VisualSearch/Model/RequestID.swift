/// Request ids like the hosted service's `reqid`: a 19-digit number as a
/// string, which tracking events quote as `queryId`.
public enum RequestID {
    /// A fresh id.
    public static func make() -> String {
        String(UInt64.random(in: 1_000_000_000_000_000_000...9_999_999_999_999_999_999))
    }
}
