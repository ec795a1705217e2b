/// Finds the few malformed constructs that crash toml++ instead of getting an error, so the
/// loader can refuse them before TOMLKit sees the text:
///
/// - a table header whose name starts with a character no key starts with (`[=]`, `[ .a]`,
///   `[[[x]]]`, `[é]`, `[` alone on its line);
/// - a `}` where an array expects a value (`a = [}`, `a = [1, }`).
///
/// toml++ 3, inside TOMLKit 0.6.0, reaches both with a broken precondition (`parse_key`,
/// `parse_value`) and aborts the process; the first is fixed upstream in
/// marzer/tomlplusplus#301, not yet in TOMLKit. A typo in a configuration file must not crash
/// `motionctl config check`, nor the daemon reloading on SIGHUP, so they are found here the way
/// toml++ finds them: headers are a `[` that starts a line outside strings, comments and
/// multi-line values. Found by `scripts/fuzz config`; remove once TOMLKit bundles a fixed toml++.
enum TOMLParserTraps {
    /// The first such construct: its line, from 1, and what is wrong.
    static func first(in text: String) -> (line: Int, message: String)? {
        var scanner = Scanner(Array(text.unicodeScalars))
        return scanner.first()
    }

    /// A character as an error message shows it.
    static func describe(_ character: Unicode.Scalar) -> String {
        switch character {
        case "\n", "\r": return "the end of the line"
        case _ where character.isASCII && character.value >= 0x20: return "'\(character)'"
        default: return "U+\(String(character.value, radix: 16, uppercase: true))"
        }
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

        mutating func first() -> (line: Int, message: String)? {
            var brackets: [Unicode.Scalar] = []  // a value's open arrays and inline tables
            var expectingArrayValue = false  // after an array's `[` or `,`
            var lineStart = true
            if peek() == "\u{FEFF}" { advance() }  // a byte-order mark, which toml++ skips too
            while let c = peek() {
                if c == "\n" { advance(); lineStart = brackets.isEmpty; continue }
                if c == " " || c == "\t" || c == "\r" { advance(); continue }
                if c == "#" { skipToEndOfLine(); continue }
                if lineStart {
                    lineStart = false
                    if c == "[" {
                        if let found = headerWithoutName() {
                            return (line, "a table header needs a name, bare (letters, digits, '_', '-') or quoted, not \(TOMLParserTraps.describe(found))")
                        }
                        skipToEndOfLine()
                        continue
                    }
                }
                if expectingArrayValue && c == "}" { return (line, "an array holds '}' where a value or ']' belongs") }
                expectingArrayValue = false
                switch c {
                case "\"", "'": skipString(quote: c); continue
                case "[", "{":
                    brackets.append(c)
                    expectingArrayValue = c == "["
                case "]", "}": _ = brackets.popLast()
                case ",": expectingArrayValue = brackets.last == "["
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
