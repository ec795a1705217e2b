import Foundation
import Glibc
import Testing

/// `oscdump` (Debian's liblo-tools) listening on a free loopback UDP port: an OSC decoder
/// that is not ours, reading what motiond sends.
final class OSCDump {
    let port: Int
    private let process = Process()
    private let reader: ThreadedReader
    private let exit = ExitWatch()

    init() throws {
        port = try EndToEnd.freeLoopbackPort(SOCK_DGRAM)
        let output = Pipe()
        process.executableURL = try Run.onPath("oscdump")
        process.arguments = ["-L", "\(port)"]
        process.standardOutput = output
        process.standardError = output
        exit.watch(process)
        try process.run()
        reader = ThreadedReader(output.fileHandleForReading)
        // Bound when the kernel lists the port; a datagram sent before would be lost.
        let hex = String(format: ":%04X ", port)
        let deadline = Date().addingTimeInterval(30)
        while !((try? String(contentsOfFile: "/proc/net/udp", encoding: .utf8))?.contains(hex) ?? false) {
            guard Date() < deadline, !exit.hasExited else {
                throw RunningDaemon.Failure(description: "oscdump did not listen on \(port): \(text)")
            }
            usleep(5_000)
        }
    }

    /// What it printed so far.
    var text: String { String(decoding: reader.waitUntil(seconds: 0) { _ in true }, as: UTF8.self) }

    /// Waits up to `seconds` for a line satisfying `done`, then stops oscdump; its messages.
    func messages(until done: (OSCLine) -> Bool, seconds: Double = 30) -> [OSCLine] {
        let data = reader.waitUntil(seconds: seconds) { data in
            String(decoding: data, as: UTF8.self).split(separator: "\n").contains { OSCLine($0).map(done) ?? false }
        }
        kill(process.processIdentifier, SIGKILL)  // oscdump does not end on SIGTERM while it waits
        _ = exit.wait(seconds: 10)
        return String(decoding: data, as: UTF8.self).split(separator: "\n").compactMap(OSCLine.init)
    }

    deinit {
        if !exit.hasExited { kill(process.processIdentifier, SIGKILL) }
    }
}

/// One message as oscdump prints it: `TIMETAG ADDRESS TYPES ARGUMENTS…` (strings quoted,
/// floats with six decimals).
struct OSCLine: CustomStringConvertible {
    var address: String
    var arguments: [String]
    var description: String { ([address] + arguments).joined(separator: " ") }

    init?(_ line: Substring) {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count >= 2, fields[1].hasPrefix("/") else { return nil }
        address = String(fields[1])
        arguments = fields.count > 3 ? fields[3...].map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) } : []
    }

    /// The first argument (TUIO 1.1's command: source, alive, set, fseq).
    var command: String? { arguments.first }
    func int(_ index: Int) -> Int? { index < arguments.count ? Int(arguments[index]) : nil }
    func number(_ index: Int) -> Double? { index < arguments.count ? Double(arguments[index]) : nil }
}

extension Daemons {
    /// A recording replayed through motiond under umockdev, sent to two `[[tuio]]` targets
    /// (1.1 and 2.0) and read back by oscdump, against what the same run published on the
    /// socket.
    @Suite("TUIO end to end")
    struct TUIOEndToEndTests {
        static let width = 1920.0, height = 1080.0

        struct Session {
            var tuio11: [OSCLine]
            var tuio20: [OSCLine]
            var socket: [[String: Any]]
            /// What the client read, then motiond's log: for a failure's message.
            var log: String

            /// A stream's values from the socket, in order.
            func values(_ stream: String) -> [Any] { socket.filter { $0["stream"] as? String == stream }.compactMap { $0["value"] } }
        }

