import Testing
@testable import MotionCore

@Suite("Element streams")
struct ElementStreamTests {
    @Test("a stream's name is its element's id, a dot and its property, and reads back as both")
    func roundTrip() {
        for (element, property) in [("card", "position"), ("screen", "idle"), ("a-1_b", "predicted_rotation"), ("é", "drag")] {
            let stream = ElementStream(element: element, property: property)
            #expect(stream.name == element + "." + property)
            #expect(ElementStream(name: stream.name) == stream)
        }
    }

    @Test("the property is what follows the first dot, since ids have none; a name without both parts is no element's")
    func parsing() {
        #expect(ElementStream(name: "card.predicted.x") == ElementStream(element: "card", property: "predicted.x"))
        for name in ["", "card", ".position", "card.", "."] {
            #expect(ElementStream(name: name) == nil, "\(name)")
        }
    }

    @Test("the engine names every stream of an element this way")
    func engineNames() {
        let (engine, _) = makeEngine()
        let element = card()
        engine.add(element, interactions: [Draggable()])
        let names = engine.streams(of: element).map { engine.catalog.name(of: $0) }
        #expect(names.contains("card.position") && names.contains("card.drag"), "\(names)")
        #expect(names.allSatisfy { ElementStream(name: $0)?.element == "card" }, "\(names)")
    }
}
