import Foundation
import MotionCore
import SeededRandom
import DaemonTestSupport
import Testing
@testable import MotionDaemon

/// The state file: what a scene writes reads back the same; anything else (a torn write,
/// garbage, hostile values) is refused with the place and the reason, never a crash; and a
/// write replaces the file whole or not at all.
@Suite("StateFile")
struct StateFileTests {
    let limits = ValueLimits(screen: Size(width: 1920, height: 1080))

    /// A scene with each kind of element: added with a destination, added without one, and
    /// configured (no `added`), with numbers that are not whole.
    static let scene = SceneState(elements: [
        .init(id: "card", added: .object([("id", "card"), ("position", [300, 200]), ("tossable", .object([("destination", [300, 200])]))]),
              position: Point(x: 310.25, y: -190.5), rotation: 0.1, scale: 1.5, destination: Point(x: 300, y: 200)),
        // The id is one an element may have (ElementSettings.idProblem); the quotes and the
        // newline the writer escapes are in the request it was added by.
        .init(id: "photo_ü", added: .object([("id", "photo_ü"), ("size", [100, 80]), ("title", "\"ü\"\n")]), position: Point(x: 0, y: 0)),
        .init(id: "background", position: Point(x: 960, y: 540), rotation: -3.14159, scale: 1e-6),
    ])

    private func read(_ text: String) throws(SceneStateError) -> SceneState {
        try SceneState(reading: Array(text.utf8), limits: limits)
    }

    /// The refusal of `text`, which must be refused.
    private func refusal(_ text: String) -> SceneStateError? {
        do { _ = try read(text); return nil } catch { return error }
    }

    private func temporaryDirectory() throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("motiond-state-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: false)
        return url.path
    }

