import SearchEngine
import ServiceLifecycle

/// The store's connection pool as a ServiceLifecycle `Service`: a server
/// adds the store to its `ServiceGroup` after its HTTP application, so on
/// SIGTERM the group first drains the requests in flight (and the insert
/// transactions save their progress), then closes the pool — never the other
/// way round.
///
/// The pool itself starts when the store opens (``open(_:creating:)`` checks
/// the catalog before anything is served, and a command line has no group);
/// `run()` is its lifetime in the group: it returns once the group shuts
/// down gracefully or is cancelled, and the pool is closed then.
extension PostgreSQLCatalogStore: Service {
    public func run() async throws {
        defer { close() }
        try? await gracefulShutdown()
    }
}
