import MotionCore
import Foundation
import Testing
@testable import TouchInput

/// The shared recordings beside the repository (`../shared/recordings`).
enum SharedRecordings {
    static let directory: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("shared/recordings")

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
