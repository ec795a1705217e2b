import Foundation
import Testing
@testable import MotionDaemon

/// The protocol's error codes are an enum; docs/protocol.md's table of errors is their contract.
@Suite("Protocol error codes")
struct ProtocolErrorCodeTests {
    @Test("every error code motiond can send is in docs/protocol.md's table of errors, and every code there is one motiond sends")
    func documented() throws {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/protocol.md")
        let text = try String(contentsOf: file, encoding: .utf8)
        // The rows of the table under "## Errors", up to the first line that is not one.
        let section = try #require(text.range(of: "## Errors\n\n| code | when |\n|---|---|\n"), "docs/protocol.md has no table of errors")
        let rows = text[section.upperBound...].split(separator: "\n", omittingEmptySubsequences: false)
            .prefix { $0.hasPrefix("| `") }
            .compactMap { line in line.firstMatch(of: #/^\| `([a-z_]+)` \|/#).map { String($0.output.1) } }
        #expect(rows.count >= 10, "\(rows)")
        let codes = ProtocolError.Code.allCases.map(\.rawValue)
        #expect(Set(codes).count == codes.count)
        #expect(Set(rows) == Set(codes), "documented but never sent: \(Set(rows).subtracting(codes).sorted()); sent but not documented: \(Set(codes).subtracting(rows).sorted())")
    }

    @Test("a refusal goes on the wire with the code's raw value")
    func wire() {
        let line = ProtocolLine.reply(id: 7, .failure(ProtocolError(.unknownStream, "no stream 'x'"))).encoded
        #expect(line.contains(#""code":"unknown_stream""#), "\(line)")
    }
}
