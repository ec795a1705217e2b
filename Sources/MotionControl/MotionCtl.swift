import ArgumentParser
import FoundationEssentials
import Glibc
import MotionConfiguration
import MotionWire

/// Runs motionctl with the process's arguments: the entry point of the `motionctl` executable,
/// and of `motiond` when it is called by that name (one installed binary serves both).
public func motionctlMain() {
    MotionCtl.main()
}

/// `motionctl`: inspects and drives motiond from a shell.
///
/// Exit codes: 0 ok, 1 the daemon (or the computation) said no, 2 usage, 3 cannot connect.
struct MotionCtl: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "motionctl",
        abstract: "Inspect and drive motiond, and try its physics offline.",
        version: MotiondVersion.string,
        subcommands: [StatusCommand.self, DevicesCommand.self, ElementsCommand.self, StreamsCommand.self, WatchCommand.self, GetCommand.self, SetCommand.self, StatsCommand.self, MetricsCommand.self, PredictCommand.self,
                      SpringCommand.self, GesturesCommand.self, SimulateCommand.self, PlotCommand.self, ConfigCommand.self, CalibrateCommand.self, FramesCommand.self, RecordCommand.self, UmockdevCommand.self, SweepCommand.self, StateCommand.self, LockCommand.self, UnlockCommand.self]
    )

    /// Parses and runs, mapping every usage error to exit code 2 (ArgumentParser uses 64).
    static func main() {
        do {
            var command = try parseAsRoot()
            try command.run()
        } catch {
            if exitCode(for: error) == .validationFailure {
                writeStandardError(fullMessage(for: error) + "\n")
                Glibc.exit(ExitStatus.usage)
            }
            exit(withError: error)
        }
    }
}

/// motionctl's exit codes, shared by every subcommand.
enum ExitStatus {
    static let ok: Int32 = 0
    static let refused: Int32 = 1
    static let usage: Int32 = 2
    static let cannotConnect: Int32 = 3
    /// `status`: motiond runs, but is not healthy.
    static let unhealthy: Int32 = 4
}

/// Writes a line to standard output at once: tests and pipes read it as it comes. When the
/// reader has gone (`motionctl watch | head`), motionctl ends quietly, as a Unix filter does.
func emit(_ line: String) {
    writeStandardOutput(line + "\n")
}

/// Formats a number for JSON: Swift's shortest round-trip form, which JSON accepts.
func json(_ value: Double) -> String {
    precondition(value.isFinite, "JSON has no infinities")
    return "\(value)"
}
