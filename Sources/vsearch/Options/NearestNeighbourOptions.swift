import ArgumentParser
import SearchEngine
import VisualSearch

/// `--knn`, `--ef-search`, `--exact-below`: a server's k-NN defaults on an
/// embedded catalog (``NearestNeighbourSettings``), which a request may
/// override with `knn=` and `ef_search=`. A PostgreSQL catalog takes the same
/// three from its URL (`?knn=…&ef_search=…&exact_below=…`).
struct NearestNeighbourOptions: ParsableArguments {
    @Option(help: ArgumentHelp("How the nearest images are found: auto (exact for catalogs and filtered scopes of at most --exact-below "
                               + "images, selective filters, score ranges and pages past 1000 results; the HNSW index otherwise), "
                               + "exact (score every image the filters leave) or approximate (the HNSW index chooses candidates, "
                               + "scored exactly). Default auto.", valueName: "auto|exact|approximate"))
    var knn: String?

    @Option(name: .customLong("ef-search"), help: ArgumentHelp("Candidates an approximate search keeps (1...1000; a filter widens it "
                                                               + "by the share of images it keeps): more is slower and nearer exact. "
                                                               + "Default 100.", valueName: "n"))
    var efSearch: Int?

    @Option(name: .customLong("exact-below"), help: ArgumentHelp("In auto, scan exactly when the catalog or a filtered scope holds at "
                                                                 + "most this many images. Default 1000.", valueName: "n"))
    var exactBelow: Int?

    func validate() throws {
        if let knn { do { _ = try NearestNeighbourMode(parsing: knn) } catch { throw ValidationError(error.message) } }
        if let efSearch, !(1...SearchParameters.maximumEFSearch).contains(efSearch) {
            throw ValidationError("--ef-search \(efSearch) is not in 1...\(SearchParameters.maximumEFSearch)")
        }
        if let exactBelow, exactBelow < 0 { throw ValidationError("--exact-below \(exactBelow) is below 0") }
    }

    /// The settings these flags give (the defaults where a flag is absent).
    var settings: NearestNeighbourSettings {
        var settings = NearestNeighbourSettings()
        if let knn, let mode = try? NearestNeighbourMode(parsing: knn) { settings.mode = mode }
        if let efSearch { settings.efSearch = efSearch }
        if let exactBelow { settings.exactBelow = exactBelow }
        return settings
    }
}
