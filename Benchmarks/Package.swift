// swift-tools-version: 6.1
//
// motiond's benchmarks, kept in a package of their own so that building and testing
// motiond does not build the benchmark tooling. Run from the repository root with
//     swift package --package-path Benchmarks benchmark
import PackageDescription

let package = Package(
    name: "motiond-benchmarks",
    platforms: [.macOS(.v14)],
    dependencies: [
        .package(name: "motiond", path: ".."),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "MotionBenchmarks",
            dependencies: [
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "MotionCore", package: "motiond"),
                .product(name: "TouchInput", package: "motiond"),
                .product(name: "MotionConfiguration", package: "motiond"),
                .product(name: "MotionWire", package: "motiond"),
                .product(name: "MotionDaemon", package: "motiond"),
                .product(name: "MotionServer", package: "motiond"),
                .product(name: "MotionTUIO", package: "motiond"),
                .product(name: "NIOCore", package: "swift-nio"),
            ],
            path: "Benchmarks/MotionBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
        // The same scenes timed by a plain program (SceneScale/main.swift says why).
        .executableTarget(
            name: "SceneScale",
            dependencies: [
                .product(name: "MotionCore", package: "motiond"),
                .product(name: "MotionConfiguration", package: "motiond"),
                .product(name: "MotionWire", package: "motiond"),
                .product(name: "MotionDaemon", package: "motiond"),
            ],
            path: "SceneScale"
        ),
    ]
)
