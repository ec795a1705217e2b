import Testing
@testable import TouchInput

/// Each row of ``SlotState/transition(_:_:)``'s table, as its doc comment states it.
@Suite("A slot's life")
struct SlotStateTests {
    typealias S = SlotState

    @Test("landing: a new contact begins; one replaced ends first (lost in a resync: cancelled); a palm is hidden")
    func landing() {
        #expect(S.transition(.empty, .land(id: 4, palm: false, lost: false)) == (.began(id: 4), .none))
        #expect(S.transition(.empty, .land(id: 4, palm: true, lost: false)) == (.palm(id: 4), .none))
        #expect(S.transition(.palm(id: 1), .land(id: 4, palm: false, lost: false)) == (.began(id: 4), .none))
        #expect(S.transition(.began(id: 1), .land(id: 4, palm: false, lost: false)) == (.began(id: 4), .none))
        #expect(S.transition(.down(id: 1, moved: true), .land(id: 4, palm: false, lost: false)) == (.began(id: 4), .ended))
        #expect(S.transition(.down(id: 1, moved: false), .land(id: 4, palm: false, lost: true)) == (.began(id: 4), .cancelled))
        #expect(S.transition(.down(id: 1, moved: false), .land(id: 4, palm: true, lost: false)) == (.palm(id: 4), .ended))
    }

    @Test("moving and reporting: moved until the next frame, then stationary")
    func moving() {
        #expect(S.transition(.down(id: 1, moved: false), .move) == (.down(id: 1, moved: true), .none))
        #expect(S.transition(.began(id: 1), .move) == (.began(id: 1), .none))
        #expect(S.transition(.began(id: 1), .report) == (.down(id: 1, moved: false), .none))
        #expect(S.transition(.down(id: 1, moved: true), .report) == (.down(id: 1, moved: false), .none))
        #expect(S.transition(.empty, .move) == (.empty, .none))
        #expect(S.transition(.palm(id: 2), .report) == (.palm(id: 2), .none))
    }

    @Test("ending: a lift ends what was reported, a palm or a cancel cancels it; what was never reported never happened")
    func ending() {
        #expect(S.transition(.down(id: 1, moved: false), .lift(lost: false)) == (.empty, .ended))
        #expect(S.transition(.down(id: 1, moved: false), .lift(lost: true)) == (.empty, .cancelled))
        #expect(S.transition(.began(id: 1), .lift(lost: false)) == (.empty, .none))
        #expect(S.transition(.palm(id: 1), .lift(lost: false)) == (.empty, .none))
        #expect(S.transition(.down(id: 1, moved: true), .palm) == (.palm(id: 1), .cancelled))
        #expect(S.transition(.began(id: 1), .palm) == (.palm(id: 1), .none))
        #expect(S.transition(.down(id: 1, moved: false), .cancel) == (.empty, .cancelled))
        #expect(S.transition(.began(id: 1), .cancel) == (.empty, .none))
        #expect(S.transition(.palm(id: 1), .cancel) == (.empty, .none))
        #expect(S.transition(.empty, .cancel) == (.empty, .none))
        #expect(S.transition(.empty, .lift(lost: false)) == (.empty, .none))
    }
}
