// swift-tools-version:6.0
//
// vsearch — visual search and recommendation toolkit.
//
// Targets are cut along dependency lines (see docs/architecture.md):
//   CTurboJPEG, CLibPNG  system libraries from Debian (headers + link flags only)
//   CPNGShim             the one small C file: libpng's classic write API needs setjmp
//   ImageOps             pixels, codecs, orientation, resampling, crops, limits, jobs
//   VisualSearch         the ViSearch/ProductSearch model, wire encoding, HTTP client and offline engine
//   Tracking             analytics events, validation, durable queue, delivery, collector store
//   VisualSearchServer   `vsearch serve`: HTTP <-> the engine and the collector (Hummingbird);
//                        kept apart so apps that want only the client or the engine build no server
//   vsearch              the command line
import PackageDescription

let package = Package(
    name: "vsearch",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "ImageOps", targets: ["ImageOps"]),
        .library(name: "VisualSearch", targets: ["VisualSearch"]),
        .library(name: "Tracking", targets: ["Tracking"]),
        .library(name: "VisualSearchServer", targets: ["VisualSearchServer"]),
        .executable(name: "vsearch", targets: ["vsearch"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CTurboJPEG",
            pkgConfig: "libturbojpeg",
            providers: [.apt(["libturbojpeg0-dev"])]
        ),
        .systemLibrary(
            name: "CLibPNG",
            pkgConfig: "libpng",
            providers: [.apt(["libpng-dev"])]
        ),
        .systemLibrary(name: "CMalloc"),
        .target(
            name: "CPNGShim",
            dependencies: ["CLibPNG"],
            linkerSettings: [.linkedLibrary("png16")]
        ),
        .target(
            name: "ImageOps",
            dependencies: ["CTurboJPEG", "CLibPNG", "CPNGShim"]
        ),
        .target(
            name: "VisualSearch",
            dependencies: ["ImageOps", .product(name: "GRDB", package: "GRDB.swift")]
        ),
        .target(
            name: "Tracking",
            dependencies: [.product(name: "GRDB", package: "GRDB.swift")]
        ),
        .target(
            name: "VisualSearchServer",
            dependencies: [
                "VisualSearch",
                "Tracking",
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "vsearch",
            dependencies: [
                "ImageOps",
                "VisualSearch",
                "Tracking",
                "VisualSearchServer",
                "CMalloc",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        .testTarget(
            name: "ImageOpsTests",
            dependencies: ["ImageOps"]
        ),
        .testTarget(
            name: "VisualSearchTests",
            dependencies: ["VisualSearch", "ImageOps"]
        ),
        .testTarget(
            name: "TrackingTests",
            dependencies: ["Tracking"]
        ),
        .testTarget(
            name: "VisualSearchServerTests",
            dependencies: ["VisualSearchServer", "VisualSearch", "Tracking", "ImageOps"]
        ),
        .testTarget(
            name: "vsearchTests",
            dependencies: ["vsearch", "ImageOps"]
        ),
    ]
)
