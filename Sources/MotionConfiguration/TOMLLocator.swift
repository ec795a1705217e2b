/// Finds the line a key path is on in a TOML text, for error messages: TOMLKit reports
/// lines for syntax errors, but a value it parsed does not say where it was.
///
/// Paths name array-of-tables entries with their index, as `element[2].tossable.spring`.
/// A key inside an inline table (`spring = { tension = 0 }`) is on its table's line. A path
/// not found is reported on the line of its longest known prefix.
struct TOMLLocator {
    private var lines: [String: Int] = [:]

    /// A locator for settings that come from no text (a client's JSON): every line is 0.
    init() {}

    init(_ text: String) {
        var current: [String] = []
        var arrayCounts: [String: Int] = [:]
        var depth = 0  // inside a multi-line array or inline table
        // "\r\n" is one Character in Swift: a file saved on Windows splits only if it is named.
        for (index, rawLine) in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).enumerated() {
            let number = index + 1
            let line = Self.withoutComment(rawLine).trimmingSpaces()
            defer { depth += Self.bracketBalance(line) }
            guard depth == 0, !line.isEmpty else { continue }
            if line.hasPrefix("[[") {
                let name = String(line.dropFirst(2).prefix { $0 != "]" }).trimmingSpaces()
                let parts = Self.keyParts(name)
                let joined = parts.joined(separator: ".")
                arrayCounts[joined, default: 0] += 1
                current = resolve(parts, arrayCounts)
                lines[current.joined(separator: ".")] = number
                depth -= Self.bracketBalance(line)  // the header's brackets are not an array
            } else if line.hasPrefix("[") {
                let name = String(line.dropFirst().prefix { $0 != "]" }).trimmingSpaces()
                current = resolve(Self.keyParts(name), arrayCounts)
                lines[current.joined(separator: ".")] = number
                depth -= Self.bracketBalance(line)
            } else if let equals = Self.assignment(line) {
                let key = current + Self.keyParts(String(line[..<equals]))
                lines[key.joined(separator: ".")] = number
                let value = line[line.index(after: equals)...].trimmingSpaces()
                if value.hasPrefix("{") { recordInline(value, under: key, line: number) }
            }
        }
    }

    /// The line of `path`, or of its longest prefix that has one; 0 when none does.
    func line(_ path: [String]) -> Int {
        var path = path
        while !path.isEmpty {
            if let line = lines[path.joined(separator: ".")] { return line }
            path.removeLast()
        }
        return 0
    }

    private mutating func recordInline(_ value: Substring, under key: [String], line: Int) {
        // `{ a = 1, b = { c = 2 } }`: the keys before each `=` at the first level.
        var level = 0, token = ""
        for character in value {
            switch character {
            case "{", "[": level += 1; token = ""
            case "}", "]": level -= 1; token = ""
            case ",": token = ""
            case "=":
                if level == 1 {
                    let name = token.trimming(" \t\"")
                    if !name.isEmpty { lines[(key + [name]).joined(separator: ".")] = line }
                }
                token = ""
            default: token.append(character)
            }
        }
    }

    private func resolve(_ parts: [String], _ arrayCounts: [String: Int]) -> [String] {
        var resolved: [String] = [], plain: [String] = []
        for part in parts {
            plain.append(part)
            if let count = arrayCounts[plain.joined(separator: ".")] {
                resolved.append("\(part)[\(count - 1)]")
            } else {
                resolved.append(part)
            }
        }
        return resolved
    }

    private static func keyParts(_ key: String) -> [String] {
        key.split(separator: ".").map { String($0).trimming(" \t\"'") }
    }

    /// The `=` of a `key = value` line, outside quotes.
    private static func assignment(_ line: Substring) -> Substring.Index? {
        var quoted = false
        for index in line.indices {
            if line[index] == "\"" { quoted.toggle() }
            if line[index] == "=" && !quoted { return index }
        }
        return nil
    }

    private static func withoutComment(_ line: Substring) -> Substring {
        var quoted = false
        for index in line.indices {
            if line[index] == "\"" { quoted.toggle() }
            if line[index] == "#" && !quoted { return line[..<index] }
        }
        return line
    }

    /// Opening minus closing brackets and braces, outside quotes.
    private static func bracketBalance(_ line: Substring) -> Int {
        var quoted = false, balance = 0
        for character in line {
            if character == "\"" { quoted.toggle() }
            guard !quoted else { continue }
            if character == "[" || character == "{" { balance += 1 }
            if character == "]" || character == "}" { balance -= 1 }
        }
        return balance
    }
}

extension Substring {
    func trimmingSpaces() -> Substring {
        var result = self
        while let first = result.first, first == " " || first == "\t" || first == "\r" { result = result.dropFirst() }
        while let last = result.last, last == " " || last == "\t" || last == "\r" { result = result.dropLast() }
        return result
    }
}

extension String {
    func trimmingSpaces() -> String { String(Substring(self).trimmingSpaces()) }

    func trimming(_ set: String) -> String {
        var result = Substring(self)
        while let first = result.first, set.contains(first) { result = result.dropFirst() }
        while let last = result.last, set.contains(last) { result = result.dropLast() }
        return String(result)
    }
}
