// swift-tools-version: 6.1
//
// motiond's fuzz targets for libFuzzer, kept in a package of their own because they build
// only with `-sanitize=fuzzer`, which provides `main`. Run one from the repository root with
//     scripts/fuzz TARGET [SECONDS]        (scripts/fuzz --list names them)
// Each executable exports `LLVMFuzzerTestOneInput`, feeds the bytes to one parser or state
// machine of motiond and checks cheap invariants; a broken invariant aborts, which libFuzzer
// reports as a crash with its input.
import PackageDescription

let fuzzTargets: [(product: String, target: String, dependencies: [Target.Dependency])] = [
    ("fuzz-json", "FuzzJSON", [.product(name: "MotionConfiguration", package: "motiond"), .product(name: "MotionServer", package: "motiond")]),
    ("fuzz-requests", "FuzzRequests", [.product(name: "MotionConfiguration", package: "motiond"), .product(name: "MotionServer", package: "motiond"), .product(name: "MotionCore", package: "motiond")]),
    ("fuzz-glob", "FuzzGlob", [.product(name: "MotionConfiguration", package: "motiond"), .product(name: "MotionServer", package: "motiond"), .product(name: "MotionCore", package: "motiond")]),
    ("fuzz-config", "FuzzConfig", [.product(name: "MotionConfiguration", package: "motiond"), .product(name: "MotionServer", package: "motiond"), .product(name: "MotionCore", package: "motiond")]),
    ("fuzz-evemu", "FuzzEvemu", [.product(name: "TouchInput", package: "motiond"), .product(name: "MotionCore", package: "motiond")]),
    ("fuzz-libinput", "FuzzLibinput", [.product(name: "TouchInput", package: "motiond"), .product(name: "MotionCore", package: "motiond")]),
    ("fuzz-assembler", "FuzzAssembler", [.product(name: "TouchInput", package: "motiond"), .product(name: "MotionCore", package: "motiond")]),
    ("fuzz-dropin", "FuzzDropIn", [.product(name: "MotionConfiguration", package: "motiond"), .product(name: "TouchInput", package: "motiond"), .product(name: "MotionCore", package: "motiond")]),
    ("fuzz-http", "FuzzHTTP", [.product(name: "MotionConfiguration", package: "motiond"), .product(name: "MotionServer", package: "motiond")]),
    ("fuzz-websocket", "FuzzWebSocket", [.product(name: "MotionConfiguration", package: "motiond"), .product(name: "MotionServer", package: "motiond")]),
    ("fuzz-state", "FuzzState", [.product(name: "MotionServer", package: "motiond"), .product(name: "MotionCore", package: "motiond")]),
    ("fuzz-numbers", "FuzzNumbers", [.product(name: "MotionConfiguration", package: "motiond"), .product(name: "TouchInput", package: "motiond"), .product(name: "MotionCore", package: "motiond")]),
]

let package = Package(
    name: "motiond-fuzz",
    platforms: [.macOS(.v14)],
    products: fuzzTargets.map { .executable(name: $0.product, targets: [$0.target]) },
    dependencies: [
        .package(name: "motiond", path: ".."),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        .target(
            name: "FuzzSupport",
            dependencies: [.product(name: "MotionConfiguration", package: "motiond"), .product(name: "MotionServer", package: "motiond"), .product(name: "MotionCore", package: "motiond"),
                           .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOEmbedded", package: "swift-nio")]
        ),
    ] + fuzzTargets.map { .executableTarget(name: $0.target, dependencies: ["FuzzSupport"] + $0.dependencies) }
)
