import Foundation
import MotionCore
import DaemonTestSupport
import Testing
@testable import MotionConfiguration
@testable import MotionDaemon

/// `add_element` and the configuration file read elements with the same reader and the
/// same cross-element checks: the same element is accepted by both or refused by both,
/// for the same reason.
@Suite("add_element agrees with the configuration file")
struct ElementInputTests {
    /// Each case: the element as TOML (after `[[element]]`) and as add_element's JSON.
    static let cases: [(toml: String, json: String)] = [
        ("id = \"a\"\ncenter = [1, 2]\nsize = [3, 4]", #"{"id": "a", "center": [1, 2], "size": [3, 4]}"#),
        ("id = \"a\"\ncenter = [1, 2]\nsize = [0, 4]", #"{"id": "a", "center": [1, 2], "size": [0, 4]}"#),
        ("id = \"a\"\ncenter = [1, 2]", #"{"id": "a", "center": [1, 2]}"#),
        ("id = \"a\"\ncenter = \"x\"\nsize = [3, 4]", #"{"id": "a", "center": "x", "size": [3, 4]}"#),
        ("id = \"a\"\ncenter = [1, 2]\nsize = [3, 4]\nz = 1.5", #"{"id": "a", "center": [1, 2], "size": [3, 4], "z": 1.5}"#),
        ("id = \"a\"\ncenter = [1, 2]\nsize = [3, 4]\ncolour = 1", #"{"id": "a", "center": [1, 2], "size": [3, 4], "colour": 1}"#),
        ("id = \"a\"\ncenter = [1, 2]\nsize = [3, 4]\n[element.tossable]\ndestination = \"a\"",
         #"{"id": "a", "center": [1, 2], "size": [3, 4], "interactions": {"tossable": {"destination": "a"}}}"#),
        ("id = \"a\"\ncenter = [1, 2]\nsize = [3, 4]\n[element.tossable]\ndestination = \"nowhere\"",
         #"{"id": "a", "center": [1, 2], "size": [3, 4], "interactions": {"tossable": {"destination": "nowhere"}}}"#),
        ("id = \"a\"\ncenter = [1, 2]\nsize = [3, 4]\n[element.set_position_on_tap]\ntarget = \"tossable\"",
         #"{"id": "a", "center": [1, 2], "size": [3, 4], "interactions": {"set_position_on_tap": {"target": "tossable"}}}"#),
        ("id = \"a\"\ncenter = [1, 2]\nsize = [3, 4]\n[element.tossable]\nspring = { tension = -1, friction = 30 }",
         #"{"id": "a", "center": [1, 2], "size": [3, 4], "interactions": {"tossable": {"spring": {"tension": -1, "friction": 30}}}}"#),
        ("id = \"a\"\ncenter = [1, 2]\nsize = [3, 4]\n[element.draggable]\n[element.directly_manipulable]",
         #"{"id": "a", "center": [1, 2], "size": [3, 4], "interactions": {"draggable": {}, "directly_manipulable": {}}}"#),
        // An id the state file could not keep is no element's id.
        ("id = \"\(String(repeating: "é", count: 129))\"\ncenter = [1, 2]\nsize = [3, 4]",
         #"{"id": "\#(String(repeating: "é", count: 129))", "center": [1, 2], "size": [3, 4]}"#),
    ]

    @Test("the same element is accepted or refused alike, for the same reason", arguments: cases.indices)
    func agree(_ index: Int) throws {
        let (toml, json) = Self.cases[index]
        let fromFile = Result { () throws(ConfigurationError) in try Configuration.parse("[[element]]\n" + toml, file: "t.toml") }
        let (daemon, _) = try makeEmptyDaemon()
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        _ = try output.take()
        daemon.receive(#"{"id": 1, "op": "add_element", "element": "# + json + "}", from: session)
        let reply = try #require(try output.take().first)
        switch fromFile {
        case .success:
            #expect(reply["ok"]?.bool == true, "\(reply)")
        case .failure(let error):
            #expect(reply["ok"]?.bool == false)
            // The file names the entry ([element[0]]); a request has one element ([element]).
            #expect(reply["error"]?["message"]?.string == error.message.replacingOccurrences(of: "[element[0]", with: "[element"), "file: \(error.message)")
        }
    }

    private func makeEmptyDaemon() throws -> (Daemon, ManualFrameClock) {
        let clock = ManualFrameClock(now: 0)
        return (Daemon(configuration: try Configuration.parse("", file: "empty.toml"), clock: clock, controlPolicy: { _ in true }), clock)
    }
}
