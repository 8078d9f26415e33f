/// The one HTTP layer of vsearch: the client, the engine's `im_url` fetch and
/// the tracker all send through ``HTTPClient`` over an ``HTTPTransport``.
///
/// - one async transport (``URLSessionTransport``): no thread blocked, an
///   idle timeout it enforces itself, a response size cap enforced while the
///   body streams in, bounded redirects checked against a ``DestinationPolicy``;
/// - one retry policy (``RetryPolicy``): capped exponential backoff with full
///   jitter, `Retry-After` in seconds or as an HTTP date;
/// - one way to print a URL (``Redaction``): secrets never reach a message.
public enum Networking {}
