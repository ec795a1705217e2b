import Foundation
import Testing
@testable import MotionControl

/// `calibrate --fit` and the other commands that read pairs or recordings line by line hold
/// one block and one line, whatever the input (``LineReader``).
@Suite("Reading lines")
struct LineReaderTests {
    /// `text` in a temporary file; its path.
    static func file(_ bytes: [UInt8]) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("lines-\(UUID().uuidString)").path
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func lines(_ bytes: [UInt8], limit: Int) throws(LineReader.Failure) -> [String] {
        let path = try! file(bytes)
        defer { unlink(path) }
        var reader = try LineReader(path: path, limit: limit)
        var lines: [String] = []
        while let line = try reader.next() { lines.append(String(decoding: line, as: UTF8.self)) }
        return lines
    }

    @Test("lines end at a newline or at the end; empty lines are lines; across blocks nothing is lost")
    func lines() throws {
        #expect(try Self.lines(Array("a\n\nb c\nlast".utf8), limit: 16) == ["a", "", "b c", "last"])
        #expect(try Self.lines(Array("one\n".utf8), limit: 16) == ["one"])
        #expect(try Self.lines([], limit: 16) == [])
        // Lines that straddle the block boundary.
        let many = (0..<20_000).map { "line \($0)" }
        #expect(try Self.lines(Array(many.joined(separator: "\n").utf8), limit: 64) == many)
    }

    @Test("a line longer than the limit is refused with its number, wherever it falls")
    func tooLong() throws {
        for (bytes, line) in [(Array("ok\n\(String(repeating: "x", count: 17))\n".utf8), 2),
                              (Array(String(repeating: "y", count: LineReader.blockSize * 2).utf8), 1)] {
            #expect(throws: LineReader.Failure.self) { try Self.lines(bytes, limit: 16) }
            do {
                _ = try Self.lines(bytes, limit: 16)
            } catch {
                #expect(error.description == "line \(line) is longer than 16 bytes")
            }
        }
        #expect(try Self.lines(Array((String(repeating: "z", count: 16) + "\n").utf8), limit: 16).count == 1, "exactly the limit is a line")
    }
}
