import Testing
@testable import MotionCore

/// A swipe's way is the mean of its fingers' ways: a floating-point sum, whose last bits
/// depend on the order of its terms. Summed in a Dictionary's order, it followed the
/// process's hash seed, and the same frames gave another distance in another run of motiond.
@Suite("Swipe sums")
struct SwipeSumTests {
    @Test("five fingers' ways are summed in the order the fingers landed, whatever their ids")
    func landingOrder() throws {
        // Ways whose sum rounds differently in different orders.
        let ways: [Point] = [Point(x: 300.1, y: 0.3), Point(x: 300.2, y: -0.1), Point(x: 300.3, y: 0.7), Point(x: 300.7, y: 0.01), Point(x: 300.05, y: -0.2)]
        let start = (0..<5).map { Point(x: 100, y: 100 + 50 * Double($0)) }
        var expected = Point.zero
        for (from, way) in zip(start, ways) { expected = expected + ((from + way) - from) }
        expected = expected / 5
        // Twenty sets of ids: each Dictionary order is the landing order only by chance.
        for round in Int32(0)..<20 {
            let ids: [Int32] = [7, 3, 11, 5, 2].map { (id: Int32) -> Int32 in id * 97 + round * 1009 }
            var recognizer = SwipeRecognizer()
            func frame(_ time: Double, _ phase: TouchPhase, _ fraction: Double) -> TouchFrame {
                var contacts: [TouchContact] = []
                for index in 0..<5 {
                    let position: Point = fraction == 1 ? start[index] + ways[index] : start[index] + ways[index] * fraction
                    contacts.append(TouchContact(slot: index, trackingID: ids[index], phase: phase, deviceX: 0, deviceY: 0, position: position))
                }
                return TouchFrame(time: time, contacts: contacts)
            }
            #expect(recognizer.update(frame(0, .began, 0)) == nil)
            #expect(recognizer.update(frame(0.05, .moved, 0.5)) == nil)
            let lift = recognizer.update(frame(0.1, .ended, 1))
            let swipe = try #require(lift, "round \(round): no swipe")
            #expect(swipe.touches == 5 && swipe.direction == .right)
            #expect(swipe.distance.bitPattern == expected.distance(to: .zero).bitPattern,
                    "round \(round): \(swipe.distance) instead of \(expected.distance(to: .zero))")
            #expect(swipe.velocity.x.bitPattern == (expected / 0.1).x.bitPattern && swipe.velocity.y.bitPattern == (expected / 0.1).y.bitPattern,
                    "round \(round): \(swipe.velocity)")
        }
    }
}
