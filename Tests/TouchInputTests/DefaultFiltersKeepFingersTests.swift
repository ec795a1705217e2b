import Foundation
import Testing
import TouchModel
@testable import TouchInput

/// A filter that is on by default may act only on sound evidence: a default that drops one
/// real finger is worse than no filter. So every recording in the fixtures (the real ones,
/// and the generated ones beside them) is replayed twice, as the device sent it (every
/// filter off) and with the default filters, and every finger the device reported lifting
/// normally must, with the defaults, begin in the same frame and slot and end, lifted, in
/// the same frame: not be cancelled (the jump and stuck filters) and not be ignored (the palm
/// filter). The recordings are found when the tests run, so a file added to the fixtures is
/// held to this without being named.
@Suite("The default filters keep every finger of the recordings")
struct DefaultFiltersKeepFingersTests {
    /// Recordings the defaults still lose fingers of, by path from the fixtures folder, each
    /// with the filter that loses them and why (`"a__b__c.evemu": "jump filter: the panel
    /// declares 1 unit/mm, so 50 mm is 50 units"`). Remove an entry once that filter keeps
    /// the recording's fingers: the test then fails until it is removed, so the list never
    /// outlives the problem. Empty: the defaults keep every finger of every recording here.
    static let knownLosses: [String: Comment] = [:]

    /// One contact from its `began` to its end, as a replay's frames report it.
    struct Life: CustomStringConvertible {
        var slot: Int
        var trackingID: Int32
        var began: Double
        /// When and how it ended; nil while still down when the recording stops.
        var ended: Double?
        var endPhase: TouchPhase?

        var description: String {
            let end = ended.map { "\(endPhase.map { "\($0)" } ?? "?") at \(Self.seconds($0))" } ?? "still down at the end"
            return "slot \(slot) id \(trackingID) began at \(Self.seconds(began)), \(end)"
        }

        static func seconds(_ time: Double) -> String { String(format: "%.3f s", time) }
    }

    /// Every contact's life, in the order they began. A contact is followed by its id, which
    /// the kernel keeps unique while the finger is down and a jump replaces.
    static func lives(_ frames: [TouchFrame]) -> [Life] {
        var lives: [Life] = []
        var open: [Int32: Int] = [:]
        for frame in frames {
            for contact in frame.contacts {
                switch contact.phase {
                case .began:
                    open[contact.trackingID] = lives.count
                    lives.append(Life(slot: contact.slot, trackingID: contact.trackingID, began: frame.time))
                case .ended, .cancelled:
                    guard let index = open.removeValue(forKey: contact.trackingID) else { continue }
                    lives[index].ended = frame.time
                    lives[index].endPhase = contact.phase
                case .moved, .stationary:
                    continue
                }
            }
        }
        return lives
    }

    /// What the defaults did to each finger the raw replay saw lift normally, one line for
    /// each finger they lost; empty when they kept every one.
    static func losses(raw: [Life], filtered: [Life]) -> [String] {
        var losses: [String] = []
        for finger in raw where finger.endPhase == .ended {
            let kept = filtered.contains {
                $0.slot == finger.slot && $0.began == finger.began && $0.endPhase == .ended && $0.ended == finger.ended
            }
            if kept { continue }
            let seen = filtered.filter { $0.slot == finger.slot && $0.began >= finger.began && $0.began <= finger.ended! }
            // A finger the jump filter cuts at every frame becomes hundreds of contacts:
            // the first few and the last say what happened.
            var shown = seen.prefix(3).map(\.description)
            if seen.count > 4 { shown.append("\(seen.count - 4) more") }
            if seen.count > 3, let last = seen.last { shown.append(last.description) }
            let what = seen.isEmpty ? "never began (ignored)" : shown.joined(separator: "; ")
            losses.append("\(finger): with the defaults \(what)")
        }
        return losses
    }

    /// The device and what the defaults make of it, for a failure message.
    static func describe(_ device: DeviceDescription) -> String {
        func axis(_ name: String, _ code: UInt16) -> String? {
            guard device.has(EventType.absolute, code), let info = device.axes[code] else { return nil }
            return "\(name) \(info.minimum)…\(info.maximum) at \(info.resolution)/mm"
        }
        let (x, y) = device.isMultitouch ? (AbsoluteAxis.positionX, AbsoluteAxis.positionY) : (AbsoluteAxis.x, AbsoluteAxis.y)
        let axes = [axis("x", x), axis("y", y), axis("touch major", AbsoluteAxis.touchMajor)].compactMap { $0 }
        let resolved = ResolvedContactFilters(ContactFilterSettings(), device: device)
        let jump = resolved.jumpMillimetres.map { "jump \($0) mm" } ?? "jump off"
        let palm = resolved.palmUnits.map { "palm above \($0) units" } ?? "palm by size off"
        return "\(axes.joined(separator: ", ")); \(jump), \(palm)"
    }

