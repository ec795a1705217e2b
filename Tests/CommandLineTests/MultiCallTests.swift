import Foundation
import Testing

/// The installed motionctl is a link to motiond (one binary, one Swift runtime on disk): called
/// by that name, motiond must be motionctl in every respect a user sees.
@Suite("motiond called as motionctl")
struct MultiCallTests {
    @Test("a link named motionctl to motiond answers as motionctl does, and motiond by its own name stays the daemon", arguments: [
        ["--version"],
        ["spring", "--json", "--at", "0.05,0.3"],
        ["config", "check", "config/motiond.toml"],
        ["no-such-command"],
    ])
    func linkedName(arguments: [String]) throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("motiond-multicall-\(getpid())-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let link = directory.appendingPathComponent("motionctl")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: Run.productsDirectory.appendingPathComponent("motiond"))

        let resolved = arguments.map { $0.hasPrefix("config/") ? EndToEnd.repository.appendingPathComponent($0).path : $0 }
        let linked = try Run(link.path, resolved, deadline: 60)
        let real = try Run("motionctl", resolved, deadline: 60)
        #expect(linked.status == real.status)
        #expect(linked.output == real.output)
        #expect(linked.error == real.error)
        #expect(!(linked.output + linked.error).isEmpty)

        // By its own name, the same arguments go to the daemon's parser, which has none of
        // these subcommands (--version aside).
        if arguments != ["--version"] {
            let daemon = try Run("motiond", resolved, deadline: 60)
            #expect(daemon.status != 0 && daemon.error.contains("motiond"), "\(daemon.error)")
        }
    }
}
