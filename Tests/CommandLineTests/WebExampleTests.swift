import Foundation
import Testing

/// examples/web: its configuration is valid, and defines every element its page binds, at
/// the size the page draws it, so the page and motiond agree on where things are.
@Suite("The web kiosk example")
struct WebExampleTests {
    static let directory = EndToEnd.repository.appendingPathComponent("examples/web")

    @Test("examples/web/motiond.toml passes config check and defines the elements index.html binds, at the sizes it draws")
    func configurationMatchesPage() throws {
        let config = Self.directory.appendingPathComponent("motiond.toml").path
        let run = try Run("motionctl", ["config", "check", config])
        #expect(run.status == 0, "\(run.error)")

        let page = try String(contentsOf: Self.directory.appendingPathComponent("index.html"), encoding: .utf8)
        let bound = page.matches(of: /\.bind\(document\.querySelector\('#([a-z]+)'\), '([a-z]+)'\)/).map { (String($0.1), String($0.2)) }
        #expect(bound.map(\.1).sorted() == ["card", "photo"], "the page binds a photo and a card")
        let toml = try String(contentsOfFile: config, encoding: .utf8)
        for (selector, id) in bound {
            // The element's size in motiond.toml is its CSS size in the page (one CSS pixel
            // is one screen pixel in the kiosk the README describes).
            let size = try #require(toml.firstMatch(of: try Regex("id = \"\(id)\"\\n(?:.*\\n)*?size = \\[(\\d+), (\\d+)\\]")), "no element \(id) in motiond.toml")
            let css = try #require(page.firstMatch(of: try Regex("#\(selector) \\{ width: (\\d+)px; height: (\\d+)px;")), "no size for #\(selector) in index.html")
            #expect(size.output[1].substring == css.output[1].substring && size.output[2].substring == css.output[2].substring, "\(id): motiond.toml and index.html disagree on its size")
        }
    }
}
