import Foundation
import Testing

/// The Debian package itself is built and checked by `scripts/package` (minutes, a release
/// build); this keeps the part that drifts silently in the everyday suite.
@Suite("The Debian package's metadata")
struct PackageTests {
    @Test("debian/changelog's version is the one motionctl --version reports, as scripts/package requires")
    func changelogVersion() throws {
        let changelog = EndToEnd.repository.appendingPathComponent("debian/changelog").path
        let parsed = try Run("dpkg-parsechangelog", ["-l", changelog, "-S", "Version"], absolute: true)
        #expect(parsed.status == 0, "\(parsed.error)")
        let tool = try Run("motionctl", ["--version"])
        #expect(tool.status == 0, "\(tool.error)")
        #expect(!parsed.lines.isEmpty && parsed.lines == tool.lines,
                "debian/changelog says \(parsed.lines), motionctl --version says \(tool.lines): add a changelog entry (dch -v) or fix Version.swift")
    }
}
