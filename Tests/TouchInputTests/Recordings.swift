import MotionCore
import Foundation
import Testing
@testable import TouchInput

/// The real recordings kept in the repository as fixtures (`Tests/Fixtures/recordings`, with
/// their sources and licences), found from this file's place so a fresh clone has them.
enum FixtureRecordings {
    static let directory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/recordings")

    static func url(_ name: String) -> URL { directory.appendingPathComponent(name) }

    static func text(_ name: String) throws -> String {
        try String(contentsOf: url(name), encoding: .utf8)
    }

    static func recording(_ name: String) throws -> EvemuRecording {
        try EvemuRecording(parsing: text(name))
    }

    static let atmelTaps = "whot-evemu-devices__atmel-maxtouch__1f-fast-taps-x9.evemu"
    static let atmelDrag = "whot-evemu-devices__atmel-maxtouch__1f-drag-up-down.evemu"
    static let atmelHold = "whot-evemu-devices__atmel-maxtouch__2f-touch-hold-release.evemu"
    static let atmelFour = "whot-evemu-devices__atmel-maxtouch__4f-drag-down.evemu"
    static let ep0430 = "whot-evemu-devices__ep0430m09__2f-drag-scroll.evemu"
    static let pixel = "aosp-frameworks-base__pixel-tablet-nvt-touchscreen__1f-swipe.evemu"
    static let elan = "whot-evemu-devices__elan-touchscreen-04f3-010c.desc"
    static let wacom = "whot-evemu-devices__wacom-cintiq-24hd-touch-finger-056a-00f6.desc"

    static let withEvents = [atmelTaps, atmelDrag, atmelHold, atmelFour, ep0430, pixel]

    /// Every recording under the fixtures folder, at any depth, found when the tests run so
    /// that a file added there is tested without being named: `.evemu` files, `libinput
    /// record` YAML (`.libinput.yml`), and `.events` files, which hold events alone. Paths
    /// are from the fixtures folder, sorted.
    static func allRecordings() -> [String] {
        guard let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil) else { return [] }
        let base = directory.standardizedFileURL.path + "/"
        var paths: [String] = []
        for case let file as URL in walker {
            let path = file.standardizedFileURL.path
            guard path.hasSuffix(".evemu") || path.hasSuffix(".events") || path.hasSuffix(".libinput.yml") else { continue }
            paths.append(String(path.dropFirst(base.count)))
        }
        return paths.sorted()
    }

    /// The recording at `path` (from the fixtures folder), ready to replay.
    ///
    /// An `.events` file is read with its device's description: evemu-devices, like evemu
    /// before version 1.10, keeps a device's description in a `.desc` file beside its event
    /// recordings, and the fixtures keep both files as they are. The description is the file
    /// named like the events up to their last `__` (`owner-repo__device.desc` for
    /// `owner-repo__device__what.events`).
    static func replayable(_ path: String) throws -> EvemuRecording {
        let read = try EvemuRecording(reading: text(path))
        guard path.hasSuffix(".events") else { return read }
        let name = String(path.dropLast(".events".count))
        let descriptionName = try #require(name.range(of: "__", options: .backwards), "\(path) names no device").lowerBound
        let description = try recording(String(name[..<descriptionName]) + ".desc")
        return EvemuRecording(device: description.device, events: read.events, formatVersion: read.formatVersion)
    }
}

@Suite("Monotonic clock")
struct MonotonicClockTests {
    @Test("monotonicNow increases")
    func increases() {
        let a = monotonicNow()
        let b = monotonicNow()
        #expect(b >= a && a > 0)
    }
}

@Suite("Device errors")
struct DeviceErrorTests {
    @Test("permission denied names the input group and what to do")
    func permission() {
        let error = DeviceError.cannotOpen(node: "/dev/input/event3", errno: 13)  // EACCES
        #expect(error.isPermissionDenied)
        #expect(error.description.contains("/dev/input/event3"))
        #expect(error.description.contains("'input' group"))
        #expect(error.description.contains("usermod -aG input"))
        #expect(!DeviceError.cannotOpen(node: "/dev/input/event3", errno: 2).isPermissionDenied)
    }

    @Test("opening a node that is not there says so")
    func missingNode() {
        #expect(throws: DeviceError.cannotOpen(node: "/nonexistent/event9", errno: 2)) {
            try TouchDevice(node: "/nonexistent/event9")
        }
    }
}

@Suite("Fixtures a fresh clone has")
struct FixtureTests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    @Test("every recording the tests name is in the repository, beside its licences")
    func recordingsPresent() throws {
        let names = FixtureRecordings.withEvents + [FixtureRecordings.elan, FixtureRecordings.wacom, LibinputRecordingTests.yaml]
        for name in names + ["README.md", "LICENSE.MIT-evemu-devices", "LICENSE.MIT-xorg-integration-tests", "LICENSE.Apache-2.0-aosp"] {
            #expect(FileManager.default.fileExists(atPath: FixtureRecordings.url(name).path), "\(name) is missing")
        }
    }

    /// Someone who clones the repository has nothing beside it: a test, benchmark or script that
    /// reads the developers' shared folder fails for them (it did, 56 times, before the fixtures).
    @Test("nothing under Tests/, Benchmarks/ or scripts/ reads the shared folder beside the repository")
    func nothingReadsShared() throws {
        // Spelled in pieces, so that this file does not find itself.
        let needles = [".." + "/shared", "shared" + "/recordings"]
        var offenders: [String] = []
        for folder in ["Tests", "Benchmarks", "scripts"] {
            let root = Self.repository.appendingPathComponent(folder)
            let walker = try #require(FileManager.default.enumerator(at: root, includingPropertiesForKeys: nil))
            for case let file as URL in walker where !file.path.contains("/Fixtures/") && !file.path.contains("/.build") {
                guard let text = try? String(contentsOf: file, encoding: .utf8) else { continue }
                for needle in needles where text.contains(needle) { offenders.append("\(file.path): \(needle)") }
            }
        }
        #expect(offenders.isEmpty, "\(offenders)")
    }
}
