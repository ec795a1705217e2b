import Testing
@testable import TouchInput

/// What a replay reports of its contact filters: every decision counted and noticed at the
/// time it was made, whether or not the filters let a frame through then.
@Suite("Filter decisions in replays")
struct ReplayFilterReportTests {
    /// palm_size in units: the palm filter acts on this panel whatever the automatic size
    /// would decide of its touch axis.
    static let palms = ContactFilterSettings(palmSize: .units(300))

    /// A generated recording on the 409.6 mm panel at 10 units/mm with a touch axis of
    /// 0…1000: a finger taps (8 mm) at 0 and lifts at 0.05 s, the last frame the filters let
    /// through; then two palms (45 and 50 mm) land in slots 0 and 1 at 0.2 and 0.35 s and
    /// lift at 0.45 s, all of which the filters swallow.
    /// Returns it with the times each palm's verdict is made: the first 0.1 s after it lands
    /// (ContactFilterSettings.palmVerdictWindow), the second at its lift, sooner.
    static func palmsAfterTheLastFrame() -> (recording: EvemuRecording, palms: [Double]) {
        var script = EventScript()
        script.slot(0); script.track(1); script.at(500, 500); script.abs(AbsoluteAxis.touchMajor, 80); script.report(after: 0.05)
        script.track(-1); script.report(after: 0.15)
        var palms = [script.time + ContactFilterSettings.palmVerdictWindow]
        script.track(2); script.at(1500, 1500); script.abs(AbsoluteAxis.touchMajor, 450); script.report(after: 0.15)
        script.slot(1); script.track(3); script.at(3000, 1500); script.abs(AbsoluteAxis.touchMajor, 500); script.report(after: 0.1)
        palms.append(script.time)
        script.track(-1); script.slot(0); script.track(-1); script.report()
        return (EvemuRecording(device: ContactFilterTests.panel(majorMaximum: 1000), events: script.events), palms)
    }

    @Test("palms that land after the last frame the filters let through are counted and noticed when their verdicts are made, as ignored from landing")
    func palmsAfterLastFrame() throws {
        let (recording, palmTimes) = Self.palmsAfterTheLastFrame()
        let replay = try RecordingReplay(recording, filters: Self.palms)
        #expect(replay.frames().map(ContactFilterTests.phases) == [["1 began"], ["1 ended"]])

        let moments = replay.replayedFrames()
        #expect(moments.last?.counts.palms == 2, "\(moments.map(\.counts))")
        let decided = moments.filter { !$0.notices.isEmpty }
        #expect(decided.map(\.time) == palmTimes)
        #expect(decided.allSatisfy { $0.frame == nil })
        #expect(decided.map(\.counts.palms) == [1, 2], "each counted when it happened")
        let notices = moments.flatMap(\.notices)
        #expect(notices.map(\.trackingID) == [2, 3])
        #expect(notices.map(\.time) == palmTimes)
        #expect(notices.allSatisfy { $0.kind == .palm(fromLanding: true) })
        // Nothing else becomes a moment: each has a frame or a decision.
        #expect(moments.count == 4)
    }

    @Test("a palm swallowed between two frames is reported when its verdict is made (its lift), not with the next frame; a finger that grows into a palm is cancelled, not from landing")
    func palmBetweenFrames() throws {
        var script = EventScript()
        script.slot(0); script.track(1); script.at(500, 500); script.abs(AbsoluteAxis.touchMajor, 80); script.report(after: 0.1)
        script.track(-1); script.report(after: 0.1)
        script.track(2); script.at(2000, 2000); script.abs(AbsoluteAxis.touchMajor, 450); script.report(after: 0.05)
        let lift = script.time
        script.track(-1); script.report(after: 0.15)
        let next = script.time
        script.slot(1); script.track(3); script.at(700, 500); script.abs(AbsoluteAxis.touchMajor, 80); script.report(after: 0.1)
        let growing = script.time
        script.abs(AbsoluteAxis.touchMajor, 400); script.report(after: 0.1)
        script.track(-1); script.report()
        let replay = try RecordingReplay(EvemuRecording(device: ContactFilterTests.panel(majorMaximum: 1000), events: script.events), filters: Self.palms)
        let moments = replay.replayedFrames()
        #expect(moments.map { $0.frame.map(ContactFilterTests.phases) ?? [] } == [["1 began"], ["1 ended"], [], ["3 began"], ["3 cancelled"]])
        let swallowed = try #require(moments.first { $0.frame == nil })
        #expect(swallowed.time == lift)
        #expect(swallowed.notices.map(\.trackingID) == [2] && swallowed.notices.first?.kind == .palm(fromLanding: true))
        #expect(moments.first { $0.time == next }?.notices.isEmpty == true, "nothing rides on the next frame")
        let cancelled = try #require(moments.first { $0.frame?.contacts.contains { $0.phase == .cancelled } == true })
        #expect(cancelled.time == growing)
        #expect(cancelled.notices.map(\.trackingID) == [3] && cancelled.notices.first?.kind == .palm(fromLanding: false))
        #expect(moments.last?.counts.palms == 2)
    }

    @Test("without filter decisions a replay's moments are its frames, one for one")
    func momentsAreFrames() throws {
        let recording = try FixtureRecordings.recording(FixtureRecordings.atmelFour)
        let moments = try RecordingReplay(recording).replayedFrames()
        #expect(moments.allSatisfy { $0.frame != nil && $0.frame?.time == $0.time })
        #expect(moments.count == (try RecordingReplay(recording).frames().count))
    }
}
