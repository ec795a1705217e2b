import Foundation
import Testing

/// The shipped binaries link the Swift runtime statically, and a static link takes only what
/// is used: as long as nothing motiond and motionctl are built from calls into Foundation
/// proper (FoundationEssentials is fine), neither Foundation nor ICU's 32 MB of data is in
/// them. One call is enough to bring both back, unseen (a `contains` on a string once did,
/// through TOMLKit's import), so this checks the objects.
@Suite("No Foundation in the binaries")
struct FoundationFootprintTests {
    @Test("no object of motiond or motionctl refers to a symbol only Foundation or FoundationInternationalization defines")
    func onlyEssentials() throws {
        // The debug build links the toolchain's shared Foundation (TOMLKit asks for it by
        // name), which tells where its libraries are.
        let linked = try Run("ldd", [Run.productsDirectory.appendingPathComponent("motiond").path], absolute: true, deadline: 60)
        #expect(linked.status == 0, "\(linked.error)")
        let libraries = ["libFoundation.so", "libFoundationInternationalization.so"].compactMap { name in
            linked.lines.first { $0.contains(name + " ") }?.split(separator: " ").dropFirst(2).first.map(String.init)
        }
        try #require(libraries.count == 2, "ldd does not show the toolchain's Foundation libraries: \(linked.output)")
        var foundationOnly = Set<Substring>()
        for library in libraries {
            let defined = try Run("nm", ["-D", "--defined-only", library], absolute: true, deadline: 60)
            #expect(defined.status == 0, "\(defined.error)")
            for line in defined.output.split(separator: "\n") {
                if let symbol = line.split(separator: " ").last { foundationOnly.insert(symbol) }
            }
        }
        let essentials = try Run("nm", ["-D", "--defined-only", libraries[0].replacingOccurrences(of: "libFoundation.so", with: "libFoundationEssentials.so")], absolute: true, deadline: 60)
        for line in essentials.output.split(separator: "\n") {
            if let symbol = line.split(separator: " ").last { foundationOnly.remove(symbol) }
        }
        #expect(foundationOnly.count > 1000, "too few Foundation symbols to be a check: \(foundationOnly.count)")

        // The objects each executable was linked from, as SwiftPM listed them for the linker
        // (not every object in the build directory: a module's old files stay there).
        var objects: [String] = []
        for product in ["motiond", "motionctl"] {
            let list = Run.productsDirectory.appendingPathComponent("\(product).product/Objects.LinkFileList")
            // A path with a space in it is written in single quotes.
            let linked = try String(contentsOf: list, encoding: .utf8).split(separator: "\n").map { line in
                line.hasPrefix("'") && line.hasSuffix("'") ? String(line.dropFirst().dropLast()) : String(line)
            }
            #expect(linked.count > 100, "\(list.path) lists \(linked.count) objects")
            objects += linked
        }
        let undefined = try Run("nm", ["-u", "-A"] + Set(objects).sorted(), absolute: true, deadline: 120)
        #expect(undefined.status == 0, "\(undefined.error)")
        let offending = undefined.output.split(separator: "\n").filter { line in
            line.split(separator: " ").last.map { foundationOnly.contains($0) } ?? false
        }
        #expect(offending.isEmpty, "these call into Foundation proper (use FoundationEssentials, or the standard library):\n\(offending.prefix(20).joined(separator: "\n"))")
    }
}
