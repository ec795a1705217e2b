import ArgumentParser
import FoundationEssentials
import Glibc
import MotionConfiguration
import TouchInput
import MotionWire

/// `motionctl record`: a live touchscreen's events in evemu format, for a bug report or a
/// test fixture. What it writes replays through `gestures`, `simulate`, `frames` and
/// `motiond --replay` exactly.
struct RecordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record",
        abstract: "Record a touchscreen's events in evemu format, header included.",
        discussion: """
            DEVICE is a node (/dev/input/event5), VENDOR:PRODUCT ids (04f3:010c) or a name \
            glob ('*maXTouch*'), as motionctl devices lists them; without it, the first \
            touchscreen. Recording runs until Ctrl-C, --duration or --count, or until the \
            device is unplugged; what was recorded is kept in every case. Event times are \
            in seconds from the first event. Reading the device needs the same permission \
            motiond has (root, or the 'input' group); motiond keeps running meanwhile, \
            unless it grabs the device.
            """
    )

    @Argument(help: ArgumentHelp("The touchscreen: a node, VENDOR:PRODUCT or a name glob.", valueName: "device"))
    var device: String?
    @Option(name: [.short, .long], help: ArgumentHelp("Write the recording here instead of standard output.", valueName: "file"))
    var output: String?
    @Option(help: ArgumentHelp("Stop after this many seconds.", valueName: "seconds")) var duration: Double?
    @Option(help: ArgumentHelp("Stop after this many frames (SYN_REPORTs).", valueName: "frames")) var count: Int?

    func validate() throws {
        if let duration, !(duration > 0 && duration.isFinite) { throw ValidationError("--duration must be a positive number of seconds") }
        if let count, count < 1 { throw ValidationError("--count must be at least 1") }
    }

    func run() throws {
        let signals = StopSignals.install()

        let touchscreen = try open()
        let sink = try RecordingSink(path: output)
        sink.write(EvemuWriter.header(touchscreen.description, comments: [
            "Recorded by motionctl \(MotiondVersion.string) from \(touchscreen.node)",
        ]))
        var start: Double?
        var frames = 0, events = 0
        var pending = ""
        /// The frames a read makes: what is recorded is the events, not these.
        var assembled: [TouchInputEvent] = []
        let began = monotonicNow()
        let deadline = duration.map { began + $0 }
        var why = "stopped"
        recording: while true {
            var wait: Int32 = -1
            if let deadline {
                let remaining = deadline - monotonicNow()
                if remaining <= 0 { why = "the duration has passed"; break }
                wait = Int32((remaining * 1000).rounded(.up))
            }
            var fds = [pollfd(fd: touchscreen.fileDescriptor, events: Int16(POLLIN), revents: 0),
                       pollfd(fd: signals, events: Int16(POLLIN), revents: 0)]
            guard poll(&fds, 2, wait) >= 0 || errno == EINTR else { break }
            if fds[1].revents != 0 { why = "interrupted"; break }
            guard fds[0].revents != 0 else { continue }
            var done = false
            assembled.removeAll(keepingCapacity: true)
            let outcome = touchscreen.read(into: &assembled, events: { event in
                guard !done else { return }
                let first = start ?? event.time
                start = first
                pending += EvemuWriter.line(event, since: first) + "\n"
                events += 1
                if event.type == EventType.synchronization && event.code == SynchronizationCode.report {
                    sink.write(pending)
                    pending = ""
                    frames += 1
                    if let count, frames >= count { done = true }
                }
            }, resynced: {
                pending += "# SYN_DROPPED: the kernel dropped events; the state libevdev resynced follows\n"
            })
            if done { why = "\(frames) frames were recorded"; break recording }
            if outcome == .removed { why = "the device was unplugged"; break }
            if case .failed(let errno) = outcome { why = "the device could not be read (\(String(cString: strerror(errno))))"; break }
        }
        sink.write(pending)
        sink.close()
        let seconds = formatted("%.1f", monotonicNow() - began)
        writeStandardError("motionctl: recorded \(frames) frame\(frames == 1 ? "" : "s") (\(events) events) from \(touchscreen.node) in \(seconds) s\(output.map { " to \($0)" } ?? ""): \(why)\n")
    }

    /// Opens the touchscreen DEVICE names, or the first one, or exits saying why none.
    private func open() throws -> TouchDevice {
        if let device, device.hasPrefix("/") {
            do { return try TouchDevice(node: device) } catch { fail("motionctl: \(error)") }
        }
        let rule: DeviceSelection.Rule? = device.map { DeviceSelection.parseIDs($0) ?? .name($0) }
        let selection = DeviceSelection(rule.map { [$0] } ?? [])
        let discovery: DeviceDiscovery
        do { discovery = try DeviceDiscovery() } catch { fail("motionctl: \(error)") }
        var problems: [String] = []
        for node in discovery.touchscreens().map(\.node) {
            do {
                let touchscreen = try TouchDevice(node: node)
                if selection.selects(touchscreen.identity) { return touchscreen }
            } catch {
                problems.append(error.description)
            }
        }
        let what = device.map { "no touchscreen matches '\($0)'" } ?? "no touchscreen found"
        fail("motionctl: \(what)" + (problems.isEmpty ? "" : "; " + problems.joined(separator: "; ")) + " (motionctl devices --local lists them)")
    }
}

/// Ctrl-C and SIGTERM, turned into a descriptor to poll beside the device (the self-pipe
/// trick), so that they end the recording in the loop and the file is left whole.
private enum StopSignals {
    nonisolated(unsafe) static var writeEnd: Int32 = -1

    /// Installs the handlers; returns the descriptor that becomes readable on a signal.
    static func install() -> Int32 {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { fail("motionctl: cannot make a pipe: \(String(cString: strerror(errno)))") }
        for end in ends { _ = fcntl(end, F_SETFL, O_NONBLOCK); _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        writeEnd = ends[1]
        var set = sigset_t()
        sigemptyset(&set)
        for signal in [SIGINT, SIGTERM] {
            Glibc.signal(signal) { _ in
                var byte: UInt8 = 1
                _ = Glibc.write(StopSignals.writeEnd, &byte, 1)
            }
            sigaddset(&set, signal)
        }
        // A blocked mask is inherited across exec (seen under a test runner's threads).
        pthread_sigmask(SIG_UNBLOCK, &set, nil)
        return ends[0]
    }
}

/// Where a recording goes: a file, or standard output. Written a frame at a time, so an
/// interrupted recording loses at most the frame in progress.
private final class RecordingSink {
    private let descriptor: Int32
    private let path: String?

    init(path: String?) throws {
        self.path = path
        guard let path else { descriptor = STDOUT_FILENO; return }
        guard FileManager.default.createFile(atPath: path, contents: nil) else {
            fail("motionctl: cannot write \(path): \(String(cString: strerror(errno)))")
        }
        descriptor = open(path, O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { fail("motionctl: cannot write \(path): \(String(cString: strerror(errno)))") }
    }

    func write(_ text: String) {
        guard !text.isEmpty else { return }
        if let error = writeAll(text, to: descriptor) {
            fail("motionctl: cannot write \(path ?? "standard output"): \(String(cString: strerror(error)))")
        }
    }

    func close() { if path != nil { Glibc.close(descriptor) } }
}
