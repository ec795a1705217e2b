import Foundation
import Testing

/// The manual pages: rendered by man-db (groff) without a warning, and complete, checked
/// against what the programs and the configuration loader really have, so a new option,
/// subcommand, key or op without its documentation fails here.
@Suite("Manual pages")
struct ManPageTests {
    /// Each page, built by `make man` and rendered as `man -l` shows it, without hyphenation
    /// so that words can be looked for.
    static func rendered() throws -> [String: String] {
        let build = try EndToEnd.scratch()
        let make = try Run("make", ["-s", "-C", EndToEnd.repository.path, "man", "MAN_BUILD_DIR=\(build.path)"], absolute: true)
        try #require(make.status == 0, "\(make.error)")
        var pages: [String: String] = [:]
        for page in ["motiond.8", "motionctl.1", "motiond.toml.5", "motiond-protocol.7"] {
            let run = try Run("env", ["MANWIDTH=100", "man", "--warnings", "--nh", "--nj", "-E", "UTF-8", "-l", build.appendingPathComponent(page).path], absolute: true)
            #expect(run.status == 0 && run.error.isEmpty, "\(page) renders with warnings: \(run.error)")
            #expect(run.output.contains("NAME") && run.output.contains("SEE ALSO"), "\(page)")
            pages[page] = run.output
        }
        return pages
    }

    /// The long options and subcommands argument-parser knows, from the tool's own help dump.
    static func commandLine(_ tool: String) throws -> (subcommands: [String], options: [String: [String]]) {
        let dump = try Run(tool, ["--experimental-dump-help"])
        let root = try #require(try JSONSerialization.jsonObject(with: Data(dump.output.utf8)) as? [String: Any])["command"] as? [String: Any]
        var subcommands: [String] = [], options: [String: [String]] = [:]
        func longOptions(_ command: [String: Any]) -> [String] {
            (command["arguments"] as? [[String: Any]] ?? []).flatMap { argument in
                (argument["names"] as? [[String: Any]] ?? []).filter { $0["kind"] as? String != "short" }.compactMap { $0["name"] as? String }
            }.filter { $0 != "help" }.map { "--" + $0 }
        }
        func walk(_ command: [String: Any], _ prefix: String) {
            for sub in command["subcommands"] as? [[String: Any]] ?? [] {
                guard let name = sub["commandName"] as? String, name != "help" else { continue }
                subcommands.append(prefix + name)
                options[prefix + name] = longOptions(sub)
                walk(sub, prefix + name + " ")
            }
        }
        walk(try #require(root), "")
        options[""] = longOptions(try #require(root))
        return (subcommands, options)
    }

    /// Whether `text` has `word` as a word of its own (a subcommand, an option, a key): not
    /// inside a longer word, so `set` is not found in `offset` nor `--raw` in `--rawest`.
    static func containsWord(_ text: String, _ word: String) -> Bool {
        let escaped = NSRegularExpression.escapedPattern(for: word).replacingOccurrences(of: " ", with: "\\s+")
        return text.range(of: "(?<![\\w-])" + escaped + "(?![\\w-])", options: .regularExpression) != nil
    }

    @Test("each page renders without warnings; motionctl(1) names every subcommand and option, motiond(8) every option")
    func commands() throws {
        let pages = try Self.rendered()
        let motionctl = try #require(pages["motionctl.1"]), motiond = try #require(pages["motiond.8"])
        let tool = try Self.commandLine("motionctl")
        #expect(tool.subcommands.count >= 16)
        for subcommand in tool.subcommands {
            #expect(Self.containsWord(motionctl, subcommand), "motionctl(1) lacks \(subcommand)")
            for option in tool.options[subcommand] ?? [] where option != "--version" {
                #expect(Self.containsWord(motionctl, option), "motionctl(1) lacks \(subcommand) \(option)")
            }
        }
        for option in try Self.commandLine("motiond").options[""] ?? [] {
            #expect(Self.containsWord(motiond, option), "motiond(8) lacks \(option)")
        }
    }

    @Test("motiond.toml(5) names every key the configuration loader reads, and motiond-protocol(7) every op")
    func configurationAndProtocol() throws {
        let pages = try Self.rendered()
        let configuration = try #require(pages["motiond.toml.5"]), protocolPage = try #require(pages["motiond-protocol.7"])
        // The keys, as the loader asks its tables for them: number("frame_rate"), table("draggable")…
        let sources = try FileManager.default.contentsOfDirectory(atPath: EndToEnd.repository.appendingPathComponent("Sources/MotionConfiguration").path)
        let pattern = try Regex(#"(?:\.(?:number|numbers|string|strings|int|bool|point|points|size|rect|output|table|tables|destination|spring)\(|readMatrix\(&table, )"([a-z_0-9]+)""#)
        var keys: Set<String> = []
        for file in sources where file.hasSuffix(".swift") {
            let text = try String(contentsOf: EndToEnd.repository.appendingPathComponent("Sources/MotionConfiguration/\(file)"), encoding: .utf8)
            for match in text.matches(of: pattern) { if let key = match.output[1].substring { keys.insert(String(key)) } }
        }
        #expect(keys.count > 60 && keys.contains("reset_after") && keys.contains("idle_after"), "\(keys.count) keys found")
        #expect(keys.contains("matrix") && keys.contains("output"))
        for key in keys.sorted() { #expect(Self.containsWord(configuration, key), "motiond.toml(5) lacks \(key)") }

        let protocolText = try String(contentsOf: EndToEnd.repository.appendingPathComponent("docs/protocol.md"), encoding: .utf8)
        let ops = protocolText.split(separator: "\n").compactMap { line -> String? in
            guard let match = line.firstMatch(of: #/^\| `([a-z_]+)` \|/#), !line.contains("| `bad_") else { return nil }
            return String(match.output.1)
        }
        #expect(ops.contains("subscribe") && ops.contains("auth"))
        for name in ops { #expect(Self.containsWord(protocolPage, name), "motiond-protocol(7) lacks \(name)") }
    }
}
