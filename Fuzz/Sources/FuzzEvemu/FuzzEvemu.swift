import FuzzSupport
import MotionCore
import TouchInput

/// The evemu parser on any text, then the replay a recording of a touchscreen gets: an error
/// names a line within the text, and every frame has finite positions.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEvemu(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let text = String(decoding: fuzzInput(data, size), as: UTF8.self)
    let recording: EvemuRecording
    do {
        recording = try EvemuRecording(parsing: text)
    } catch {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).count
        fuzzCheck((0...lines).contains(error.line), "line \(error.line) in a text of \(lines) lines: \(error)")
        return 0
    }
    guard let replay = try? RecordingReplay(recording) else { return 0 }
    for frame in replay.frames() {
        checkFrame(frame)
    }
    return 0
}

func checkFrame(_ frame: TouchFrame) {
    for contact in frame.contacts {
        fuzzCheck(contact.position.x.isFinite && contact.position.y.isFinite, "a position that is not finite: \(contact)")
        if let millimetres = contact.millimetres {
            fuzzCheck(millimetres.x.isFinite && millimetres.y.isFinite, "millimetres that are not finite: \(contact)")
        }
    }
}
