import Foundation
import Testing

extension Daemons {
    /// Touch prediction in a real motiond replaying a real drag: what a client reads.
    @Suite("Touch prediction end to end")
    struct PredictionEndToEndTests {
        static let bundled = EndToEnd.repository.appendingPathComponent("data/recordings/atmel-maxtouch-drag-up-down.evemu").path

        @Test("with [screen] prediction = 0.016 a dragged card's predicted position runs ahead of it in the drag's direction, and is its position once it rests")
        func replay() throws {
            let example = try String(contentsOf: EndToEnd.repository.appendingPathComponent("config/motiond.toml"), encoding: .utf8)
            let configuration = example.replacingOccurrences(of: "# prediction = 0.016", with: "prediction = 0.016")
            #expect(configuration != example)
            let daemon = try RunningDaemon(["--replay", Self.bundled, "--speed", "2"], configuration: configuration)
            defer { _ = daemon.stop() }
            let client = try TestClient(daemon.socket)
            var events: [[String: Any]] = []
            _ = try client.request(#"{"id": 1, "op": "subscribe", "streams": ["card.position", "card.predicted_position", "card.state", "screen.contacts"]}"#, events: &events)
            // Reads until the card has moved and come to rest again (at most 60 s).
            var position: (x: Double, y: Double)?, predicted: (x: Double, y: Double)?
            var ahead: [(dy: Double, velocity: Double)] = []
            var previousY: Double?
            var movedAndRested = false, moved = false, predictedContacts = 0
            let deadline = Date().addingTimeInterval(60)
            while !movedAndRested, Date() < deadline, let message = try events.isEmpty ? client.next() : events.removeFirst() {
                guard let stream = message["stream"] as? String else { continue }
                switch stream {
                case "card.position":
                    let value = try #require(message["value"] as? [String: Double])
                    if let previousY { ahead.append((0, value["y"]! - previousY)) }
                    previousY = value["y"]
                    position = (value["x"]!, value["y"]!)
                case "card.predicted_position":
                    let value = try #require(message["value"] as? [String: Double])
                    predicted = (value["x"]!, value["y"]!)
                    if let position, let last = ahead.last { ahead[ahead.count - 1] = (value["y"]! - position.y, last.velocity) }
                case "card.state":
                    if message["value"] as? String == "active" { moved = true }
                    if message["value"] as? String == "atRest" && moved { movedAndRested = true }
                case "screen.contacts":
                    let fingers = message["value"] as? [[String: Any]] ?? []
                    predictedContacts += fingers.filter { $0["predicted"] is [String: Double] }.count
                default: break
                }
            }
            #expect(movedAndRested, "the card never moved and came to rest")
            // While dragged, the prediction runs ahead: most frames where the card moved more
            // than 2 px, the predicted position is further along in the same direction.
            let moving = ahead.filter { abs($0.velocity) > 2 }
            let inStep = moving.filter { $0.dy * $0.velocity > 0 && abs($0.dy) > 1 }
            #expect(moving.count > 20 && Double(inStep.count) > 0.6 * Double(moving.count), "\(inStep.count) of \(moving.count): \(ahead)")
            #expect(predictedContacts > 20)
            #expect(position != nil && predicted != nil)
            // At rest, the predicted position is the position.
            let rest = try #require((try client.request(#"{"id": 2, "op": "get", "stream": "card.position"}"#)["result"] as? [String: Any])?["value"] as? [String: Double])
            let last = try #require((try client.request(#"{"id": 3, "op": "get", "stream": "card.predicted_position"}"#)["result"] as? [String: Any])?["value"] as? [String: Double])
            #expect(rest == last, "\(rest) against \(last)")
        }
    }
}
