import Testing
@testable import MotionConfiguration

/// What fuzzing the configuration loader found: text that crashed the process instead of
/// getting an error.
@Suite("Configuration text that crashed the loader")
struct ConfigurationFuzzFindingsTests {
    /// toml++ aborted on these (a broken precondition in `parse_key`); each must be an error
    /// on its line.
    @Test("a table header whose name starts with a character no key starts with is an error on its line", arguments: [
        ("[=]\n", 1, "'='"),
        ("[.a]\n", 1, "'.'"),
        ("[ #]\n", 1, "'#'"),
        ("[[[x]]]\n", 1, "'['"),
        ("[[=]]\n", 1, "'='"),
        ("a = 1\n\n[\u{FFFD}]\n", 3, "U+FFFD"),
        ("s = \"\"\"\n[=]\n\"\"\"\n[=]\n", 4, "'='"),
        ("a = [\n  1,\n]\n  [,]\n", 4, "','"),
        ("a = 1\n[\n", 2, "the end of the line"),
        ("[[\r\n", 1, "the end of the line"),
        // Behind a byte-order mark, which toml++ skips: found by 537 006 runs of the config target.
        ("\u{FEFF}\t\t[[\t\t\u{FFFD}\t]]\n", 1, "U+FFFD"),
    ])
    func headerWithoutName(text: String, line: Int, shown: String) throws {
        do {
            _ = try Configuration.parse(text, file: "test.toml")
            Issue.record("\(text.debugDescription) loaded")
        } catch {
            #expect(error.line == line && error.message.contains("table header") && error.message.contains(shown), "\(error)")
        }
    }

    @Test("with CRLF line endings, errors name the same lines as with LF (every one said line 1)")
    func crlfLines() throws {
        let text = "[[element]]\nid = \"one\"\ncenter = [100, 100]\nsize = [50, 50]\nshape = \"round\"\n"
        for variant in [text, text.replacingOccurrences(of: "\n", with: "\r\n")] {
            do {
                _ = try Configuration.parse(variant, file: "test.toml")
                Issue.record("loaded")
            } catch {
                #expect(error.line == 5 && error.message.contains("shape"), "\(error)")
            }
        }
    }

    /// toml++ aborted on these too (a broken precondition in `parse_value`).
    @Test("a '}' where an array expects a value is an error on its line", arguments: [
        ("s=[}\n", 1), ("s = [1, }\n", 1), ("a = 1\ns = [\n  # note\n  }\n", 4), ("t = { a = [ } }\n", 1),
    ])
    func braceInArray(text: String, line: Int) throws {
        do {
            _ = try Configuration.parse(text, file: "test.toml")
            Issue.record("\(text.debugDescription) loaded")
        } catch {
            #expect(error.line == line && error.message.contains("'}'"), "\(error)")
        }
    }

    @Test("brackets that are not headers are left to TOML: values, strings, comments, quoted names", arguments: [
        "a = [\n  [ [1], 2],\n  [{ x = 1 }],\n  [ -1 ],\n]\n",
        "s = \"\"\"\n[=\n\"\"\"\n",
        "s = \"\"\"a\"\"\"\"\n[ok]\n",
        "t = '''\n[=]\n'''\n",
        "# [=]\n",
        "k = \"[=\" # [=\n[ok]\n",
        "k = 'a\\'\n[ok]\n",
        "[\"quoted key\"]\n[ 'literal' ]\n[[array]]\n[[ spaced ]]\n[a-b_c.d]\n",
        "a = [ { b = 1 }, {} ]\nc = { d = [1, 2], e = {} }\nf = [\n  1, # }\n  \"}\",\n]\n",
    ])
    func notHeaders(text: String) {
        #expect(TOMLParserTraps.first(in: text) == nil, "\(text.debugDescription)")
    }
}
