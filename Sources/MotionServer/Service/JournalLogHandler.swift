import FoundationEssentials
import Glibc
import Logging
import TouchModel

/// Logs to standard error with the syslog priority prefixes journald reads (`<3>` error,
/// `<4>` warning, `<6>` info, `<7>` debug), so `journalctl -p warning` works, and lines stay
/// readable in a terminal.
///
/// A message is always one line: its control characters are escaped (``OutsideText/escaped(_:)``),
/// so that no text inside it (a device's name, a client's pattern) can end the line and start a
/// forged one with a priority of its own.
public struct JournalLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info

    public init(label: String) {}

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        writeStandardError(Self.line(level: event.level, message: event.message.description))
    }

    /// The line written for a message: its priority prefix, the message on one line, a newline.
    public static func line(level: Logger.Level, message: String) -> String {
        let prefix: String
        switch level {
        case .critical, .error: prefix = "<3>"
        case .warning: prefix = "<4>"
        case .notice: prefix = "<5>"
        case .info: prefix = "<6>"
        case .debug, .trace: prefix = "<7>"
        }
        return prefix + OutsideText.escaped(message) + "\n"
    }
}

/// Writes `text` to standard error in one write, as the journal reads it line by line.
public func writeStandardError(_ text: String) {
    var text = text
    text.withUTF8 { bytes in _ = Glibc.write(2, bytes.baseAddress, bytes.count) }
}
