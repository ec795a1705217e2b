import ArgumentParser
import Foundation
import MotionServer

/// The daemon's command line. The daemon itself arrives with the input layer and the
/// socket (issues 3 and 6); for now it only answers `--help` and `--version`.
@main
struct Motiond: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "motiond",
        abstract: "Touch input daemon: reads touchscreens, recognizes gestures, runs springs and publishes the motion to UI processes.",
        discussion: """
            This build contains the motion core (streams, properties, springs). The input \
            layer and the socket server are not built yet; try `motionctl spring` to see \
            the spring physics.
            """,
        version: MotiondVersion.string
    )

    func run() throws {
        let message = "motiond: the daemon is not built yet in \(MotiondVersion.string); see `motionctl spring --help`\n"
        FileHandle.standardError.write(Data(message.utf8))
        throw ExitCode(1)
    }
}
