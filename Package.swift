// swift-tools-version: 6.1
//
// motiond: a Linux touch input daemon. The layers are one module each, from the pure
// physics and gesture code at the bottom to the thin executables at the top:
//
//   TouchModel    touch frames, contacts and geometry, shared by the layers above (pure)
//   MotionCore    streams, properties, springs, recognizers, interactions, the scene and its
//                 engine (pure, no I/O; re-exports TouchModel)
//   CEvdev/CUdev/CMtdev/CYaml  the system libraries libevdev, libudev, libmtdev and libyaml,
//                 through pkg-config
//   CLinux        the Linux system calls Swift cannot make itself (a futex)
//   TouchInput    devices, discovery, hotplug, recordings and replay, contact filters,
//                 coordinate mapping and calibration (needs TouchModel, not MotionCore)
//   MotionConfiguration  motiond.toml and its drop-ins: read, checked, and turned into a scene
//   MotionWire    the protocol's JSON, for the daemon and motionctl alike (no NIO)
//   MotionTUIO    the scene to TUIO receivers (OSC over UDP), behind MotionDaemon's TUIOReceivers
//   MotionDaemon  the daemon without its transports: the scene, the clients' requests and
//                 subscriptions, the publisher, devices, status, health, metrics and the
//                 state file; touch frames and request lines in, sinks and events out (no NIO)
//   MotionServer  the transports and the daemon's life: the socket, WebSocket and HTTP, the
//                 input thread and replay, systemd, signals and the log (NIO)
//   MotionControl motionctl's commands: inspecting and driving the daemon, recordings, plots
//   motiond       the daemon, and motionctl when called by that name (as installed)
//   motionctl     the command line that inspects and drives it (MotionControl)
//   FuzzTargets   the parsers fed any bytes, with invariants: run by libFuzzer (Fuzz/) and,
//                 on their corpora and seeded mutations, by the tests (FuzzTargetTests)
//
// Each module's tests are a target named after it (MotionControl's commands are tested
// through the executables, in CommandLineTests); OSCTestSupport reads OSC back for the two
// targets that check TUIO, MotionTUIOTests and MotionDaemonTests, and SeededRandom gives the
// tests that draw their cases at random one seeded generator, and the suite's seed
// (MOTIOND_TEST_SEED).
import PackageDescription

/// In release builds, exclusive access is checked at compile time only: the run-time checks
/// of class properties and closures' captures were a sixth of the instructions of a frame
/// (docs/performance.md). Debug builds, which every test runs, keep them, so a conflicting
/// access still fails the suite. The Makefile's release build (the package's) turns them off
/// in the dependencies as well, which no setting here can reach.
let releaseExclusivity: [SwiftSetting] = [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]

/// Extensions are visible only where their module is imported: without it, TOMLKit's
/// `import Foundation` let Foundation's `StringProtocol.contains` into the configuration
/// reader, which linked Foundation and ICU's 32 MB of data into a static motiond.
let onlyImportedMembers: [SwiftSetting] = [.enableUpcomingFeature("MemberImportVisibility")] + releaseExclusivity

