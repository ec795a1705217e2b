import Foundation
import Logging
import MotionCore
import NIOCore
import NIOEmbedded
import Testing
@testable import MotionConfiguration
@testable import MotionServer
@testable import MotionTUIO
@testable import TouchInput
@testable import MotionDaemon

/// What motiond sends for each bundled recording, byte for byte: every line three clients read
/// (one subscribed to everything, one to part of the scene, one that is behind and so gets its
/// lines one by one) and every TUIO datagram, played on an embedded event loop whose time is
/// the replay's, so that the same input always gives the same bytes.
///
/// The bytes are compared with digests checked in beside the recordings
/// (Tests/Fixtures/wire/digests.txt): a change to the daemon's inside that should change
/// nothing on the wire (a refactoring) shows here if it does. A change meant to change the wire
/// writes the digests again with `MOTIOND_WIRE_UPDATE=1`; `MOTIOND_WIRE_CAPTURE=DIR` writes the
/// captures themselves, to compare two builds line by line.
@Suite("The wire, byte for byte, on every bundled recording")
struct WireCaptureTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures")
    static let digestsFile = fixtures.appendingPathComponent("wire/digests.txt")

    /// The bundled recordings that replay as they are (a `.desc` with `.events` files is the
    /// same kind of recording split in two, and is played by other tests).
    static let recordings: [String] = {
        let root = fixtures.appendingPathComponent("recordings")
        let files = FileManager.default.enumerator(atPath: root.path)?.compactMap { $0 as? String } ?? []
        return files.filter { $0.hasSuffix(".evemu") }.sorted()
    }()

    /// The two scenes: the example configuration as it comes, and with every option that adds
    /// lines (prediction, screen gestures, a TUIO 2.0 target of predicted elements).
    enum Scene: String, CaseIterable {
        case example
        case everything

        func configuration() throws -> Configuration {
            let file = WireCaptureTests.fixtures.deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("config/motiond.toml")
            var text = try String(contentsOf: file, encoding: .utf8)
            if self == .everything {
                text = text.replacingOccurrences(of: "idle_after = 60\n", with: "idle_after = 60\nprediction = 0.016\n")
                text += """

                    [[screen_gesture]]
                    name = "back"
                    gesture = "edge_swipe"
                    edge = "left"

                    [[screen_gesture]]
                    name = "admin"
                    gesture = "long_press"
                    touches = 2
                    duration = 0.4

                    [[tuio]]
                    target = "127.0.0.1:3334"
                    version = "2.0"
                    contacts = true
                    elements = ["*"]
                    predicted = true

                    """
            }
            return try Configuration.parse(text, file: "motiond.toml")
        }
    }

    @Test("the same bytes as the checked-in digests", arguments: Scene.allCases)
    func wire(_ scene: Scene) throws {
        let update = ProcessInfo.processInfo.environment["MOTIOND_WIRE_UPDATE"] == "1"
        let captureDirectory = ProcessInfo.processInfo.environment["MOTIOND_WIRE_CAPTURE"]
        var digests = update ? [:] : try Self.readDigests()
        #expect(Self.recordings.count >= 19, "the bundled recordings: \(Self.recordings)")
        for recording in Self.recordings {
            let capture = try WireCapture.play(Self.fixtures.appendingPathComponent("recordings/\(recording)").path,
                                               configuration: scene.configuration())
            let key = "\(scene.rawValue) \(recording)"
            let found = Digest(capture)
            if let captureDirectory {
                let name = key.replacingOccurrences(of: "/", with: "_").replacingOccurrences(of: " ", with: "__")
                try Data(capture).write(to: URL(fileURLWithPath: captureDirectory).appendingPathComponent(name + ".wire"))
            }
            if update {
                digests[key] = found
            } else {
                #expect(found.bytes > 2_000, "\(key): the capture is too short to mean anything (\(found.bytes) bytes)")
                #expect(digests[key] == found, "\(key): \(found) instead of \(digests[key].map { "\($0)" } ?? "no digest"): the wire changed (MOTIOND_WIRE_CAPTURE=DIR writes the captures to compare)")
            }
        }
        if update { try Self.writeDigests(digests, scene: scene) }
    }

    @Test("a capture is the same when played twice, and differs when the input does")
    func captureIsRepeatable() throws {
        let path = Self.fixtures.appendingPathComponent("recordings/generated/fling.clean.evemu").path
        let first = try WireCapture.play(path, configuration: Scene.everything.configuration())
        let second = try WireCapture.play(path, configuration: Scene.everything.configuration())
        #expect(first == second)
        // The digests hold on any clone: the recording's path, which names the replayed
        // device on the wire, is the same placeholder wherever the repository is.
        let text = String(decoding: first, as: UTF8.self)
        #expect(text.contains("replay:<fixtures>/recordings/generated/fling.clean.evemu"))
        #expect(!text.contains(Self.fixtures.path))
        let other = try WireCapture.play(path, configuration: Scene.example.configuration())
        #expect(Digest(first) != Digest(other))
    }

    // MARK: Digests

    /// A capture's length and 64-bit FNV-1a hash: enough to see that bytes changed.
    struct Digest: Equatable, CustomStringConvertible {
        var bytes: Int
        var hash: UInt64

        init(bytes: Int, hash: UInt64) {
            self.bytes = bytes
            self.hash = hash
        }

        init(_ capture: [UInt8]) {
            var hash: UInt64 = 0xcbf2_9ce4_8422_2325
            for byte in capture { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
            self.init(bytes: capture.count, hash: hash)
        }

        var description: String { "\(bytes) bytes, hash \(String(hash, radix: 16))" }
    }

    static func readDigests() throws -> [String: Digest] {
        let text = try String(contentsOf: digestsFile, encoding: .utf8)
        var digests: [String: Digest] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let fields = line.split(separator: " ")
            guard fields.count == 4, let bytes = Int(fields[2]), let hash = UInt64(fields[3], radix: 16) else { continue }
            digests["\(fields[0]) \(fields[1])"] = Digest(bytes: bytes, hash: hash)
        }
        return digests
    }

    /// Writes `digests` for `scene`, keeping the other scenes' lines.
    static func writeDigests(_ digests: [String: Digest], scene: Scene) throws {
        var all = (try? readDigests()) ?? [:]
        all = all.filter { !$0.key.hasPrefix("\(scene.rawValue) ") }
        all.merge(digests) { $1 }
        var text = "# scene recording bytes fnv1a-64: written by WireCaptureTests with MOTIOND_WIRE_UPDATE=1\n"
        for key in all.keys.sorted() { text += "\(key) \(all[key]!.bytes) \(String(all[key]!.hash, radix: 16))\n" }
        try FileManager.default.createDirectory(at: digestsFile.deletingLastPathComponent(), withIntermediateDirectories: true)
        try text.write(to: digestsFile, atomically: true, encoding: .utf8)
    }
}

