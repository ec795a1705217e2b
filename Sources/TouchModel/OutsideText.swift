/// Text that came from outside motiond, written where people or parsers read it.
///
/// A device's name is whatever its firmware says (a USB descriptor holds any bytes), and so
/// is a recording's header from a bug report. Written as it is, a newline in it ends a log
/// line and starts a forged one (with a journal priority such as `<3>` of its own), ends a
/// comment in a configuration file and starts settings, or moves a terminal's cursor. So
/// every place motiond writes such text writes it through ``quoted(_:)`` (or, where the
/// format has quoting of its own, escapes with that format's rules), and the text always
/// stays on its one line, reading as what it is.
///
/// Invalid UTF-8 never reaches these functions: it became U+FFFD where the bytes were
/// decoded (libevdev's name, a recording's text), and U+FFFD is printed as it is.
public enum OutsideText {
    /// `text` in double quotes, as a Swift or C literal writes it: `"` and `\` escaped, and
    /// every character that is not plainly visible (see ``escaped(_:)``) written as an escape.
    /// `"Evil\n[daemon]"` stays one line, and `<3>` inside quotes is no journal priority.
    public static func quoted(_ text: some StringProtocol) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            default: append(scalar, to: &result)
            }
        }
        return result + "\""
    }

    /// `text` with the characters that are not plainly visible escaped (`\n`, `\t`, `\r`,
    /// `\u{1B}`…), quotes and backslashes left as they are: for a whole log line, whose
    /// words motiond wrote and whose outside parts are already ``quoted(_:)``.
    ///
    /// Escaped: control characters (C0, DEL, C1), format characters (the bidirectional
    /// overrides that reorder what a terminal shows, zero-width characters), the line and
    /// paragraph separators, and code points Unicode has not assigned.
    public static func escaped(_ text: some StringProtocol) -> String {
        var result = ""
        for scalar in text.unicodeScalars { append(scalar, to: &result) }
        return result
    }

    /// Whether `scalar` is written as an escape.
    public static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .unassigned, .surrogate, .privateUse: return true
        default: return false
        }
    }

    private static func append(_ scalar: Unicode.Scalar, to result: inout String) {
        guard needsEscape(scalar) else {
            result.unicodeScalars.append(scalar)
            return
        }
        switch scalar {
        case "\n": result += "\\n"
        case "\r": result += "\\r"
        case "\t": result += "\\t"
        default: result += "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
        }
    }
}
