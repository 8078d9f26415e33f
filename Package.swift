// swift-tools-version:6.0
//
// vsearch — visual search and recommendation toolkit.
//
// Targets are cut along dependency lines (see docs/architecture.md):
//   CTurboJPEG, CLibPNG  system libraries from Debian (headers + link flags only)
//   CPNGShim             the one small C file: libpng's classic write API needs setjmp
//   ImageOps             pixels, codecs, orientation, resampling, crops, limits, jobs
//   VisualSearch         the ViSearch/ProductSearch model, client and offline engine
//   Tracking             analytics events, validation, durable queue, delivery
//   vsearch              the command line
import PackageDescription

let package = Package(
    name: "vsearch",
    platforms: [.macOS(.v13)],
    products: [
        .library(name: "ImageOps", targets: ["ImageOps"]),
        .library(name: "VisualSearch", targets: ["VisualSearch"]),
        .library(name: "Tracking", targets: ["Tracking"]),
        .executable(name: "vsearch", targets: ["vsearch"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.10.0"),
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
            name: "Tracking"
        ),
        .executableTarget(
            name: "vsearch",
            dependencies: [
                "ImageOps",
                "VisualSearch",
                "Tracking",
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
            name: "vsearchTests",
            dependencies: ["vsearch", "ImageOps"]
        ),
    ]
)
