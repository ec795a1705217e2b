import Foundation
import Glibc
import Testing

extension Daemons {
    @Suite("motiond's start-up failures")
    struct StartupFailureCommandTests {
        /// A listener of the test's own on a loopback port, held until `close`.
        struct HeldPort {
            let descriptor: Int32
            let port: Int

            init() throws {
                descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                var address = sockaddr_in()
                address.sin_family = sa_family_t(AF_INET)
                address.sin_addr.s_addr = UInt32(0x7f00_0001).bigEndian
                var length = socklen_t(MemoryLayout<sockaddr_in>.size)
                let fd = descriptor
                let bound = withUnsafeMutablePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && listen(fd, 1) == 0 && getsockname(fd, $0, &length) == 0 }
                }
                try #require(bound, "cannot listen on 127.0.0.1: \(String(cString: strerror(errno)))")
                port = Int(UInt16(bigEndian: address.sin_port))
            }

            func close() { Glibc.close(descriptor) }
        }

        @Test("each cause of a failed start is said as itself, as a journal error on standard error, and motiond exits with 1 leaving no socket behind")
        func causes() throws {
            let directory = try EndToEnd.scratch()
            defer { try? FileManager.default.removeItem(at: directory) }
            let bundled = DaemonTests.bundled
            let socket = directory.appendingPathComponent("motiond.sock").path
            func file(_ name: String, _ text: String) throws -> String {
                let path = directory.appendingPathComponent(name).path
                try text.write(toFile: path, atomically: true, encoding: .utf8)
                return path
            }
            func expectRefused(_ arguments: [String], _ words: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
                let run = try Run("motiond", arguments, deadline: 60)
                #expect(run.status == 1, "\(arguments): \(run.error)", sourceLocation: sourceLocation)
                #expect(run.error.contains("<3>motiond: " + words), "\(arguments): \(run.error)", sourceLocation: sourceLocation)
                #expect(!FileManager.default.fileExists(atPath: socket), "\(arguments) left its socket", sourceLocation: sourceLocation)
            }

            let broken = try file("broken.toml", "[screen]\nwidth = \"wide\"\n")
            try expectRefused(["--config", broken, "--replay", bundled, "--socket", socket], "\(broken):2: width must be a number")

            let notASocket = try file("file", "not a socket")
            try expectRefused(["--replay", bundled, "--socket", notASocket], "\(notASocket) exists and is not a socket; remove it or choose another path")

            let nowhere = directory.appendingPathComponent("nowhere/motiond.sock").path
            try expectRefused(["--replay", bundled, "--socket", nowhere], "cannot listen on \(nowhere): No such file or directory")

            let group = try file("group.toml", "[daemon]\nsocket_group = \"no-such-group-of-motiond\"\n")
            try expectRefused(["--config", group, "--replay", bundled, "--socket", socket], "no group is called 'no-such-group-of-motiond' ([daemon] socket_group)")

            let held = try HeldPort()
            defer { held.close() }
            try expectRefused(["--replay", bundled, "--socket", socket, "--websocket", "127.0.0.1:\(held.port)"],
                              "cannot listen on 127.0.0.1:\(held.port) ([websocket] listen): ")
            let inUse = try Run("motiond", ["--replay", bundled, "--socket", socket, "--websocket", "127.0.0.1:\(held.port)"], deadline: 60)
            #expect(inUse.error.contains("Address already in use"), "\(inUse.error)")

            try expectRefused(["--replay", bundled, "--socket", socket, "--websocket", "0.0.0.0:\(held.port)"],
                              "--websocket 0.0.0.0:\(held.port): other machines could reach it, and the protocol is not encrypted; use 127.0.0.1 or [::1], or allow_remote = true in [websocket]")

            let missing = directory.appendingPathComponent("missing.evemu").path
            try expectRefused(["--replay", missing, "--socket", socket], "cannot read \(missing): No such file or directory")

            let elsewhere = try file("elan.toml", "[[device]]\nname = \"ELAN*\"\n")
            try expectRefused(["--config", elsewhere, "--replay", bundled, "--socket", socket],
                              "no [[device]] entry in the configuration selects the recorded device \"Atmel maXTouch Touchscreen\"")
        }
    }
}
