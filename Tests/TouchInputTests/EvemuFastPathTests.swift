import Foundation
import Testing
@testable import TouchInput

/// Event lines are read from their bytes when a file has no carriage return, and line by line
/// as Substrings otherwise. The same text with "\r\n" line endings takes the second way, so
/// the two must agree, line numbers and messages included, on every input.
@Suite("evemu event lines read from bytes")
struct EvemuFastPathTests {
    /// The recording, or the error, each way.
    func bothWays(_ text: String) -> (bytes: Result<EvemuRecording, EvemuParseError>, lines: Result<EvemuRecording, EvemuParseError>) {
        let crlf = text.replacingOccurrences(of: "\n", with: "\r\n")
        return (Result { () throws(EvemuParseError) in try EvemuRecording(parsing: text) },
                Result { () throws(EvemuParseError) in try EvemuRecording(parsing: crlf) })
    }

    func same(_ a: Result<EvemuRecording, EvemuParseError>, _ b: Result<EvemuRecording, EvemuParseError>) -> Bool {
        switch (a, b) {
        case let (.success(x), .success(y)): return x.events == y.events && x.device == y.device && x.formatVersion == y.formatVersion
        case let (.failure(x), .failure(y)): return x == y
        default: return false
        }
    }

    static let files = try! FileManager.default.contentsOfDirectory(atPath: FixtureRecordings.directory.path)
        .filter { $0.hasSuffix(".evemu") || $0.hasSuffix(".events") || $0.hasSuffix(".desc") }.sorted()

    @Test("every fixture reads the same from bytes as line by line", arguments: files)
    func fixtures(_ name: String) throws {
        let text = try FixtureRecordings.text(name)
        let (bytes, lines) = bothWays(text)
        #expect(same(bytes, lines))
        #expect(name.hasSuffix(".desc") || (try? bytes.get().events.count) ?? 0 > 0)
    }

    @Test("event lines at the edges of the form: the same event or the same error either way", arguments: [
        "E: 1.000001 0003 0035 -5", "E:\t1.5\t3\t35\t5 # a comment", "E: 1.5 3 35 5#c", "E:1.0 3 35 5", "E: 0.0 0 0 0",
        "E: 1.0000001 0003 0035 5", "E: 1.0 00003 0035 5", "E: 1.0 0003 0035 +5", "E: 1.0 abCD ef01 7", "E: 1.0 0003 0035 -0",
        "E: 4294967295.999999 0003 0035 1", "E: 4294967296.0 0003 0035 1", "E: 00000000001.0 3 35 1",
        "E: 1.0 3 35 2147483647", "E: 1.0 3 35 2147483648", "E: 1.0 3 35 -2147483648", "E: 1.0 3 35 -2147483649",
        "E: 1.0 3 35 5 6", "E: 1.0 3 35 5x", "E: 1.5.3 3 35 5", "E: .5 3 35 5", "E: 1. 3 35 5", "E: 1.0 3 35", "E:", "E: 1.0 g 35 5",
        "E: 1.0 3 35 ５", "E: 1.0 3 35 5\u{301}", "E:\u{301} 1.0 3 35 5", "E: 1.0 3 35 --5", "E: 1.0  3  35  5  ", "E: 1.0 3 35 5 #",
    ])
    func edges(_ line: String) {
        let text = "# EVEMU 1.3\nE: 0.000000 0000 0000 0\n" + line + "\nE: 2.000000 0000 0000 0\n"
        let (bytes, lines) = bothWays(text)
        #expect(same(bytes, lines), "\(bytes) vs \(lines)")
    }
}
