// swift-tools-version: 6.1
//
// motiond's fuzz targets for libFuzzer, kept in a package of their own because they build
// only with `-sanitize=fuzzer`, which provides `main`. Run one from the repository root with
//     scripts/fuzz TARGET [SECONDS]        (scripts/fuzz --list names them)
// Each executable exports `LLVMFuzzerTestOneInput`, which hands the bytes to its target in
// motiond's FuzzTargets module (Sources/FuzzTargets): one parser or state machine, with cheap
// invariants checked. A broken invariant aborts, which libFuzzer reports as a crash with its
// input. The test suite runs the same targets on their corpora (FuzzTargetTests).
import PackageDescription

let fuzzTargets: [(product: String, target: String)] = [
    ("fuzz-json", "FuzzJSON"),
    ("fuzz-requests", "FuzzRequests"),
    ("fuzz-glob", "FuzzGlob"),
    ("fuzz-config", "FuzzConfig"),
    ("fuzz-evemu", "FuzzEvemu"),
    ("fuzz-libinput", "FuzzLibinput"),
    ("fuzz-assembler", "FuzzAssembler"),
    ("fuzz-dropin", "FuzzDropIn"),
    ("fuzz-http", "FuzzHTTP"),
    ("fuzz-websocket", "FuzzWebSocket"),
    ("fuzz-state", "FuzzState"),
    ("fuzz-numbers", "FuzzNumbers"),
]

let package = Package(
    name: "motiond-fuzz",
    platforms: [.macOS(.v14)],
    products: fuzzTargets.map { .executable(name: $0.product, targets: [$0.target]) },
    dependencies: [
        .package(name: "motiond", path: ".."),
    ],
    targets: fuzzTargets.map { .executableTarget(name: $0.target, dependencies: [.product(name: "FuzzTargets", package: "motiond")]) }
)
