import Foundation
import MotionCore
import DaemonTestSupport
import Testing
@testable import MotionConfiguration
import MotionWire
@testable import MotionDaemon

/// `[screen] prediction` over the protocol: the predicted streams, `screen.contacts`'
/// `predicted`, and when they equal the plain values.
@Suite("Touch prediction over the protocol")
struct PredictionProtocolTests {
    static func configuration(prediction: String) -> String {
        """
        [screen]
        width = 1920
        height = 1080
        \(prediction)

        [[element]]
        id = "card"
        center = [600, 500]
        size = [400, 300]
        [element.draggable]

        [[element]]
        id = "photo"
        center = [1400, 500]
        size = [400, 300]
        [element.directly_manipulable]

        [[element]]
        id = "label"
        center = [960, 950]
        size = [200, 50]
        """
    }

    static func contact(_ id: Int32, _ phase: TouchPhase, _ x: Double, _ y: Double) -> TouchContact {
        fingerContact(id, phase, x, y)
    }

    /// A daemon predicting 16 ms ahead, with a client subscribed to `streams`.
    static func daemon(_ streams: [String]) throws -> (Daemon, ManualFrameClock, HandScheduler, RecordingOutput) {
        let clock = ManualFrameClock(now: 10)
        let scheduler = HandScheduler(now: 10)
        let daemon = Daemon(configuration: try Configuration.parse(configuration(prediction: "prediction = 0.016"), file: "p.toml"),
                            clock: clock, idleScheduler: scheduler, controlPolicy: { _ in true })
        let output = RecordingOutput()
        let session = daemon.connect(output, credentials: nil)
        _ = try output.take()
        let list = streams.map { "\"\($0)\"" }.joined(separator: ",")
        daemon.receive("{\"id\":1,\"op\":\"subscribe\",\"streams\":[\(list)]}", from: session)
        _ = try output.take()
        return (daemon, clock, scheduler, output)
    }

    static func values(_ lines: [JSONInput], _ stream: String) -> [Point] {
        lines.filter { $0["stream"]?.string == stream }.compactMap { line in
            guard let x = line["value"]?["x"]?.number, let y = line["value"]?["y"]?.number else { return nil }
            return Point(x: x, y: y)
        }
    }

    @Test("with prediction on, elements fingers move have predicted streams (rotation and scale where they turn and scale); without, none")
    func streams() throws {
        func names(_ prediction: String) throws -> Set<String> {
            let daemon = Daemon(configuration: try Configuration.parse(Self.configuration(prediction: prediction), file: "p.toml"),
                                clock: ManualFrameClock(now: 0), controlPolicy: { _ in true })
            let output = RecordingOutput()
            _ = daemon.connect(output, credentials: nil)
            return Set(try output.take().first?["streams"]?.array?.compactMap(\.string) ?? [])
        }
        let on = try names("prediction = 0.016")
        #expect(on.isSuperset(of: ["card.predicted_position", "photo.predicted_position", "photo.predicted_rotation", "photo.predicted_scale"]))
        #expect(!on.contains("card.predicted_rotation") && !on.contains("label.predicted_position"))
        let off = try names("")
        #expect(off.allSatisfy { !$0.contains("predicted") })
    }

    @Test("a card dragged at a steady 600 px/s is predicted 16 ms ahead of where it is, 9.6 px, its finger too; at the lift both are where they are")
    func drag() throws {
        let (daemon, clock, _, output) = try Self.daemon(["card.position", "card.predicted_position", "screen.contacts"])
        var frames: [TouchFrame] = []
        for index in 0..<20 {
            let t = 10 + Double(index) * 0.008
            frames.append(TouchFrame(time: t, contacts: [Self.contact(1, index == 0 ? .began : .moved, 600 + 600 * (t - 10), 500)]))
        }
        for frame in frames {
            clock.now = frame.time
            daemon.process(frame, from: testPanel)
        }
        let lines = try output.take()
        let positions = Self.values(lines, "card.position"), predicted = Self.values(lines, "card.predicted_position")
        let last = try #require(positions.last), ahead = try #require(predicted.last)
        #expect(abs(ahead.x - last.x - 9.6) < 1e-6 && abs(ahead.y - last.y) < 1e-9, "\(last) → \(ahead)")
        let contacts = try #require(lines.last { $0["stream"]?.string == "screen.contacts" }?["value"]?.array?.first)
        let x = try #require(contacts["x"]?.number), predictedX = try #require(contacts["predicted"]?["x"]?.number)
        #expect(abs(predictedX - x - 9.6) < 1e-6)

        // The finger lifts: the card's predicted position is its position; the springs that
        // may move it afterwards carry both along.
        clock.now = 10.2
        daemon.process(TouchFrame(time: 10.2, contacts: [Self.contact(1, .ended, 600 + 600 * 0.2, 500)]), from: testPanel)
        let lifted = try output.take()
        #expect(Self.values(lifted, "card.predicted_position").last == daemon.engine.scene.element("card")?.position.value)
    }

