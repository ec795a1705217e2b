import SeededRandom
import Testing
@testable import MotionCore

/// The order a frame's values are published in, which a frame now finds by sorting the
/// streams that changed rather than walking the whole scene.
@Suite("Publication order")
struct PublicationOrderTests {
    @Test("sorting without allocating sorts as the standard library does, whatever the order and the duplicates", .seeded)
    func sortsLikeSorted() {
        var random = TestSeed.generator()
        for count in Array(0...70) + [257, 1000] {
            let values = (0..<count).map { _ in random.below(max(1, count / 2)) }
            var sorted = values
            sorted.sortWithoutAllocating(by: <)
            #expect(sorted == values.sorted(), "\(count) values")
        }
        // Nearly in order: neighbours swapped here and there, or one value far from its place.
        for count in [2, 10, 257, 1000] {
            var swapped = Array(0..<count)
            for index in stride(from: 1, to: count, by: 5) { swapped.swapAt(index - 1, index) }
            var far = Array(1..<count) + [0]
            for var values in [swapped, far] {
                values.sortWithoutAllocating(by: <)
                #expect(values == Array(0..<count), "\(count) values nearly in order")
            }
            far.reverse()
            far.sortWithoutAllocating(by: <)
            #expect(far == Array(0..<count), "\(count) values in reverse")
        }
    }

    @Test("values changed together come in the order of the elements and their properties, not the order they changed in")
    func orderOfElementsAndProperties() {
        let clock = ManualFrameClock(now: 0)
        let scene = Scene(size: Size(width: 1920, height: 1080))
        let engine = MotionEngine(scene: scene, clock: clock)
        let elements = (0..<5).map { Element(id: "e\($0)", center: Point(x: 100, y: 100), size: Size(width: 10, height: 10)) }
        for element in elements { engine.add(element, interactions: []) }
        _ = engine.tick(at: 0)
        for element in elements.reversed() {
            element.scale.value = 2
            element.rotation.value = 1
        }
        let report = engine.tick(at: 1)
        #expect(report.values.map(\.stream) == elements.flatMap { ["\($0.id).rotation", "\($0.id).scale"] })
    }
}
