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
        let subcommands = ["status", "devices", "elements", "streams", "watch", "get", "set", "stats", "spring", "gestures",
                           "simulate", "config", "frames", "record", "umockdev"]
        let files = ["share/bash-completion/completions/motionctl", "share/zsh/vendor-completions/_motionctl",
                     "share/fish/vendor_completions.d/motionctl.fish"]
        for file in files {
            let text = try String(contentsOf: stage.appendingPathComponent("usr/" + file), encoding: .utf8)
            for name in subcommands { #expect(text.contains(name), "\(file) lacks \(name)") }
            #expect(text.contains("duration"), "\(file) lacks record's --duration")
        }
        for file in ["share/bash-completion/completions/motiond", "share/zsh/vendor-completions/_motiond", "share/fish/vendor_completions.d/motiond.fish"] {
            #expect(try String(contentsOf: stage.appendingPathComponent("usr/" + file), encoding: .utf8).contains("replay-device"), "\(file)")
        }
        // Bash, as a user's tab would: the completion function offers what fits the word.
        let script = """
            shopt -s extglob
            source "\(stage.path)/usr/share/bash-completion/completions/motionctl"
            complete_line() { COMP_LINE="$1"; COMP_POINT=${#COMP_LINE}; read -ra COMP_WORDS <<< "$1"; COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _motionctl motionctl "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"; echo "${COMPREPLY[*]}"; }
            complete_line "motionctl rec"
            complete_line "motionctl record --dur"
            complete_line "motionctl gestures --recog"
            """
        let bash = try Run("bash", ["-c", script], absolute: true)
        #expect(bash.status == 0, "\(bash.error)")
        #expect(bash.lines.count == 3 && bash.lines[0].split(separator: " ").contains("record"), "\(bash.output)")
        #expect(bash.lines.count == 3 && bash.lines[1].split(separator: " ").contains("--duration"), "\(bash.output)")
        #expect(bash.lines.count == 3 && bash.lines[2].split(separator: " ").contains("--recognizers"), "\(bash.output)")
    }
}
