import CEvdev
import Testing
@testable import TouchInput

/// The live reader's hook into libevdev's log (Sources/CEvdev/shim.h): libevdev drops a slot's
/// new tracking id that comes with no −1 before it and logs it as a kernel bug; the hook notes
/// the id, which ``TouchDevice`` gives back to the assembler, so that live frames read it as a
/// replay of the raw events does (a lift and a landing; the lab plays it on a real kernel).
@Suite("Tracking ids libevdev drops")
struct ReplacedTrackingIDTests {
    /// libevdev's own words for it (libevdev.c, sanitize_event), with log_bug's prefix.
    static let doubleTrackingID = "BUG: Device \"%s\" received a double tracking ID %d in slot %d.\n"

    static func log(_ format: String, _ ids: inout motiond_replaced_ids, _ arguments: [CVarArg]) {
        withVaList(arguments) { list in
            motiond_evdev_log(nil, LIBEVDEV_LOG_ERROR, &ids, "libevdev.c", 1, "sanitize_event", format, list)
        }
    }

    @Test("a new id libevdev drops is noted in order; a -1 it drops, and its other messages, are not")
    func notesDroppedIDs() {
        var ids = motiond_replaced_ids()
        "panel".withCString { name in
            Self.log(Self.doubleTrackingID, &ids, [name, Int32(53), Int32(1)])
            Self.log(Self.doubleTrackingID, &ids, [name, Int32(-1), Int32(2)])
            Self.log(Self.doubleTrackingID, &ids, [name, Int32(54), Int32(0)])
            Self.log("BUG: Device \"%s\" received an invalid slot index %d.Capping to announced max slot number %d.\n",
                     &ids, [name, Int32(12), Int32(9)])
        }
        #expect(ids.count == 2)
        #expect(motiond_replaced_id(&ids, 0) == 53 && motiond_replaced_id(&ids, 1) == 54)
    }
}
