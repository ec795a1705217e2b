import Glibc
import SeededRandom
import Testing
import TouchModel

/// motiond's one glob dialect (``globMatches(_:_:)``), for stream names, device names and
/// TUIO element ids alike.
@Suite("Globs")
struct GlobTests {
    @Test("globs: * crosses dots, ? is one character")
    func globs() {
        #expect(globMatches("card.*", "card.position"))
        #expect(globMatches("*.position", "card.position"))
        #expect(globMatches("*", "a.b.c"))
        #expect(globMatches("card.?cale", "card.scale"))
        #expect(!globMatches("card.*", "cards.position"))
        #expect(!globMatches("*.rotation", "card.position"))
    }

    @Test("globs agree with fnmatch(3) on random patterns and names", .seeded)
    func globsAgreeWithFnmatch() {
        var generator = TestSeed.generator()
        func random(_ alphabet: [Character], _ maximum: Int) -> String {
            String((0..<Int.random(in: 0...maximum, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
        }
        var disagreements: [String] = []
        for _ in 0..<20_000 {
            let pattern = random(["a", "b", ".", "*", "?"], 8)
            let name = random(["a", "b", "."], 10)
            let expected = fnmatch(pattern, name, 0) == 0
            if globMatches(Substring(pattern), Substring(name)) != expected { disagreements.append("\(pattern) ~ \(name): fnmatch says \(expected)") }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(10))")
    }
}
