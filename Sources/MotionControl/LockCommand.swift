import ArgumentParser
import MotionWire

/// `motionctl lock [--for DURATION]`: nothing reaches the apps or the scene while someone
/// cleans the screen, and the lock ends by itself.
struct LockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "lock",
        abstract: "Lock touches out while the screen is cleaned: the gestures in progress end, the apps see their touches cancelled, nothing reaches the scene or the apps until the lock ends by itself.",
        discussion: "DURATION is decimal seconds (90, 90s) or minutes (2m, 1.5m), from 1 s to an hour; 30 s by default. Locking again moves the end. motionctl unlock ends it early, and so does a restart of motiond.")
    @OptionGroup var socket: SocketOption
    @Option(name: .customLong("for"), help: ArgumentHelp("How long the lock lasts.", valueName: "duration")) var duration: String?

    func run() throws {
        let seconds = try duration.map(Self.seconds)
        try talking {
            let result = try socket.connect().request("lock", seconds.map { [("for", .number($0))] } ?? [])
            emit(LockCommand.describe(result))
        }
    }

    /// `90`, `90s`, `2m` or `1.5m`, in seconds, within ``LockLimits/seconds``. Only decimal
    /// digits with at most one point: `Double` also reads `0x10` (16), `nan`, `inf` and `1e3`.
    static func seconds(_ text: String) throws -> Double {
        let (number, unit) = text.hasSuffix("m") ? (text.dropLast(), 60.0) : text.hasSuffix("s") ? (text.dropLast(), 1.0) : (Substring(text), 1.0)
        let decimal = number.contains { $0.isASCII && $0.isWholeNumber } && number.allSatisfy { $0.isASCII && ($0.isWholeNumber || $0 == ".") }
            && number.count { $0 == "." } <= 1
        guard decimal, let value = Double(number), LockLimits.seconds.contains(value * unit) else {
            throw ValidationError("--for is a duration from 1 s to an hour in decimal seconds or minutes, like 90, 90s or 1.5m; not '\(text)'")
        }
        return value * unit
    }

    static func describe(_ result: JSONInput) -> String {
        guard result["locked"]?.bool == true else { return "unlocked: touches reach the scene and the apps" }
        return "locked until \(result["until"]?.number.map { String($0) } ?? "?") on motiond's clock: no touch reaches the scene or the apps"
    }
}

/// `motionctl unlock`.
struct UnlockCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "unlock", abstract: "End a lock (motionctl lock) early.")
    @OptionGroup var socket: SocketOption

    func run() throws {
        try talking { emit(LockCommand.describe(try socket.connect().request("unlock", []))) }
    }
}
