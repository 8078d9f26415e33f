/// Every file of the web page (`WebPage/`), by name, as embedded in the
/// binary (SwiftPM `embedInCode` names each `PackageResources.<name with . and - as _>`).
/// A test checks that this list and the folder hold the same files.
enum WebPageFiles {
    static let all: [(String, [UInt8])] = [
        ("analytics.html", PackageResources.analytics_html),
        ("analytics.js", PackageResources.analytics_js),
        ("api.js", PackageResources.api_js),
        ("app.js", PackageResources.app_js),
        ("box.js", PackageResources.box_js),
        ("detail.js", PackageResources.detail_js),
        ("dom.js", PackageResources.dom_js),
        ("facets.js", PackageResources.facets_js),
        ("fields.js", PackageResources.fields_js),
        ("index.html", PackageResources.index_html),
        ("keys.js", PackageResources.keys_js),
        ("plot.js", PackageResources.plot_js),
        ("query-view.js", PackageResources.query_view_js),
        ("query.js", PackageResources.query_js),
        ("results.js", PackageResources.results_js),
        ("similarity.js", PackageResources.similarity_js),
        ("state.js", PackageResources.state_js),
        ("style.css", PackageResources.style_css),
        ("tracking.js", PackageResources.tracking_js),
    ]
}