/// One play of a recording into a daemon on an embedded event loop, and what it sent.
enum WireCapture {
    /// Plays `path` once and lets the scene come to rest; returns every client's bytes and
    /// every datagram, each part headed by who received it.
    static func play(_ path: String, configuration: Configuration) throws -> [UInt8] {
        let loop = EmbeddedEventLoop()
        let scheduler = LoopScheduler(loop)
        let clock = TimedFrameClock(rate: configuration.daemon.frameRate, scheduler: scheduler)
        let datagrams = DatagramRecorder()
        let tuio = TUIOTargets(makeSink: { datagrams.sink(for: $0.description) }, wallClock: {
            let nanoseconds = Int(loop.now.uptimeNanoseconds)
            return (1_800_000_000 + nanoseconds / 1_000_000_000, nanoseconds % 1_000_000_000)
        })
        let daemon = Daemon(configuration: configuration, clock: clock, idleScheduler: scheduler, tuio: tuio, controlPolicy: { _ in true })
        daemon.configureSinks()  // started, as DaemonService starts it
        let clients = [(WireOutput(keepingUp: true), #"["*"]"#), (WireOutput(keepingUp: true), #"["card.*","screen.*","photo.position"]"#),
                       (WireOutput(keepingUp: false), #"["*"]"#)]
        for (output, streams) in clients {
            let session = daemon.connect(output, credentials: nil)
            daemon.receive(#"{"id":1,"op":"subscribe","streams":\#(streams)}"#, from: session)
        }
        let driver = try ReplayDriver(path: path, device: nil, configuration: configuration, speed: 1, loops: false, daemon: daemon, lock: DaemonLock(),
                                      eventLoop: loop, logger: Logger(label: "wire") { _ in SwiftLogNoOpLogHandler() }, pacing: .eventLoopTimers(clock: { Double(loop.now.uptimeNanoseconds) / 1e9 }))
        try driver.start()
        // The recording's length, then time for every spring to settle and attract mode to be
        // left alone: the longest recording is under a minute.
        let end = EvemuRecordingLength.seconds(path) + 10
        loop.advanceTime(to: .uptimeNanoseconds(UInt64(end * 1e9)))
        driver.stop()
        daemon.finish(reason: "the capture ended")
        var capture: [UInt8] = []
        for (index, (output, streams)) in clients.enumerated() {
            capture += Array("== client \(index) \(streams)\n".utf8) + output.bytes
        }
        capture += datagrams.bytes
        return withoutCheckout(capture)
    }

    /// `capture` with the checkout's place on this machine replaced by `<fixtures>`: a replayed
    /// device is named by its recording's path (`replay:/…/recordings/x.evemu`), which clients
    /// are sent, and the digests must not depend on where the repository was cloned.
    static func withoutCheckout(_ capture: [UInt8]) -> [UInt8] {
        let place = Array(WireCaptureTests.fixtures.path.utf8), placeholder = Array("<fixtures>".utf8)
        var result: [UInt8] = []
        result.reserveCapacity(capture.count)
        var index = 0
        while index < capture.count {
            if capture[index] == place[0], capture[index...].starts(with: place) {
                result += placeholder
                index += place.count
            } else {
                result.append(capture[index])
                index += 1
            }
        }
        return result
    }

    /// A client that reads everything at once, or one behind that gets each line by itself.
    final class WireOutput: ClientOutput {
        var bytes: [UInt8] = []
        let isKeepingUp: Bool
        var coalesced: Int { 0 }

        init(keepingUp: Bool) { isKeepingUp = keepingUp }

        func send(_ line: ArraySlice<UInt8>, coalescing stream: StreamID?) { bytes += line }
        func sendNow(_ lines: ArraySlice<UInt8>) { bytes += lines }
        func flush() {}
        func close(saying line: ArraySlice<UInt8>?) { if let line { bytes += line } }
    }

    /// Every datagram to every target, in the order sent, as hexadecimal lines.
    final class DatagramRecorder {
        private(set) var bytes: [UInt8] = []

        func sink(for target: String) -> DatagramSink { Sink(target: target, recorder: self) }

        private final class Sink: DatagramSink {
            let target: String
            let recorder: DatagramRecorder
            init(target: String, recorder: DatagramRecorder) {
                self.target = target
                self.recorder = recorder
            }
            func send(_ datagram: borrowing [UInt8]) -> Int32? {
                var line = "== tuio \(target) "
                for index in datagram.indices {
                    let hex = String(datagram[index], radix: 16)
                    line += hex.count == 1 ? "0" + hex : hex
                }
                recorder.bytes += Array((line + "\n").utf8)
                return nil
            }
            func close() {}
        }
    }

    /// Springs and the engine's timer on the embedded loop's time.
    final class LoopScheduler: FrameScheduler {
        let loop: EmbeddedEventLoop
        init(_ loop: EmbeddedEventLoop) { self.loop = loop }
        var now: Double { Double(loop.now.uptimeNanoseconds) / 1e9 }
        func schedule(at deadline: Double, _ work: @escaping () -> Void) -> () -> Void {
            let task = loop.scheduleTask(deadline: .uptimeNanoseconds(UInt64(Swift.max(0, deadline) * 1e9))) { work() }
            return { task.cancel() }
        }
    }
}

/// How long a recording plays: its last event's time after its first.
enum EvemuRecordingLength {
    static func seconds(_ path: String) -> Double {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8), let recording = try? EvemuRecording(reading: text, device: nil),
              let first = recording.events.first, let last = recording.events.last else { return 0 }
        return last.time - first.time
    }
}
