// swift-tools-version:6.0
//
// vsearch's fuzz harnesses: a package of its own, so the product package never builds fuzz code.
// One executable, `vsearch-fuzz`, links libFuzzer and AddressSanitizer and runs the harness the
// environment variable FUZZ_TARGET names (docs/fuzzing.md). Build and run it with scripts/fuzz.sh.
import PackageDescription

let package = Package(
    name: "vsearch-fuzz",
    platforms: [.macOS(.v15)],
    dependencies: [
        // The root package, by path: the harnesses fuzz the code of this checkout.
        .package(name: "vsearch", path: ".."),
    ],
    targets: [
        // The declaration of libFuzzer's LLVMFuzzerRunDriver, which main.swift calls.
        .target(name: "CFuzzerDriver"),
        .executableTarget(
            name: "vsearch-fuzz",
            dependencies: [
                "CFuzzerDriver",
                .product(name: "ImageOps", package: "vsearch"),
                .product(name: "VisualSearch", package: "vsearch"),
                .product(name: "Tracking", package: "vsearch"),
                .product(name: "SearchEngine", package: "vsearch"),
            ]
        ),
    ]
)
