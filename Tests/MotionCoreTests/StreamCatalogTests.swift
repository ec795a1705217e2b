import Testing
@testable import MotionCore

/// Whatever the order names come and go in (an element's one after another, an owner's
/// again later, names with dots in their owner or none), each is found, and only it.
@Suite("Stream catalog")
struct StreamCatalogTests {
    @Test("names registered owner after owner, and an owner again later, are each found by name and number")
    func namesFoundByOwner() {
        var catalog = StreamCatalog()
        let names = ["card.position", "card.size", "photo.position", "card.drag", "a.b.position", "a.b", "screen", "card.pos"]
        let ids = names.map { catalog.register($0, kind: .value) }
        #expect(catalog.count == names.count)
        for (name, id) in zip(names, ids) {
            #expect(catalog.id(named: name) == id, "\(name)")
            #expect(catalog.name(of: id) == name)
        }
        for missing in ["card", "card.positio", "card.position.x", "photo.size", "a.position", "b.position", ".position", ""] {
            #expect(catalog.id(named: missing) == nil, "\(missing)")
        }
    }

    @Test("a removed name is found no more, its owner's others still are, and its number goes to the next name")
    func removalKeepsTheRest() {
        var catalog = StreamCatalog()
        let ids = ["card.position", "card.size", "card.rotation", "photo.position"].map { catalog.register($0, kind: .value) }
        catalog.remove(ids[1])
        #expect(catalog.id(named: "card.size") == nil)
        #expect(catalog.id(named: "card.position") == ids[0])
        #expect(catalog.id(named: "card.rotation") == ids[2])
        catalog.remove(ids[0])
        #expect(catalog.id(named: "card.rotation") == ids[2], "the owner's first went, its next is found")
        #expect(!catalog.contains(ids[0]))
        let reused = catalog.register("card.size", kind: .gesture)
        #expect(reused == ids[0], "the number removed last is given first")
        #expect(catalog.kind(of: reused) == .gesture)
        catalog.remove(ids[2])
        catalog.remove(reused)
        #expect(catalog.id(named: "card.rotation") == nil && catalog.id(named: "card.size") == nil)
        let again = catalog.register("card.position", kind: .value)
        #expect(catalog.id(named: "card.position") == again)
        #expect(catalog.id(named: "photo.position") == ids[3])
        #expect(catalog.count == 2)
    }
}