    @Test("a finger jumping between the screen's corners every millisecond (a panel without resolution, no jump filter): its predicted contact stays on the screen, and so does the card it drags, at most 10 m/s at 5 px/mm for 16 ms, 800 px, from where it is")
    func alternatingCorners() throws {
        let (daemon, clock, _, output) = try Self.daemon(["card.position", "card.predicted_position", "screen.contacts"])
        // Land on the card and drag it past the slop, then alternate.
        var frames = (0..<10).map { index in
            TouchFrame(time: 10 + 0.008 * Double(index), contacts: [Self.contact(1, index == 0 ? .began : .moved, 600 + 4 * Double(index), 500)])
        }
        let corners = [(0.0, 0.0), (1919.0, 1079.0), (1919.0, 0.0), (0.0, 1079.0)]
        for index in 0..<300 {
            let corner = corners[index % 4]
            frames.append(TouchFrame(time: 10.08 + 0.001 * Double(index), contacts: [Self.contact(1, .moved, corner.0, corner.1)]))
        }
        var card: Point?, predictedCard: Point?
        var farthest = 0.0, predictedContacts = 0
        for frame in frames {
            clock.now = frame.time
            daemon.process(frame, from: testPanel)
            let lines = try output.take()
            card = Self.values(lines, "card.position").last ?? card
            predictedCard = Self.values(lines, "card.predicted_position").last ?? predictedCard
            if let card, let predictedCard {
                farthest = max(farthest, predictedCard.distance(to: card))
                // Picked up at its centre, the card is where the finger is, and so on the screen.
                #expect(predictedCard.x >= 0 && predictedCard.x <= 1920 && predictedCard.y >= 0 && predictedCard.y <= 1080, "card predicted at \(predictedCard)")
            }
            for line in lines where line["stream"]?.string == "screen.contacts" {
                for contact in line["value"]?.array ?? [] {
                    guard let x = contact["predicted"]?["x"]?.number, let y = contact["predicted"]?["y"]?.number else { continue }
                    predictedContacts += 1
                    #expect(x >= 0 && x <= 1920 && y >= 0 && y <= 1080, "predicted contact at (\(x), \(y))")
                }
            }
        }
        #expect(predictedContacts >= 300 && card != nil && predictedCard != nil)
        #expect(farthest <= 800 + 1e-6, "the card was predicted \(farthest) px from where it was")
    }

    @Test("a finger held still on a panel that then sends nothing: 40 ms after its last frame the daemon's timer puts the predictions where things are")
    func lapse() throws {
        let (daemon, clock, scheduler, output) = try Self.daemon(["card.position", "card.predicted_position", "screen.contacts"])
        for index in 0..<12 {
            let t = 10 + Double(index) * 0.008
            clock.now = t
            daemon.process(TouchFrame(time: t, contacts: [Self.contact(1, index == 0 ? .began : .moved, 600 + 800 * (t - 10), 500)]), from: testPanel)
        }
        let moving = try output.take()
        let card = try #require(Self.values(moving, "card.position").last)
        #expect(try #require(Self.values(moving, "card.predicted_position").last).x > card.x + 5)
        // Nothing comes; the timer fires at the last frame's time + 40 ms.
        let lastFrame = 10 + 11 * 0.008
        clock.now = lastFrame + 0.05
        scheduler.advance(to: lastFrame + 0.05)
        let lapsed = try output.take()
        #expect(Self.values(lapsed, "card.predicted_position") == [card], "\(lapsed)")
        let contact = try #require(lapsed.last { $0["stream"]?.string == "screen.contacts" }?["value"]?.array?.first)
        #expect(contact["predicted"]?["x"]?.number == contact["x"]?.number)
    }

    @Test("two fingers turning and spreading on a directly manipulable photo: its predicted rotation and scale run ahead of its rotation and scale")
    func turnAndSpread() throws {
        let (daemon, clock, _, output) = try Self.daemon(["photo.rotation", "photo.scale", "photo.predicted_rotation", "photo.predicted_scale"])
        for index in 0..<20 {
            let t = 10 + Double(index) * 0.008
            let angle = 2 * (t - 10), radius = 100 + 400 * (t - 10)
            let phase: TouchPhase = index == 0 ? .began : .moved
            clock.now = t
            daemon.process(TouchFrame(time: t, contacts: [
                Self.contact(1, phase, 1400 + radius * cos(angle), 500 + radius * sin(angle)),
                Self.contact(2, phase, 1400 - radius * cos(angle), 500 - radius * sin(angle)),
            ]), from: testPanel)
        }
        let lines = try output.take()
        func last(_ stream: String) -> Double? { lines.last { $0["stream"]?.string == stream }?["value"]?.number }
        let rotation = try #require(last("photo.rotation")), predictedRotation = try #require(last("photo.predicted_rotation"))
        let scale = try #require(last("photo.scale")), predictedScale = try #require(last("photo.predicted_scale"))
        // 2 rad/s for 16 ms; the spread grows 400 px/s on a radius of about 176 px.
        #expect(abs(predictedRotation - rotation - 0.032) < 0.002, "\(rotation) → \(predictedRotation)")
        #expect(predictedScale > scale * 1.02 && predictedScale < scale * 1.05, "\(scale) → \(predictedScale)")
    }
}
