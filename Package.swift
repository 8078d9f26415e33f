// swift-tools-version:6.1
//
// vsearch — visual search and recommendation toolkit.
//
// One target per concern. docs/architecture.md holds the target table and graph, generated from this
// manifest by scripts/architecture.py (CI fails when they are stale); each target's DocC landing page (Sources/<Target>/<Target>.docc) says what it holds.
//
// Platforms: Linux (Debian), where every target is built and tested. ImageOps needs Debian's C codec
// libraries (libjpeg-turbo, libpng, libwebp, libheif, libavif, giflib, Little CMS), so no Apple platform
// is declared: none is built or tested here.
import PackageDescription

let package = Package(
    name: "vsearch",
    products: [
        .library(name: "ImageOps", targets: ["ImageOps"]),
        .library(name: "Networking", targets: ["Networking"]),
        // Locked and ElapsedClock: the clock URLSessionTransport and the server's admission take (a test passes its own).
        .library(name: "ConcurrencyToolkit", targets: ["ConcurrencyToolkit"]),
        .library(name: "VisualSearch", targets: ["VisualSearch"]),
        .library(name: "Tracking", targets: ["Tracking"]),
        .library(name: "EventDelivery", targets: ["EventDelivery"]),
        .library(name: "SearchEngine", targets: ["SearchEngine"]),
        .library(name: "SQLiteCatalog", targets: ["SQLiteCatalog"]),
        .library(name: "PostgreSQLCatalog", targets: ["PostgreSQLCatalog"]),
        .library(name: "CatalogStores", targets: ["CatalogStores"]),
        .library(name: "VisualSearchServer", targets: ["VisualSearchServer"]),
        .executable(name: "vsearch", targets: ["vsearch"]),
    ],
    // Package traits keep the HTTP client light (docs/decisions.md, "A light client"): a consumer that declares
    // `traits: []` gets VisualSearch, ImageOps (JPEG, PNG), Networking, Tracking and EventDelivery's HTTP transport and
    // resolves no package at all; "WebP", "HEIF", "AVIF" and "GIF" add those codecs, "Tracker" the durable event
    // queue. "Toolkit" — on by default, so a plain `swift build` here builds everything — is the engine, stores,
    // server and CLI with every codec. scripts/readme-examples.py builds such a consumer in CI.
    traits: [
        .trait(name: "Toolkit", description: "Server, stores, CLI and their packages (GRDB, Hummingbird, PostgresNIO, ...)",
               enabledTraits: ["WebP", "HEIF", "AVIF", "GIF", "Tracker"]),
        .trait(name: "Tracker", description: "EventDelivery's durable Tracker: the SQLite event queue (GRDB), swift-log, ServiceLifecycle"),
        .trait(name: "WebP", description: "WebP decoding and encoding (libwebp)"),
        .trait(name: "HEIF", description: "HEIC/HEIF decoding (libheif)"),
        .trait(name: "AVIF", description: "AVIF decoding and encoding (libavif)"),
        .trait(name: "GIF", description: "GIF decoding (giflib)"),
        .default(enabledTraits: ["Toolkit", "WebP", "HEIF", "AVIF", "GIF", "Tracker"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // Tests only: TestClock, for admission's rules on a clock the test advances (issue 25).
        .package(url: "https://github.com/pointfreeco/swift-clocks", from: "1.1.1"),
        // Child processes awaited with both pipes drained: pg_dump for PostgreSQL backups, and the tests' children.
        .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
    ],
    targets: [
        .systemLibrary(name: "CTurboJPEG", pkgConfig: "libturbojpeg", providers: [.apt(["libturbojpeg0-dev"])]),
        // libpng: only the tests' reference decoder (CLibPNGReference) links it.
        .systemLibrary(name: "CLibPNG", pkgConfig: "libpng", providers: [.apt(["libpng-dev"])]),
        .systemLibrary(name: "CLibDeflate", pkgConfig: "libdeflate", providers: [.apt(["libdeflate-dev"])]),
        .systemLibrary(name: "CWebP", pkgConfig: "libwebpdemux", providers: [.apt(["libwebp-dev"])]),
        .systemLibrary(name: "CHEIF", pkgConfig: "libheif", providers: [.apt(["libheif-dev"])]),
        // No pkgConfig: libavif.pc adds -DAVIF_DLL, which SwiftPM refuses (it only matters on Windows).
        .systemLibrary(name: "CAVIF", providers: [.apt(["libavif-dev"])]),
        .systemLibrary(name: "CGIF", providers: [.apt(["libgif-dev"])]),
        .systemLibrary(name: "CLittleCMS", pkgConfig: "lcms2", providers: [.apt(["liblcms2-dev"])]),
        .systemLibrary(name: "CMalloc"),
        // Our own declarations of ONNX Runtime's C API and a dlopen loader (no link-time dependency on the library).
        .target(name: "COnnxRuntime", linkerSettings: [.linkedLibrary("dl")]),
        // PNG on libdeflate (issue 28); libpng stays as the reference the tests compare it with.
        .target(name: "CPNGCodec", dependencies: ["CLibDeflate"], linkerSettings: [.linkedLibrary("z")]),
        .target(name: "CLibPNGReference", dependencies: ["CLibPNG"], linkerSettings: [.linkedLibrary("png16")]),
        // hnswlib's HNSW graph (Debian libhnswlib-dev, header-only C++) behind a C interface: the embedded
        // store's approximate k-NN (issue 29). libdeflate gives the graph file's CRC-32.
        .target(name: "CHNSWIndex", dependencies: ["CLibDeflate"]),
        // The package's one lock, a pthread mutex ThreadSanitizer can see (issue 41).
        .target(name: "ConcurrencyToolkit"),
        .target(
            name: "ImageOps",
            dependencies: [
                "ConcurrencyToolkit", "CTurboJPEG", "CPNGCodec", "CLittleCMS",
                .target(name: "CWebP", condition: .when(traits: ["WebP"])),
                .target(name: "CHEIF", condition: .when(traits: ["HEIF"])),
                .target(name: "CAVIF", condition: .when(traits: ["AVIF"])),
                .target(name: "CGIF", condition: .when(traits: ["GIF"])),
            ]
        ),
        .target(name: "Networking", dependencies: ["ConcurrencyToolkit"]),
        // ONNX Runtime's C API, loaded with dlopen at run time: nothing links against libonnxruntime.
        .target(name: "OnnxRuntime", dependencies: ["ConcurrencyToolkit", "COnnxRuntime"]),
        .target(name: "VisualSearch", dependencies: ["ImageOps", "Networking"]),
        .target(name: "Tracking"),
        .target(
            name: "EventDelivery",
            dependencies: [
                "Tracking", "Networking",
                .product(name: "GRDB", package: "GRDB.swift", condition: .when(traits: ["Tracker"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Tracker"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Tracker"])),
            ]
        ),
        // The engine knows the store roles, never a driver: GRDB and PostgresNIO live in the store targets.
        .target(name: "SearchEngine", dependencies: ["ConcurrencyToolkit", "VisualSearch", "Tracking", "ImageOps", "Networking", "OnnxRuntime", "CHNSWIndex"]),
        .target(
            name: "SQLiteCatalog",
            dependencies: ["ConcurrencyToolkit", "SearchEngine", "VisualSearch", "Tracking", .product(name: "GRDB", package: "GRDB.swift", condition: .when(traits: ["Toolkit"]))]
        ),
        .target(
            name: "PostgreSQLCatalog",
            dependencies: [
                "SearchEngine", "VisualSearch", "Tracking", "Networking",
                .product(name: "PostgresNIO", package: "postgres-nio", condition: .when(traits: ["Toolkit"])),
                .product(name: "NIOSSL", package: "swift-nio-ssl", condition: .when(traits: ["Toolkit"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Toolkit"])),
                // pg_dump and pg_restore for `vsearch catalog backup`, awaited with both pipes drained.
                .product(name: "Subprocess", package: "swift-subprocess", condition: .when(traits: ["Toolkit"])),
            ]
        ),
        .target(
            name: "CatalogStores",
            dependencies: [
                "SQLiteCatalog", "PostgreSQLCatalog", "SearchEngine", "VisualSearch", "Tracking", "Networking",
            ]
        ),
        .target(
            name: "VisualSearchServer",
            dependencies: [
                "ConcurrencyToolkit", "VisualSearch", "SearchEngine", "CatalogStores", "Tracking", "ImageOps", "Networking",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Toolkit"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Toolkit"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Toolkit"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Toolkit"])),
                .product(name: "Prometheus", package: "swift-prometheus", condition: .when(traits: ["Toolkit"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["Toolkit"])),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras", condition: .when(traits: ["Toolkit"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["Toolkit"])),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras", condition: .when(traits: ["Toolkit"])),
            ],
            // The web page's HTML, CSS and JavaScript, compiled into the binary (Web/WebPageFiles.swift lists them).
            resources: [.embedInCode("WebPage")]
        ),
        .executableTarget(
            name: "vsearch",
            dependencies: [
                "ConcurrencyToolkit", "ImageOps", "Networking", "VisualSearch", "Tracking", "EventDelivery", "SearchEngine", "SQLiteCatalog",
                "PostgreSQLCatalog", "CatalogStores", "VisualSearchServer", "CMalloc",
                .product(name: "ArgumentParser", package: "swift-argument-parser", condition: .when(traits: ["Toolkit"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Toolkit"])),
            ]
        ),
        // Tests mirror the sources; TestSupport holds what several suites share.
        .target(
            name: "TestSupport",
            dependencies: [
                "ConcurrencyToolkit", "ImageOps", "Networking", "VisualSearch", "SearchEngine", "SQLiteCatalog", "PostgreSQLCatalog",
                "CatalogStores", "VisualSearchServer", "Tracking",
                .product(name: "Subprocess", package: "swift-subprocess", condition: .when(traits: ["Toolkit"])),
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Toolkit"])),
                .product(name: "HummingbirdTesting", package: "hummingbird", condition: .when(traits: ["Toolkit"])),
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["Toolkit"])),
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Toolkit"])),
                .product(name: "NIOCore", package: "swift-nio", condition: .when(traits: ["Toolkit"])),
            ],
            path: "Tests/TestSupport"
        ),
        .testTarget(name: "ImageOpsTests", dependencies: ["ConcurrencyToolkit", "ImageOps", "CPNGCodec", "CLibPNGReference", "TestSupport"]),
        .testTarget(
            name: "VisualSearchTests",
            dependencies: ["ConcurrencyToolkit", "VisualSearch", "ImageOps", "Networking", "TestSupport", .product(name: "Clocks", package: "swift-clocks", condition: .when(traits: ["Toolkit"]))]
        ),
        .testTarget(name: "NetworkingTests", dependencies: ["ConcurrencyToolkit", "Networking", "TestSupport", .product(name: "Clocks", package: "swift-clocks", condition: .when(traits: ["Toolkit"]))]),
        .testTarget(name: "TrackingTests", dependencies: ["Tracking", "TestSupport"]),
        .testTarget(
            name: "EventDeliveryTests",
            dependencies: [
                "ConcurrencyToolkit", "EventDelivery", "Tracking", "Networking", "TestSupport",
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Toolkit"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle", condition: .when(traits: ["Toolkit"])),
            ]
        ),
        .testTarget(
            name: "SearchEngineTests",
            dependencies: [
                "ConcurrencyToolkit", "SearchEngine", "VisualSearch", "Tracking", "ImageOps", "Networking", "TestSupport",
            ]
        ),
        .testTarget(name: "SQLiteCatalogTests", dependencies: ["ConcurrencyToolkit", "SQLiteCatalog", "SearchEngine", "VisualSearch", "Tracking", "ImageOps", "TestSupport"]),
        .testTarget(name: "PostgreSQLCatalogTests", dependencies: ["PostgreSQLCatalog", "SearchEngine", "VisualSearch", "TestSupport"]),
        .testTarget(
            name: "CatalogStoresTests",
            dependencies: ["ConcurrencyToolkit", "CatalogStores", "SQLiteCatalog", "PostgreSQLCatalog", "SearchEngine", "VisualSearch", "Tracking", "ImageOps", "TestSupport"]
        ),
        .testTarget(name: "OnnxRuntimeTests", dependencies: ["OnnxRuntime", "TestSupport"]),
        .testTarget(
            name: "ConcurrencyToolkitTests",
            dependencies: ["ConcurrencyToolkit", .product(name: "Clocks", package: "swift-clocks", condition: .when(traits: ["Toolkit"]))]
        ),
        .testTarget(
            name: "VisualSearchServerTests",
            dependencies: [
                "ConcurrencyToolkit", "VisualSearchServer", "SearchEngine", "SQLiteCatalog", "PostgreSQLCatalog", "CatalogStores",
                "VisualSearch", "Tracking", "ImageOps", "Networking", "TestSupport",
                .product(name: "HummingbirdTesting", package: "hummingbird", condition: .when(traits: ["Toolkit"])),
                .product(name: "Clocks", package: "swift-clocks", condition: .when(traits: ["Toolkit"])),
            ]
        ),
        .testTarget(name: "vsearchTests", dependencies: ["vsearch", "ImageOps", "SQLiteCatalog", "CatalogStores", "TestSupport"]),
    ],
    // CHNSWIndex (hnswlib) needs C++17 (std::shared_mutex).
    cxxLanguageStandard: .cxx17
)
