/// The version of vsearch: the one place it is written. `vsearch --version`,
/// the client's `User-Agent` and the server's `Server` header all say this.
public enum VSearchVersion {
    public static let current = "0.3.0"
}
