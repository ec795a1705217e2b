import Foundation
import MotionCore
import TouchInput

/// The evemu parser on any text, then the replay a recording of a touchscreen gets: an error
/// names a line within the text, and every frame has finite positions.
func fuzzEvemu(_ bytes: [UInt8]) throws {
    let text = String(decoding: bytes, as: UTF8.self)
    try checkBothWays(text)
    let recording: EvemuRecording
    do {
        recording = try EvemuRecording(parsing: text)
    } catch {
        // As the parser counts them: "\r\n" is one Character, and ends a line too.
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }).count
        try fuzzCheck((0...lines).contains(error.line), "line \(error.line) in a text of \(lines) lines: \(error)")
        return
    }
    guard let replay = try? RecordingReplay(recording) else { return }
    for frame in replay.frames() {
        try checkFrame(frame)
    }
}

/// Event lines are read from bytes in a file without carriage returns, and line by line in
/// one with them: the same text with "\r\n" endings must give the same recording or error.
private func checkBothWays(_ text: String) throws {
    guard !text.utf8.contains(UInt8(ascii: "\r")) else { return }
    let crlf = text.replacingOccurrences(of: "\n", with: "\r\n")
    let bytes = Result { () throws(EvemuParseError) in try EvemuRecording(parsing: text) }
    let lines = Result { () throws(EvemuParseError) in try EvemuRecording(parsing: crlf) }
    switch (bytes, lines) {
    case let (.success(a), .success(b)):
        try fuzzCheck(a.events == b.events && a.device == b.device && a.formatVersion == b.formatVersion, "the two ways read different recordings")
    case let (.failure(a), .failure(b)):
        try fuzzCheck(a == b, "the two ways fail differently: \(a) / \(b)")
    default:
        throw BrokenInvariant(message: "one way reads it, the other fails: \(bytes) / \(lines)")
    }
}

private func checkFrame(_ frame: TouchFrame) throws {
    for contact in frame.contacts {
        try fuzzCheck(contact.position.x.isFinite && contact.position.y.isFinite, "a position that is not finite: \(contact)")
        if let millimetres = contact.millimetres {
            try fuzzCheck(millimetres.x.isFinite && millimetres.y.isFinite, "millimetres that are not finite: \(contact)")
        }
    }
}
