import Foundation
import Testing

@Suite("Shell completions installed by make")
struct CompletionTests {
    @Test("make install-completions writes bash, zsh and fish completions that know every subcommand and option")
    func completions() throws {
        let stage = try EndToEnd.scratch()
        let make = try Run("make", ["-s", "-C", EndToEnd.repository.path, "install-completions", "DESTDIR=\(stage.path)", "PREFIX=/usr",
                                    "BUILD_DIR=\(Run.productsDirectory.path)"], absolute: true)
        #expect(make.status == 0, "\(make.error)")
        // What the parser itself has: every subcommand and its long options.
        let tool = try ManPageTests.commandLine("motionctl")
        let topLevel = tool.subcommands.filter { !$0.contains(" ") }
        #expect(topLevel.count >= 16 && topLevel.contains("calibrate"))
        let bashFile = "share/bash-completion/completions/motionctl", zshFile = "share/zsh/vendor-completions/_motionctl",
            fishFile = "share/fish/vendor_completions.d/motionctl.fish"
        let zsh = try String(contentsOf: stage.appendingPathComponent("usr/" + zshFile), encoding: .utf8)
        let fish = try String(contentsOf: stage.appendingPathComponent("usr/" + fishFile), encoding: .utf8)
        for name in topLevel {
            #expect(zsh.contains("'\(name):"), "\(zshFile) does not offer \(name)")
            #expect(fish.contains("-fa '\(name)'"), "\(fishFile) does not offer \(name)")
        }
        for (command, options) in tool.options where !command.isEmpty {
            for option in options where option != "--version" {
                #expect(ManPageTests.containsWord(zsh, option), "\(zshFile) lacks \(command) \(option)")
                #expect(fish.contains("-l '\(option.dropFirst(2))'"), "\(fishFile) lacks \(command) \(option)")
            }
        }
        for file in ["share/bash-completion/completions/motiond", "share/zsh/vendor-completions/_motiond", "share/fish/vendor_completions.d/motiond.fish"] {
            let text = try String(contentsOf: stage.appendingPathComponent("usr/" + file), encoding: .utf8)
            for option in try ManPageTests.commandLine("motiond").options[""] ?? [] where option != "--version" {
                #expect(ManPageTests.containsWord(text, option) || text.contains("'\(option.dropFirst(2))'"), "\(file) lacks \(option)")
            }
        }
        // Bash, as a user's tab would: the completion function offers each subcommand after
        // `motionctl `, and each of a subcommand's options after `motionctl SUBCOMMAND --`.
        var lines = [
            "shopt -s extglob",
            "source \"\(stage.path)/usr/\(bashFile)\"",
            #"complete_line() { COMPREPLY=(); COMP_LINE="$1"; COMP_POINT=${#COMP_LINE}; read -ra COMP_WORDS <<< "$1"; [[ "$1" == *" " ]] && COMP_WORDS+=(""); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _motionctl motionctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"; echo "${COMPREPLY[*]}"; }"#,
            "complete_line 'motionctl '",
        ]
        let commands = tool.options.keys.filter { !$0.isEmpty }.sorted()
        for command in commands { lines.append("complete_line 'motionctl \(command) --'") }
        let bash = try Run("bash", ["-c", lines.joined(separator: "\n")], absolute: true)
        #expect(bash.status == 0 && bash.lines.count == commands.count + 1, "\(bash.error)\n\(bash.output)")
        guard bash.lines.count == commands.count + 1 else { return }
        let offered = Set(bash.lines[0].split(separator: " ").map(String.init))
        for name in topLevel { #expect(offered.contains(name), "bash does not offer \(name): \(offered)") }
        for (command, line) in zip(commands, bash.lines.dropFirst()) {
            let words = Set(line.split(separator: " ").map(String.init))
            for option in tool.options[command] ?? [] where option != "--version" {
                #expect(words.contains(option), "bash does not offer \(command) \(option): \(line)")
            }
        }
    }
}