let package = Package(
    name: "motiond",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "motiond", targets: ["motiond"]),
        .executable(name: "motionctl", targets: ["motionctl"]),
        .library(name: "TouchModel", targets: ["TouchModel"]),
        .library(name: "MotionCore", targets: ["MotionCore"]),
        .library(name: "TouchInput", targets: ["TouchInput"]),
        .library(name: "MotionConfiguration", targets: ["MotionConfiguration"]),
        .library(name: "MotionTUIO", targets: ["MotionTUIO"]),
        .library(name: "MotionWire", targets: ["MotionWire"]),
        .library(name: "MotionDaemon", targets: ["MotionDaemon"]),
        .library(name: "MotionServer", targets: ["MotionServer"]),
        // The fuzz targets' bodies, for the libFuzzer executables in Fuzz/.
        .library(name: "FuzzTargets", targets: ["FuzzTargets"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/LebJe/TOMLKit", from: "0.6.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // Fleet metrics: the swift-metrics API, exposed in Prometheus's text format.
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
    ],
    targets: [
        .target(name: "TouchModel", swiftSettings: onlyImportedMembers),
        .target(name: "MotionCore", dependencies: ["TouchModel"], swiftSettings: onlyImportedMembers),
        .systemLibrary(
            name: "CEvdev",
            pkgConfig: "libevdev",
            providers: [.apt(["libevdev-dev"])]
        ),
        .systemLibrary(
            name: "CUdev",
            pkgConfig: "libudev",
            providers: [.apt(["libudev-dev"])]
        ),
        .systemLibrary(
            name: "CMtdev",
            pkgConfig: "mtdev",
            providers: [.apt(["libmtdev-dev"])]
        ),
        // libinput record's YAML recordings, as attached to libinput bug reports: libyaml's
        // parser, without the Foundation (and ICU's 32 MB of data) a Swift YAML package brings.
        .systemLibrary(
            name: "CYaml",
            pkgConfig: "yaml-0.1",
            providers: [.apt(["libyaml-dev"])]
        ),
        // The Linux system calls Swift cannot make (`syscall` is variadic): a futex, for the
        // replay's wait. A header only; nothing to link.
        .systemLibrary(name: "CLinux"),
        .target(
            name: "TouchInput",
            dependencies: ["TouchModel", "CEvdev", "CUdev", "CMtdev", "CYaml"],
            swiftSettings: onlyImportedMembers
        ),
        .target(
            name: "MotionConfiguration",
            dependencies: ["MotionCore", "TouchInput", .product(name: "TOMLKit", package: "TOMLKit")],
            resources: [.embedInCode("Quirks/quirks.toml")],
            swiftSettings: onlyImportedMembers
        ),
        // TUIO for multitouch tables: the scene as OSC bundles over UDP (docs/kiosk.md).
        .target(name: "MotionTUIO", dependencies: ["MotionCore", "MotionConfiguration"], swiftSettings: onlyImportedMembers),
        // What motiond's clients and motionctl read and write: JSON values, their parser, and
        // the JSON of frames, devices and gestures; no NIO, no daemon.
        .target(
            name: "MotionWire",
            dependencies: ["TouchModel", "MotionCore", "TouchInput", "MotionConfiguration"],
            swiftSettings: onlyImportedMembers
        ),
        // The daemon without its transports: the scene, the clients and what they follow,
        // the publisher, the devices, status, health, metrics and the state file. Its inputs
        // are touch frames and request lines, its outputs sinks and typed events; no NIO.
        .target(
            name: "MotionDaemon",
            dependencies: [
                "MotionCore",
                "TouchInput",
                "MotionConfiguration",
                "MotionWire",
                // GET /metrics: CoreMetrics, not Metrics, which would bring FoundationEssentials.
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            swiftSettings: onlyImportedMembers
        ),
        // The daemon's transports and life: the socket, the WebSocket and HTTP listener, the
        // input thread and its queue, the replay, systemd, signals and the log.
        .target(
            name: "MotionServer",
            dependencies: [
                "MotionCore",
                "TouchInput",
                "MotionConfiguration",
                "MotionTUIO",
                "MotionWire",
                "MotionDaemon",
                "CLinux",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // The browser client and the live page, served over HTTP beside the WebSocket
            // endpoint; compiled in, so an installed motiond needs no files beside it. The
            // files live in clients/ (these are links to them).
            resources: [.embedInCode("Web/motiond.js"), .embedInCode("Web/index.html")],
            swiftSettings: releaseExclusivity
            // Not onlyImportedMembers: with it, the TUIO sender's sockaddr_in would have to be
            // imported from NIO's internal CNIOLinux, whose headers Swift credits with it.
            // FoundationFootprintTests guards this module instead.
        ),
        .executableTarget(
            name: "motiond",
            dependencies: [
                "MotionConfiguration",
                "MotionServer",
                // motiond is motionctl too when called by that name: one binary, one Swift
                // runtime, for both installed commands.
                "MotionControl",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: onlyImportedMembers
        ),
        .target(
            name: "MotionControl",
            dependencies: [
                "MotionCore",
                "TouchInput",
                "MotionConfiguration",
                "MotionWire",
                // `state` reads the daemon's state file.
                "MotionDaemon",
                // The WebSocket client (--websocket).
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOWebSocket", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: onlyImportedMembers
        ),
        .executableTarget(name: "motionctl", dependencies: ["MotionControl"], swiftSettings: onlyImportedMembers),
        // The parsers and state machines that read what outside sources send, each fed any
        // bytes with invariants checked: run by libFuzzer (Fuzz/, scripts/fuzz) and replayed on
        // their corpora and seeded mutations by FuzzTargetTests. Neither executable links it.
        .target(
            name: "FuzzTargets",
            dependencies: [
                "MotionCore",
                "TouchInput",
                "MotionConfiguration",
                "MotionWire",
                "MotionDaemon",
                "MotionServer",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ]
        ),
        // A seeded generator for the tests that draw their cases at random, and the suite's seed.
        .target(name: "SeededRandom", path: "Tests/SeededRandom"),
        .testTarget(name: "TouchModelTests", dependencies: ["TouchModel", "SeededRandom"]),
        .testTarget(name: "MotionCoreTests", dependencies: ["MotionCore", "SeededRandom"]),
        // What the apps see of a virtual touchscreen, for the two targets that check it: a
        // recording device and a model of libinput reading it.
        .target(name: "VirtualTouchscreenTestSupport", dependencies: ["TouchInput"], path: "Tests/VirtualTouchscreenTestSupport"),
        .testTarget(name: "TouchInputTests", dependencies: ["TouchInput", "MotionCore", "SeededRandom", "VirtualTouchscreenTestSupport"]),
        .testTarget(name: "MotionConfigurationTests", dependencies: ["MotionConfiguration", "MotionCore", "TouchInput"]),
        // An independent reading of OSC bundles, for the tests that check what TUIO sends.
        .target(name: "OSCTestSupport", path: "Tests/OSCTestSupport"),
        .testTarget(name: "MotionTUIOTests", dependencies: ["MotionTUIO", "MotionConfiguration", "MotionCore", "OSCTestSupport"]),
        // Counts what each thread allocates, for tests of how work grows (C: it replaces malloc).
        .target(name: "AllocationCounter", path: "Tests/AllocationCounter"),
        // What the daemon's tests and the server's share: a client output that keeps what it is
        // sent, a daemon on a hand-driven clock, a hand-driven scheduler, an immediate state writer.
        .target(
            name: "DaemonTestSupport",
            dependencies: ["MotionDaemon", "MotionCore", "MotionConfiguration", "MotionWire", "TouchInput"],
            path: "Tests/DaemonTestSupport"
        ),
        .testTarget(
            name: "MotionDaemonTests",
            dependencies: [
                "MotionDaemon",
                "MotionWire",
                "MotionConfiguration",
                "DaemonTestSupport",
                "SeededRandom",
                "AllocationCounter",
                "VirtualTouchscreenTestSupport",
            ]
        ),
        .testTarget(
            name: "MotionServerTests",
            dependencies: [
                "MotionServer",
                "MotionDaemon",
                "MotionWire",
                "MotionConfiguration",
                "MotionTUIO",
                "DaemonTestSupport",
                "OSCTestSupport",
                "SeededRandom",
                "AllocationCounter",
                "VirtualTouchscreenTestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                // The listener's connections, driven without sockets and on a manual clock.
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ]
        ),
        .testTarget(name: "MotionWireTests", dependencies: ["MotionWire", "MotionConfiguration"]),
        .testTarget(name: "MotionControlTests", dependencies: ["MotionControl", "MotionWire"]),
        .testTarget(name: "CommandLineTests", dependencies: ["MotionCore", "SeededRandom"]),
        .testTarget(name: "FuzzTargetTests", dependencies: ["FuzzTargets", "SeededRandom"]),
    ]
)