    /// The test below is as good as the files it is given: an empty list would pass.
    @Test("the recordings are found: every one the other tests name, and those in folders")
    func findsTheRecordings() {
        let found = FixtureRecordings.allRecordings()
        #expect(Set(FixtureRecordings.withEvents + [LibinputRecordingTests.yaml]).isSubset(of: found), "\(found)")
        #expect(found.contains { $0.hasPrefix("generated/") } && found.contains { $0.hasSuffix(".events") }, "\(found)")
    }

    @Test("with the defaults, every finger the device reported lifting begins and lifts as it did with every filter off",
          arguments: FixtureRecordings.allRecordings())
    func keepsEveryFinger(_ path: String) throws {
        let recording = try FixtureRecordings.replayable(path)
        try #require(!recording.events.isEmpty, "\(path) holds no events")
        let (raw, filtered, losses, counts) = try Self.replayTwice(recording)

        let check = {
            #expect(losses.isEmpty && filtered.count == raw.count, """
                \(path): the defaults lost \(losses.count) of \(raw.filter { $0.endPhase == .ended }.count) fingers; \
                \(raw.count) contacts began with every filter off, \(filtered.count) with the defaults \
                (counted: \(counts.jumps) jumps, \(counts.palms) palms, \(counts.stuck) stuck). \
                Device: \(recording.device.map(Self.describe) ?? "?").
                \(losses.joined(separator: "\n"))
                """)
        }
        if let known = Self.knownLosses[path] {
            withKnownIssue(known) { check() }
        } else {
            check()
        }
    }

    /// The recording's contacts replayed with every filter off and with the defaults, on the
    /// full-HD screen motiond maps a panel to without a configuration; the fingers the
    /// defaults lost, and what the filters counted.
    static func replayTwice(_ recording: EvemuRecording) throws -> (raw: [Life], filtered: [Life], losses: [String], counts: ContactFilters.Counts) {
        let screen = OutputMapping(outputSize: Size(width: 1920, height: 1080))
        let raw = Self.lives(try RecordingReplay(recording, mapping: screen, filters: .off).frames())
        let replayed = try RecordingReplay(recording, mapping: screen, filters: ContactFilterSettings()).replayedFrames()
        let filtered = Self.lives(replayed.compactMap(\.frame))
        return (raw, filtered, Self.losses(raw: raw, filtered: filtered), replayed.last?.counts ?? ContactFilters.Counts())
    }

    /// The recording as a panel that lies about its size would send it: its positions spread
    /// over 0…32767 declared at `resolution` units/mm (a panel 11 to 33 metres wide), and its
    /// touch-size axis, if any, declared at 1 unit/mm.
    static func lying(_ recording: EvemuRecording, resolution: Int32) throws -> EvemuRecording {
        var device = try #require(recording.device)
        var scales: [UInt16: (minimum: Int32, span: Double)] = [:]
        for code in [AbsoluteAxis.positionX, AbsoluteAxis.positionY, AbsoluteAxis.x, AbsoluteAxis.y] {
            guard let axis = device.axes[code] else { continue }
            scales[code] = (axis.minimum, Swift.max(1, Double(axis.maximum) - Double(axis.minimum)))
            device.axes[code] = AxisInfo(minimum: 0, maximum: 32767, fuzz: axis.fuzz, flat: axis.flat, resolution: resolution)
        }
        if var major = device.axes[AbsoluteAxis.touchMajor] {
            major.resolution = 1
            device.axes[AbsoluteAxis.touchMajor] = major
        }
        let events = recording.events.map { event -> InputEvent in
            guard event.type == EventType.absolute, let scale = scales[event.code] else { return event }
            var moved = event
            moved.value = Int32(((Double(event.value) - Double(scale.minimum)) / scale.span * 32767).rounded())
            return moved
        }
        return EvemuRecording(device: device, events: events, formatVersion: recording.formatVersion)
    }

    @Test("on panels that declare 1 to 3 units/mm over 0…32767 (metres wide) and their touch size at 1 unit/mm, the defaults keep every finger of every recording's own motion",
          arguments: FixtureRecordings.allRecordings())
    func keepsEveryFingerOnLyingPanels(_ path: String) throws {
        let honest = try FixtureRecordings.replayable(path)
        try #require(!honest.events.isEmpty, "\(path) holds no events")
        for resolution: Int32 in [1, 2, 3] {
            let (raw, filtered, losses, counts) = try Self.replayTwice(Self.lying(honest, resolution: resolution))
            #expect(losses.isEmpty && filtered.count == raw.count, """
                \(path) at \(resolution) units/mm: the defaults lost \(losses.count) of \(raw.filter { $0.endPhase == .ended }.count) fingers \
                (counted: \(counts.jumps) jumps, \(counts.palms) palms, \(counts.stuck) stuck).
                \(losses.prefix(5).joined(separator: "\n"))
                """)
        }
    }
}
