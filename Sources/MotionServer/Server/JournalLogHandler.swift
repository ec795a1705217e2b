import Foundation
import Logging

/// Logs to standard error with the syslog priority prefixes journald reads (`<3>` error,
/// `<4>` warning, `<6>` info, `<7>` debug), so `journalctl -p warning` works, and lines stay
/// readable in a terminal.
public struct JournalLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .info

    public init(label: String) {}

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String, file: String, function: String, line: UInt) {
        let prefix: String
        switch level {
        case .critical, .error: prefix = "<3>"
        case .warning: prefix = "<4>"
        case .notice: prefix = "<5>"
        case .info: prefix = "<6>"
        case .debug, .trace: prefix = "<7>"
        }
        FileHandle.standardError.write(Data((prefix + message.description + "\n").utf8))
    }
}