    private func contents(_ directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).sorted()
    }

    // MARK: The format

    @Test("a scene reads back as it was written, one element per line")
    func roundTrip() throws {
        let bytes = Self.scene.encoded
        let again = try SceneState(reading: bytes, limits: limits)
        #expect(again == Self.scene)
        #expect(again.elements.map(\.added).last == .some(nil), "a configured element's added is nil, not JSON null")
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == Self.scene.elements.count + 2)
        #expect(lines.first == #"{"motiond_state":2}"#)
        #expect(lines[1].hasPrefix(#"{"id":"card","added":{"#))
        #expect(lines[1].hasSuffix(#""position":[310.25,-190.5],"rotation":0.1,"scale":1.5,"destination":[300,200]}"#))
        #expect(lines.last == #"{"elements":3}"#)
        // Written again, the same bytes.
        #expect(try SceneState(reading: bytes, limits: limits).encoded == bytes)
        #expect(try read(#"{"version":1,"elements":[]}"#) == SceneState(elements: []))
    }

    @Test("every prefix of a file is refused but the whole one, never a crash")
    func everyPrefix() throws {
        try expectEveryPrefixRefused(Self.scene)
    }

    @Test("every prefix of the file a daemon writes (the example scene, a client's tossable element, a turned photo) is refused but the whole one")
    func everyPrefixOfADaemonsScene() throws {
        let (daemon, _) = try makeDaemon()
        let session = daemon.connect(RecordingOutput(), credentials: nil)
        daemon.receive(#"{"id": 1, "op": "add_element", "element": {"id": "note", "center": [300, 200], "size": [200, 120], "interactions": {"tossable": {"destination": [300, 200]}}}}"#, from: session)
        daemon.receive(#"{"id": 2, "op": "set", "stream": "note.position", "value": {"x": 1650.5, "y": 140.25}}"#, from: session)
        daemon.receive(#"{"id": 3, "op": "set", "stream": "photo.rotation", "value": 0.7}"#, from: session)
        let (state, limits) = daemon.scene.savedState()
        try #require(state.elements.count == 5 && state.elements.last?.added != nil && state.elements.last?.destination != nil, "\(state)")
        try expectEveryPrefixRefused(state, limits: limits)
    }

    /// Cuts `state`'s bytes at every offset: each prefix short of the whole file, its last
    /// newline included, is refused (a scene written whole is never half read), and the whole
    /// one reads back as `state`.
    private func expectEveryPrefixRefused(_ state: SceneState, limits: ValueLimits? = nil) throws {
        let limits = limits ?? self.limits
        let bytes = state.encoded
        for count in 0..<bytes.count {
            #expect(throws: SceneStateError.self, "\(count) of \(bytes.count) bytes") { try SceneState(reading: bytes.prefix(count), limits: limits) }
        }
        #expect(try SceneState(reading: bytes, limits: limits) == state)
    }

    @Test("garbage is refused, never a crash", .seeded)
    func garbage() {
        var generator = TestSeed.generator()
        for round in 0..<2000 {
            var bytes = (0..<Int.random(in: 0...200, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            // Half of them start like a state file, to get past the first byte.
            if round % 3 == 0 { bytes = Array(#"{"version":1,"elements":[{"id":"#.utf8) + bytes }
            if round % 3 == 1 { bytes = Array("{\"motiond_state\":2}\n{\"id\":".utf8) + bytes }
            #expect(throws: SceneStateError.self) { try SceneState(reading: bytes, limits: limits) }
        }
        for text in ["", "null", "[]", "\u{FEFF}{}", "{\"version\":1,\"elements\":[]}x", "{} {}"] {
            #expect(refusal(text) != nil, "\(text)")
        }
        #expect(throws: SceneStateError.self) { try SceneState(reading: [0x7B, 0x22, 0xC0, 0xAF, 0x22, 0x3A, 0x31, 0x7D], limits: limits) }
    }

    @Test("hostile and wrong values are refused, naming the element and the key",
          arguments: [
            (stateFile(stateElement(["id": #""a\u0000b""#])), SceneStateError.Kind.badID, 0, "id"),
            (stateFile(stateElement(["id": #""""#])), .badID, 0, "id"),
            (stateFile(stateElement(["id": "\"" + String(repeating: "é", count: 129) + "\""])), .badID, 0, "id"),
            (stateFile(stateElement(["id": #""cafe\u0301""#])), .badID, 0, "id"),
            (stateFile(stateElement(["id": #""card\u200D""#])), .badID, 0, "id"),
            (stateFile(stateElement(["id": #""a b""#])), .badID, 0, "id"),
            (stateFile(stateElement(), stateElement(["position": "[5,5]"])), .badID, 1, "id"),
            (stateFile(stateElement(["id": "7"])), .wrongType, 0, "id"),
            (stateFile(stateElement(["position": "[1e308,0]"])), .outOfRange, 0, "position"),
            (stateFile(stateElement(["position": "[0,-1e5]"])), .outOfRange, 0, "position"),
            (stateFile(stateElement(["destination": "[21121,0]"])), .outOfRange, 0, "destination"),
            (stateFile(stateElement(["rotation": "1e308"])), .outOfRange, 0, "rotation"),
            (stateFile(stateElement(["rotation": #""NaN""#])), .wrongType, 0, "rotation"),
            (stateFile(stateElement(["scale": "0"])), .outOfRange, 0, "scale"),
            (stateFile(stateElement(["scale": "-1"])), .outOfRange, 0, "scale"),
            (stateFile(stateElement(["scale": "1e7"])), .outOfRange, 0, "scale"),
            (stateFile(stateElement(["scale": "true"])), .wrongType, 0, "scale"),
            (stateFile(stateElement(["position": "[1]"])), .wrongType, 0, "position"),
            (stateFile(stateElement(["position": #"{"x":1,"y":2}"#])), .wrongType, 0, "position"),
            (stateFile(stateElement(["position": #"[1,"2"]"#])), .wrongType, 0, "position"),
            (stateFile(stateElement(["added": "[]"])), .wrongType, 0, "added"),
            (stateFile(stateElement(["added": "-"])), .missingKey, 0, "added"),
            (stateFile(stateElement(["destination": "-"])), .missingKey, 0, "destination"),
            (stateFile(stateElement(["id": "-"])), .missingKey, 0, "id"),
            (stateFile(stateElement(["colour": #""red""#])), .unknownKey, 0, "colour"),
            (stateFile("7"), .wrongType, 0, nil),
          ] as [(String, SceneStateError.Kind, Int, String?)])
    func hostileValues(text: String, kind: SceneStateError.Kind, element: Int, key: String?) throws {
        let error = try #require(refusal(text))
        #expect(error.kind == kind, "\(error)")
        #expect(error.element == element, "\(error)")
        #expect(error.key == key, "\(error)")
    }

    @Test("the file's own keys: version, elements, nothing else",
          arguments: [
            (#"{"version":2,"elements":[]}"#, SceneStateError.Kind.wrongVersion, "version"),
            (#"{"version":"1","elements":[]}"#, .wrongVersion, "version"),
            (#"{"version":1.5,"elements":[]}"#, .wrongVersion, "version"),
            (#"{"elements":[]}"#, .notAStateFile, nil),
            (#"{"version":1}"#, .missingKey, "elements"),
            (#"{"version":1,"elements":{}}"#, .wrongType, "elements"),
            (#"{"version":1,"elements":[],"extra":0}"#, .unknownKey, "extra"),
            (#"{"version":1,"version":1,"elements":[]}"#, .notJSON, nil),
          ] as [(String, SceneStateError.Kind, String?)])
    func topLevel(text: String, kind: SceneStateError.Kind, key: String?) throws {
        let error = try #require(refusal(text))
        #expect(error.kind == kind, "\(error)")
        #expect(error.key == key, "\(error)")
        #expect(error.element == nil)
    }

    @Test("an error says where: the element's index and id, and the key")
    func errorDescription() throws {
        let error = try #require(refusal(stateFile(stateElement(), stateElement(["id": #""photo""#, "scale": "0"]))))
        #expect(error.description == #"element 1 ("photo"), key "scale": scale must be within 1e-06…1000000, not 0"#)
    }

    @Test("nesting, too many elements, values or bytes are refused")
    func bounds() throws {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(refusal(stateFile(stateElement(["added": #"{"id":"card","a":"# + deep + "}"])))?.kind == .notJSON)

        let element = stateElement(["id": #""e""#])
        func many(_ count: Int) -> String {
            stateFile((0..<count).map { element.replacingOccurrences(of: #""e""#, with: "\"e\($0)\"") }.joined(separator: ","))
        }
        #expect(try read(many(SceneState.maximumElements)).elements.count == SceneState.maximumElements)
        let tooMany = try #require(refusal(many(SceneState.maximumElements + 1)))
        #expect(tooMany.kind == .tooManyElements)

        let values = stateFile(stateElement(["added": #"{"id":"card","a":["# + Array(repeating: "0", count: SceneState.maximumValues).joined(separator: ",") + "]}"]))
        #expect(refusal(values)?.kind == .tooLarge)
        // Commas and brackets in strings are not values.
        let text = "\"" + String(repeating: ",[{\\\"", count: 400_000) + "\""
        #expect(try read(stateFile(stateElement(["added": #"{"id":"card","a":"# + text + "}"]))).elements.count == 1)

        let padded = stateFile(element) + String(repeating: " ", count: SceneState.maximumBytes)
        #expect(refusal(padded)?.kind == .tooLarge)
    }

    // MARK: The file

    @Test("a write replaces the file by a rename, mode 0600, and leaves nothing else behind")
    func writeReplaces() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = StateFile(path: directory + "/scene.json")
        #expect(try file.read(limits: limits) == nil)

        let first = try file.replace(with: SceneState(elements: [Self.scene.elements[2]]), over: nil)
        let old = try FileHandle(forReadingFrom: URL(fileURLWithPath: file.path))
        defer { try? old.close() }
        try file.replace(with: Self.scene, over: first.identity)

        #expect(try file.read(limits: limits)?.contents?.state == Self.scene)
        #expect(try contents(directory) == ["scene.json"])
        let attributes = try FileManager.default.attributesOfItem(atPath: file.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        // The old file, still open, was replaced and not rewritten in place.
        let oldBytes = try old.readToEnd() ?? Data()
        #expect([UInt8](oldBytes) == SceneState(elements: [Self.scene.elements[2]]).encoded)
    }

    @Test("a write that fails removes its temporary file and keeps the old file")
    func writeFails() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // A directory where the file should be: it is not replaced.
        try FileManager.default.createDirectory(atPath: directory + "/scene.json/inside", withIntermediateDirectories: true)
        let file = StateFile(path: directory + "/scene.json")
        let error = try #require(throws: StateFileError.self) { try file.replace(with: Self.scene, over: nil) }
        #expect(error.cause == .replaced)
        #expect(error.leavesFileAlone)
        #expect(try contents(directory) == ["scene.json"])
        #expect(try contents(directory + "/scene.json") == ["inside"])
    }

    @Test("a write into a directory that does not exist throws and creates nothing")
    func writeNoDirectory() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = StateFile(path: directory + "/missing/scene.json")
        let error = try #require(throws: StateFileError.self) { try file.replace(with: Self.scene, over: nil) }
        #expect(error.cause == .create)
        #expect(error.problem == .failed(.create, errno: ENOENT))
        #expect(try contents(directory) == [])
        #expect(try file.read(limits: limits) == nil)
    }

    @Test("a system error is named in words, such as no space left")
    func systemErrorWords() {
        let error = StateFileError("/var/lib/motiond/.scene.json.1.tmp", .failed(.write, errno: ENOSPC))
        #expect(error.description == "cannot write /var/lib/motiond/.scene.json.1.tmp: No space left on device")
    }

    @Test("a refused file is refused by read, and set aside with its bytes, replacing an older one")
    func setAside() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = StateFile(path: directory + "/scene.json")
        try Data("older".utf8).write(to: URL(fileURLWithPath: file.refusedPath))
        let torn = Data(Self.scene.encoded.prefix(40))
        try torn.write(to: URL(fileURLWithPath: file.path))

        let error = try #require(throws: StateFileError.self) { try file.read(limits: limits) }
        #expect(error.cause == .refused)
        #expect(error.refusal?.kind == .notJSON)

        try file.setAside()
        #expect(try Data(contentsOf: URL(fileURLWithPath: file.refusedPath)) == torn)
        #expect(try contents(directory) == ["scene.json.refused"])
        #expect(try file.read(limits: limits) == nil)
    }

    @Test("a file over the limit is refused after reading one byte more than the limit")
    func largeFile() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = StateFile(path: directory + "/scene.json")
        #expect(FileManager.default.createFile(atPath: file.path, contents: Data("{\"motiond_state\":2}\n".utf8)))
        let handle = try #require(FileHandle(forWritingAtPath: file.path))
        // A sparse gigabyte after a state file's header: read whole, it would take a gigabyte.
        try handle.truncate(atOffset: 1 << 30)
        try handle.close()
        let error = try #require(throws: StateFileError.self) { try file.read(limits: limits) }
        #expect(error.refusal?.kind == .tooLarge && error.cause == .refused)
    }
}

/// A valid element's members but for `changes`, as text.
fileprivate func stateElement(_ changes: [String: String] = [:]) -> String {
    var members: [(String, String)] = [("id", #""card""#), ("added", "null"), ("position", "[1,2]"), ("rotation", "0"), ("scale", "1"), ("destination", "null")]
    for (key, value) in changes {
        if let index = members.firstIndex(where: { $0.0 == key }) { members[index].1 = value } else { members.append((key, value)) }
    }
    return "{" + members.filter { $0.1 != "-" }.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",") + "}"
}

fileprivate func stateFile(_ elements: String...) -> String { #"{"version":1,"elements":["# + elements.joined(separator: ",") + "]}" }

extension StateFileTests {
    @Test("the temporary files of writes cut short are removed at start, and nothing else")
    func leftovers() throws {
        let directory = try temporaryDirectory()
        let file = StateFile(path: directory + "/scene.json")
        try file.replace(with: Self.scene, over: nil)
        let litter = [".scene.json.8f21e7b87af789b7.tmp", ".scene.json.0.tmp"]
        let kept = ["scene.json", ".scene.json.notes.tmp", ".other.json.1a.tmp", "scene.json.refused"]
        for name in litter + kept.dropFirst() { FileManager.default.createFile(atPath: directory + "/" + name, contents: Data("x".utf8)) }
        #expect(file.removeLeftovers() == litter.count)
        #expect(try contents(directory) == kept.sorted())
        #expect(try file.read(limits: limits)?.contents?.state == Self.scene)
    }
}
