// What motionctl used to take from full Foundation (String(format:), NSString's padding,
// CharacterSet trimming, FileHandle, Error.localizedDescription), rebuilt on the standard
// library and Glibc. Full Foundation links FoundationInternationalization and ICU's 30 MB of
// data into a static binary; FoundationEssentials, which the rest of the package uses, does
// not, but lacks these.
import FoundationEssentials
import Glibc

// MARK: Text

/// `format` (printf's floating-point conversions: `%.1f`, `%9.2f`, `%g`, one per number)
/// applied to `numbers`, as `String(format:)` did. Foundation formatted doubles with C's
/// snprintf too, in the C locale, so the rounding, padding and spelling of `nan` and `inf`
/// are the same byte for byte. Only doubles go in, so no `%d` or `%@` can slip through.
func formatted(_ format: String, _ numbers: Double...) -> String {
    let length = withVaList(numbers) { vsnprintf(nil, 0, format, $0) }
    precondition(length >= 0, "motionctl: bad number format \(format)")
    var bytes = [UInt8](repeating: 0, count: Int(length) + 1)
    bytes.withUnsafeMutableBufferPointer { buffer in
        buffer.withMemoryRebound(to: CChar.self) { characters in
            _ = withVaList(numbers) { vsnprintf(characters.baseAddress, characters.count, format, $0) }
        }
    }
    return String(decoding: bytes.dropLast(), as: UTF8.self)
}

extension String {
    /// Filled with spaces, or cut, to `length` UTF-16 units: a column of a table, as NSString's
    /// `padding(toLength:withPad: " ", startingAt: 0)` made it (which counted UTF-16 units too).
    func padded(toLength length: Int) -> String {
        let units = utf16.count
        guard units < length else { return String(decoding: Array(utf16.prefix(length)), as: UTF16.self) }
        return self + String(repeating: " ", count: length - units)
    }
}

extension StringProtocol {
    /// Without the leading and trailing Unicode scalars that `isTrimmed` accepts. By scalar,
    /// not by Character, as Foundation's `trimmingCharacters(in:)` did: a space before a
    /// combining mark goes too.
    func trimming(where isTrimmed: (Unicode.Scalar) -> Bool) -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !isTrimmed($0) }),
              let last = scalars.lastIndex(where: { !isTrimmed($0) }) else { return "" }
        return String(String.UnicodeScalarView(scalars[first...last]))
    }

    /// Without leading and trailing spaces and tabs: `trimmingCharacters(in: .whitespaces)`.
    func trimmingBlanks() -> String {
        trimming(where: isBlank)
    }

    /// Without leading and trailing white space and line breaks:
    /// `trimmingCharacters(in: .whitespacesAndNewlines)`.
    func trimmingWhitespaceAndNewlines() -> String {
        trimming { scalar in
            isBlank(scalar) || ("\n"..."\r").contains(scalar) || scalar == "\u{85}"
                || [.lineSeparator, .paragraphSeparator].contains(scalar.properties.generalCategory)
        }
    }
}

/// Foundation's `CharacterSet.whitespaces`: Unicode's space separators (Zs), the tab, and
/// (CoreFoundation's own addition) the zero-width space.
private func isBlank(_ scalar: Unicode.Scalar) -> Bool {
    scalar == "\t" || scalar == "\u{200B}" || scalar.properties.generalCategory == .spaceSeparator
}

/// Why a file operation failed, in the system's words ("No such file or directory"), for
/// messages that name the file. Foundation's `localizedDescription` needs full Foundation
/// (and said less: "The operation could not be completed. The file doesn’t exist.").
func reason(_ error: Error) -> String {
    if let posix = (error as? CocoaError)?.underlying as? POSIXError ?? error as? POSIXError {
        return String(cString: strerror(posix.code.rawValue))
    }
    return "\(error)"
}

// MARK: Standard streams

/// Writes all of `text` to `descriptor`, as FileHandle did: again after a signal, and on
/// after a short write. The errno of a failure, or nil.
func writeAll(_ text: String, to descriptor: Int32) -> Int32? {
    var bytes = Array(text.utf8)[...]
    while !bytes.isEmpty {
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        if written < 0 && errno == EINTR { continue }
        guard written > 0 else { return errno }
        bytes = bytes.dropFirst(written)
    }
    return nil
}

/// Writes to standard output at once (tests and pipes read it as it comes). When the reader
/// has gone (`motionctl watch | head`), motionctl ends quietly, as a Unix filter does.
func writeStandardOutput(_ text: String) {
    if writeAll(text, to: STDOUT_FILENO) != nil { Glibc.exit(ExitStatus.ok) }
}

/// Writes a message to standard error; if even that fails, there is no one left to tell.
func writeStandardError(_ text: String) {
    _ = writeAll(text, to: STDERR_FILENO)
}