        /// Plays `recording` to a daemon whose `surface` element is directly manipulable, with
        /// both TUIO targets, subscribed to the surface and the contacts.
        func run(_ recording: String) throws -> Session {
            let v11 = try OSCDump(), v20 = try OSCDump()
            let directory = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: directory) }
            let configuration = directory.appendingPathComponent("motiond.toml")
            try """
                [gestures]
                rotation_slop_degrees = 0

                [[element]]
                id = "surface"
                center = [960, 540]
                size = [1920, 1080]
                [element.directly_manipulable]

                [[tuio]]
                target = "127.0.0.1:\(v11.port)"
                elements = "*"
                source = "motiond@e2e"

                [[tuio]]
                target = "127.0.0.1:\(v20.port)"
                version = "2.0"
                elements = ["surface"]
                source = "motiond@e2e"
                """.write(to: configuration, atomically: true, encoding: .utf8)
            let files = try EndToEnd.convert(EndToEnd.recordings.appendingPathComponent(recording + ".evemu"), into: directory)
            let socket = directory.appendingPathComponent("motiond.sock").path
            let run = try Run("umockdev-wrapper", [
                "/usr/bin/python3", EndToEnd.repository.appendingPathComponent("Tests/EndToEnd/daemon_session.py").path,
                files.device, files.ioctl, files.events, socket, "surface.position", "surface.state", "surface.rotation", "screen.contacts", "--",
                Run.productsDirectory.appendingPathComponent("motiond").path, "--config", configuration.path, "--socket", socket,
            ], absolute: true)
            try #require(run.status == 0, "\(run.error)")
            // A motiond that ended by itself sends no last bundles: say so now, with its log,
            // instead of waiting for them.
            let socketLines = try run.jsonLines()
            let stopped = try #require(socketLines.last)
            try #require(stopped["step"] as? String == "stopped" && stopped["code"] as? Int == 0,
                         "motiond did not stop cleanly on SIGTERM: \(stopped)\nthe client read:\n\(run.output.suffix(3000))\nmotiond's log:\n\(run.error.suffix(4000))")
            // motiond's last bundles say that nothing is alive: the elements are gone too.
            let tuio11 = v11.messages { $0.address == "/tuio/2Dobj" && $0.arguments == ["alive"] }
            let tuio20 = v20.messages { $0.address == "/tuio2/alv" && $0.arguments.isEmpty }
            return Session(tuio11: tuio11, tuio20: tuio20, socket: socketLines, log: run.output + "\n" + run.error)
        }

        /// Positions as TUIO has them: normalised over the screen.
        static func normalised(_ value: Any) -> (Double, Double)? {
            guard let point = value as? [String: Double], let x = point["x"], let y = point["y"] else { return nil }
            return (x / width, y / height)
        }

        /// Whether two normalised values agree to oscdump's six decimals (and float32's precision).
        static func close(_ a: (Double, Double), _ b: (Double, Double)) -> Bool { abs(a.0 - b.0) < 2e-6 && abs(a.1 - b.1) < 2e-6 }

        @Test("the drag recording in TUIO 1.1 and 2.0: the cursor path is the published contacts', alive from landing to lift, frames numbered upwards, the element's path its position's")
        func drag() throws {
            let session = try run("whot-evemu-devices__atmel-maxtouch__1f-drag-up-down")
            let contacts = session.values("screen.contacts").compactMap { $0 as? [[String: Any]] }
            let published = contacts.filter { $0.count == 1 }.compactMap { fingers -> (Double, Double)? in
                guard let x = fingers[0]["x"] as? Double, let y = fingers[0]["y"] as? Double else { return nil }
                return (x / Self.width, y / Self.height)
            }
            // Fewer than the recording's frames on a busy machine, where the daemon coalesces
            // frames that queued up; TUIO's path is compared with whatever the socket got.
            try #require(published.count > 50, "the drag's contacts reached the socket: \(published.count)")

            // 1.1: the cursor profile, frame by frame (fseq ends each).
            let cursor = session.tuio11.filter { $0.address == "/tuio/2Dcur" }
            var frames: [(alive: [Int], sets: [(Int, (Double, Double))], fseq: Int)] = []
            var alive: [Int] = [], sets: [(Int, (Double, Double))] = []
            for line in cursor {
                switch line.command {
                case "alive": alive = line.arguments.dropFirst().compactMap { Int($0) }
                case "set": sets.append((line.int(1)!, (line.number(2)!, line.number(3)!)))
                case "fseq":
                    frames.append((alive, sets, line.int(1)!))
                    sets = []
                default: #expect(line.command == "source" && line.arguments.last == "motiond@e2e", "\(line)")
                }
            }
            let paths11 = frames.flatMap(\.sets).map(\.1)
            #expect(paths11.count == published.count, "a set for every published position: \(paths11.count) against \(published.count)")
            #expect(zip(paths11, published).allSatisfy(Self.close), "the cursor path is the published contacts' divided by the screen")
            let fseq = frames.map(\.fseq)
            #expect(zip(fseq, fseq.dropFirst()).allSatisfy { $0 < $1 }, "frame numbers increase")
            // Alive: nobody, then the one finger from its first set to its lift, then nobody.
            let session11 = try #require(frames.flatMap(\.sets).first?.0)
            let shape = frames.map(\.alive).map { $0 == [session11] ? "1" : $0.isEmpty ? "0" : "?" }.joined()
            #expect(shape.range(of: "^0*1+0+$", options: .regularExpression) != nil, "alive lists over the frames: \(shape)")
            let landing = try #require(frames.firstIndex { !$0.sets.isEmpty })
            #expect(frames[landing].alive == [session11], "alive from the frame it lands in")
            #expect(frames.last?.alive == [], "gone at its lift")

            // The element as a tangible object: its path is surface.position's.
            let objectPath = session.tuio11.filter { $0.address == "/tuio/2Dobj" && $0.command == "set" }.map { ($0.number(3)!, $0.number(4)!) }
            let positions = session.values("surface.position").compactMap(Self.normalised)
            #expect(objectPath.count >= positions.count - 1 && positions.count > 50)
            #expect(positions.allSatisfy { position in objectPath.contains { Self.close($0, position) } }, "every published position went out")
            #expect(Self.close(try #require(objectPath.last), try #require(positions.last)), "and the last one is where it rests")

            // 2.0: the same path as ptr messages, frm numbers increasing, alv with the finger and the surface.
            let frm = session.tuio20.filter { $0.address == "/tuio2/frm" }.compactMap { $0.int(0) }
            #expect(frm.count > 100 && zip(frm, frm.dropFirst()).allSatisfy { $0 < $1 })
            #expect(session.tuio20.filter { $0.address == "/tuio2/frm" }.allSatisfy { $0.int(2) == 1920 << 16 | 1080 && $0.arguments.last == "motiond@e2e" })
            let pointers = session.tuio20.filter { $0.address == "/tuio2/ptr" }
            let paths20 = pointers.map { ($0.number(3)!, $0.number(4)!) }
            #expect(paths20.count == published.count && zip(paths20, published).allSatisfy(Self.close))
            let finger = try #require(pointers.first?.int(0))
            let surface = try #require(session.tuio20.first { $0.address == "/tuio2/tok" }?.int(0))
            let alv = session.tuio20.filter { $0.address == "/tuio2/alv" }.map { Set($0.arguments.compactMap { Int($0) }) }
            #expect(alv.dropLast().allSatisfy { $0.contains(surface) }, "the surface is alive in every frame until motiond stops")
            #expect(alv.contains { $0 == [finger, surface] } && alv.dropLast().last == [surface], "the finger while down, not after")
        }

        @Test("two fingers turning the surface: the object's angle follows surface.rotation, from 0 to 2π")
        func rotation() throws {
            let session = try run("whot-evemu-devices__ep0430m09__2f-drag-scroll")
            let rotations = session.values("surface.rotation").compactMap { $0 as? Double }
            try #require(rotations.count > 10 && Set(rotations).count > 5, "the fingers turned the surface: \(rotations.prefix(10))\n\(session.log.suffix(6000))")
            func distinct(_ values: [Double]) -> [Double] {
                values.reduce(into: []) { result, value in if result.last.map({ angleDistance($0, value) > 2e-6 }) ?? true { result.append(value) } }
            }
            func angleDistance(_ a: Double, _ b: Double) -> Double { let d = abs(a - b).truncatingRemainder(dividingBy: 2 * .pi); return min(d, 2 * .pi - d) }
            let expected = distinct(rotations.map { value in let turned = value.truncatingRemainder(dividingBy: 2 * .pi); return turned < 0 ? turned + 2 * .pi : turned })
            for (name, angles) in [
                ("1.1", session.tuio11.filter { $0.address == "/tuio/2Dobj" && $0.command == "set" }.map { $0.number(5)! }),
                ("2.0", session.tuio20.filter { $0.address == "/tuio2/tok" }.map { $0.number(5)! }),
            ] {
                #expect(angles.allSatisfy { (0..<(2 * .pi)).contains($0) }, "\(name): angles from 0 to 2π")
                let sent = distinct(angles)
                #expect(sent.count == expected.count && zip(sent, expected).allSatisfy { angleDistance($0, $1) < 2e-6 },
                        "\(name): \(sent.prefix(6)) against \(expected.prefix(6))")
            }
        }
    }
}
