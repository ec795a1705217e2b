import Glibc
import Testing
import TouchModel
import VirtualTouchscreenTestSupport
@testable import TouchInput

/// The seam between a virtual touchscreen and its device (``VirtualDeviceWriter``): the uinput
/// writer is given what a test's recording is given, and writes it as the kernel's structs;
/// the touchscreen counts what its writer refused.
@Suite("Virtual touchscreen writers")
struct VirtualDeviceWriterTests {
    static let geometry = VirtualTouchEncoderTests.geometry

    static func contact(_ finger: Int, _ phase: TouchPhase, _ x: Double, _ y: Double) -> VirtualContact {
        VirtualTouchEncoderTests.contact(finger, phase, x, y)
    }

    /// Shows `screen` a tap, a finger cancelled, and a finger down when it is destroyed.
    static func play(_ screen: VirtualTouchscreen) {
        let contact = Self.contact
        screen.show([contact(1, .began, 2000, 100)], at: 0)
        screen.show([contact(1, .moved, 2010.5, 100), contact(2, .began, 3000, 900)], at: 0)
        screen.show([contact(1, .ended, 2010.5, 100), contact(2, .moved, 3000, 901)], at: 0)
        screen.cancel(fingers: [2], at: 0)
        screen.show([contact(3, .began, 2500, 500)], at: 0)
        screen.destroy()
    }

    @Test("the uinput writer writes, as struct input_event with no time (none given), exactly the events a recording device is given, and nothing once destroyed")
    func uinputWritesWhatIsRecorded() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]) }
        _ = fcntl(ends[0], F_SETFL, O_NONBLOCK)
        let recording = RecordingVirtualDevice()
        let recorded = VirtualTouchscreen(output: "HDMI-A-1", geometry: Self.geometry, writer: recording)
        let uinput = VirtualTouchscreen(output: "HDMI-A-1", geometry: Self.geometry, writingTo: ends[1])
        Self.play(recorded)
        Self.play(uinput)
        uinput.show([Self.contact(4, .began, 2000, 100)], at: 0)

        var bytes: [UInt8] = [], buffer = [UInt8](repeating: 0, count: 4096)
        while case let count = read(ends[0], &buffer, buffer.count), count > 0 { bytes += buffer[..<count] }
        // struct input_event: a timeval, then type, code (16 bits each) and value (32).
        let time = MemoryLayout<timeval>.size, size = time + 8
        #expect(bytes.count % size == 0)
        func field(_ event: Int, _ offset: Int, _ width: Int) -> Int64 {
            (0..<width).reduce(0) { $0 | Int64(bytes[event * size + offset + $1]) << (8 * $1) }
        }
        let written = (0..<bytes.count / size).map { [field($0, time, 2), field($0, time + 2, 2), Int64(Int32(truncatingIfNeeded: field($0, time + 4, 4)))] }
        #expect((0..<bytes.count / size).allSatisfy { event in (0..<time).allSatisfy { bytes[event * size + $0] == 0 } }, "a time written")
        #expect(written == recording.frames.joined().map { [Int64($0.type), Int64($0.code), Int64($0.value)] })
        #expect(recording.frames.count == 8 && recording.isClosed, "\(recording.frames.count) frames")
        #expect(uinput.counts == recorded.counts && recorded.counts.framesWritten == 8)
        #expect(recording.libinput.problems.isEmpty && !recording.libinput.button, "\(recording.libinput.problems)")
    }

    @Test("a frame shown with its time is written stamped with it, to the microsecond, every event of it; a cancel and a frame with none carry 0, for the kernel to stamp")
    func stamps() throws {
        var ends: [Int32] = [0, 0]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]) }
        _ = fcntl(ends[0], F_SETFL, O_NONBLOCK)
        let screen = VirtualTouchscreen(output: "HDMI-A-1", geometry: Self.geometry, writingTo: ends[1])
        // A stamp as a panel's reads back (seconds and microseconds, through a double).
        let stamp = 86_400.0 + 123_457.0 / 1_000_000
        screen.show([Self.contact(1, .began, 2000, 100)], at: 0, stamp: stamp)
        screen.cancel(fingers: [1], at: 0)
        screen.show([Self.contact(2, .began, 2000, 100)], at: 0)
        screen.show([Self.contact(2, .moved, 2010, 100)], at: 0, stamp: .nan)
        var bytes: [UInt8] = [], buffer = [UInt8](repeating: 0, count: 4096)
        while case let count = read(ends[0], &buffer, buffer.count), count > 0 { bytes += buffer[..<count] }
        // struct input_event: tv_sec and tv_usec (a long each), then type, code and value.
        let long = MemoryLayout<Int>.size, size = 2 * long + 8
        let events = bytes.withUnsafeBytes { raw in
            (0..<bytes.count / size).map { (seconds: raw.loadUnaligned(fromByteOffset: $0 * size, as: Int.self),
                                           micros: raw.loadUnaligned(fromByteOffset: $0 * size + long, as: Int.self),
                                           type: raw.loadUnaligned(fromByteOffset: $0 * size + 2 * long, as: UInt16.self)) }
        }
        // The first frame is its events up to and with the first SYN_REPORT.
        let first = try #require(events.firstIndex { $0.type == EventType.synchronization }) + 1
        #expect(events[..<first].allSatisfy { $0.seconds == 86_400 && $0.micros == 123_457 }, "\(events[..<first])")
        #expect(events[first...].allSatisfy { $0.seconds == 0 && $0.micros == 0 }, "a stamp on a cancel or a frame with no time")
        #expect(events.count > first + 2)
        screen.destroy()
    }

    @Test("a write refused is counted with its errno, and the device is failing until one goes through; a short write has none")
    func refusedWrites() {
        let recording = RecordingVirtualDevice()
        let screen = VirtualTouchscreen(output: "DP-1", geometry: Self.geometry, writer: recording)
        let contact = Self.contact
        recording.refusing = ENODEV
        screen.show([contact(1, .began, 2000, 100)], at: 0)
        #expect(screen.counts == VirtualTouchscreenCounts(framesWritten: 0, writeFailures: 1, lastWriteErrno: ENODEV, isFailing: true))
        recording.refusing = nil
        screen.show([contact(1, .moved, 2100, 100)], at: 0)
        #expect(screen.counts == VirtualTouchscreenCounts(framesWritten: 1, writeFailures: 1, lastWriteErrno: ENODEV, isFailing: false))
        recording.refusing = 0
        screen.show([contact(1, .moved, 2200, 100)], at: 0)
        #expect(screen.counts.lastWriteError == "written short" && screen.counts.isFailing)
    }
}
