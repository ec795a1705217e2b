/// Finds table headers whose name starts with a character no key can start with (`[=]`,
/// `[ .a]`, `[[[x]]]`, `[é]`), so the loader can refuse them before TOMLKit sees the text.
///
/// toml++ 3, inside TOMLKit 0.6.0, reaches such a header with a broken precondition in
/// `parse_key` and aborts the process (fixed upstream in marzer/tomlplusplus#301, not yet in
/// TOMLKit). A typo in a configuration file must not crash `motionctl config check`, nor
/// the daemon reloading on SIGHUP, so the headers are found here the way toml++ finds them:
/// a `[` that starts a line outside strings, comments and multi-line values. Remove this
/// once TOMLKit bundles a toml++ with the fix.
enum TOMLTableHeaders {
    /// The first such header: its line, from 1, and the character its name starts with.
    static func firstWithoutName(in text: String) -> (line: Int, found: Unicode.Scalar)? {
        var scanner = Scanner(Array(text.unicodeScalars))
        return scanner.firstWithoutName()
    }

    private struct Scanner {
        let scalars: [Unicode.Scalar]
        var index = 0
        var line = 1

        init(_ scalars: [Unicode.Scalar]) { self.scalars = scalars }

        func peek(_ offset: Int = 0) -> Unicode.Scalar? {
            index + offset < scalars.count ? scalars[index + offset] : nil
        }

        mutating func advance() {
            if scalars[index] == "\n" { line += 1 }
            index += 1
        }

        mutating func skipBlanks() {
            while let c = peek(), c == " " || c == "\t" { advance() }
        }

        mutating func skipToEndOfLine() {
            while let c = peek(), c != "\n" { advance() }
        }

        mutating func firstWithoutName() -> (line: Int, found: Unicode.Scalar)? {
            var depth = 0  // inside a value's arrays and inline tables
            var lineStart = true
            while let c = peek() {
                if c == "\n" { advance(); lineStart = depth == 0; continue }
                if lineStart {
                    if c == " " || c == "\t" || c == "\r" { advance(); continue }
                    lineStart = false
                    if c == "[" {
                        if let found = headerWithoutName() { return (line, found) }
                        skipToEndOfLine()
                        continue
                    }
                }
                switch c {
                case "#": skipToEndOfLine(); continue
                case "\"", "'": skipString(quote: c); continue
                case "[", "{": depth += 1
                case "]", "}": depth = Swift.max(0, depth - 1)
                default: break
                }
                advance()
            }
            return nil
        }

        /// At the `[` that opens a header: the character its name starts with, when no key
        /// can start with it.
        mutating func headerWithoutName() -> Unicode.Scalar? {
            advance()
            if peek() == "[" { advance() }
            skipBlanks()
            guard let first = peek(), first != "]" else { return nil }  // toml++ reports these
            switch first {
            case "A"..."Z", "a"..."z", "0"..."9", "_", "-", "\"", "'": return nil
            default: return first
            }
        }

        /// Past a basic or literal string, one line or multi-line.
        mutating func skipString(quote: Unicode.Scalar) {
            let multiline = peek(1) == quote && peek(2) == quote
            for _ in 0..<(multiline ? 3 : 1) { advance() }
            while let c = peek() {
                if c == "\\" && quote == "\"" { advance(); if peek() != nil { advance() }; continue }
                if c == "\n" && !multiline { return }
                if c == quote && (!multiline || (peek(1) == quote && peek(2) == quote)) {
                    // A multi-line string may end with up to two more quotes: `""""` is `"` then the end.
                    while peek() == quote { advance() }
                    return
                }
                advance()
            }
        }
    }
}
