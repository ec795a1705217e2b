import MotionCore
import Testing
@testable import TouchInput

/// A contact the panel itself marks `MT_TOOL_PALM` is counted in `filtered.palms` and noticed
/// for the log, as a palm found by size is: cancelled unseen before.
@Suite("Palms the panel marks")
struct MarkedPalmTests {
    /// The frames' notices and the palms counted, for `script`'s events.
    static func palms(_ script: EventScript) -> (notices: [ContactFilters.Notice], palms: Int) {
        var assembler = TouchFrameAssembler(description: panel(), mapping: OutputMapping())
        var notices: [ContactFilters.Notice] = []
        for event in script.events {
            _ = assembler.consume(event)
            notices += assembler.takeFilterReport().notices
        }
        return (notices, assembler.filterCounts.palms)
    }

    @Test("a finger that turns palm is counted cancelled where it was; one that lands a palm, never begun; a finger after it, not at all")
    func counted() {
        var s = EventScript()
        s.slot(0); s.track(1); s.at(100, 100); s.report()
        s.abs(AbsoluteAxis.toolType, ToolType.palm); s.at(120, 120); s.report()
        s.at(130, 130); s.report()
        s.track(-1); s.report()
        s.slot(1); s.abs(AbsoluteAxis.toolType, ToolType.palm); s.track(2); s.at(300, 300); s.report()
        s.slot(1); s.track(-1); s.report()
        s.slot(1); s.abs(AbsoluteAxis.toolType, ToolType.finger); s.track(3); s.at(400, 400); s.report()
        // A finger landing where a palm lifted sends its id before its tool type: no palm.
        s.slot(2); s.abs(AbsoluteAxis.toolType, ToolType.palm); s.track(4); s.at(500, 500); s.report()
        s.track(-1); s.report()
        s.track(5); s.abs(AbsoluteAxis.toolType, ToolType.finger); s.at(600, 500); s.report()
        let (notices, palms) = Self.palms(s)
        #expect(palms == 3)
        #expect(notices.map(\.kind) == [.markedPalm(fromLanding: false), .markedPalm(fromLanding: true), .markedPalm(fromLanding: true)])
        #expect(notices.map(\.trackingID) == [1, 2, 4])
        #expect(notices.map(\.kind.filter) == ["palm", "palm", "palm"], "one metric label with the palms found by size")
        #expect(notices.first?.time == 0.01, "noticed with the frame that marked it")
    }
}
