import Foundation
import FuzzTargets

/// What libFuzzer starts a target from, read from Fuzz/ as scripts/fuzz reads it: the
/// longest input (`-max_len`), the committed corpus and the dictionary.
struct FuzzSetup {
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let fuzz = repository.appendingPathComponent("Fuzz")

    var maximumLength: Int
    /// Fuzz/Corpus/TARGET, by file name, each cut to the longest input as libFuzzer cuts it.
    var corpus: [(name: String, bytes: [UInt8])]
    /// The dictionary's tokens; none when the target has no dictionary.
    var tokens: [[UInt8]]

    struct Problem: Error, CustomStringConvertible {
        var description: String
    }

    init(_ target: FuzzTarget) throws {
        let table = try String(contentsOf: Self.fuzz.appendingPathComponent("targets"), encoding: .utf8)
        let fields = table.split(separator: "\n").filter { !$0.hasPrefix("#") }.map { $0.split(separator: " ", omittingEmptySubsequences: true) }
        guard let line = fields.first(where: { $0.first.map(String.init) == target.rawValue }), line.count == 3, let length = Int(line[1]) else {
            throw Problem(description: "Fuzz/targets has no line `\(target.rawValue) MAX_LEN DICTIONARY`")
        }
        maximumLength = length
        let folder = Self.fuzz.appendingPathComponent("Corpus/\(target.rawValue)")
        corpus = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted().map { name in
            (name, Array(try Data(contentsOf: folder.appendingPathComponent(name)).prefix(length)))
        }
        tokens = []
        if line[2] != "-" {
            let dictionary = try String(contentsOf: Self.fuzz.appendingPathComponent("Dictionaries/\(line[2])"), encoding: .utf8)
            tokens = try dictionary.split(separator: "\n").compactMap(Self.token)
        }
    }

    /// One line of a libFuzzer dictionary: `"token"` or `name="token"`, with `\\`, `\"` and
    /// `\xNN` escapes; nil for a comment or a blank line.
    static func token(_ line: Substring) throws -> [UInt8]? {
        let line = line.trimmingCharacters(in: .whitespaces)
        guard !line.isEmpty, !line.hasPrefix("#") else { return nil }
        guard let open = line.firstIndex(of: "\""), line.hasSuffix("\""), open < line.index(before: line.endIndex) else {
            throw Problem(description: "a dictionary line that is not a quoted token: \(line)")
        }
        let quoted = Array(line[line.index(after: open)..<line.index(before: line.endIndex)].utf8)
        var bytes: [UInt8] = [], index = 0
        while index < quoted.count {
            if quoted[index] == UInt8(ascii: "\\"), index + 1 < quoted.count {
                if quoted[index + 1] == UInt8(ascii: "x"), index + 3 < quoted.count,
                   let value = UInt8(String(decoding: quoted[index + 2...index + 3], as: UTF8.self), radix: 16) {
                    bytes.append(value)
                    index += 4
                } else {
                    bytes.append(quoted[index + 1])
                    index += 2
                }
            } else {
                bytes.append(quoted[index])
                index += 1
            }
        }
        return bytes
    }
}
