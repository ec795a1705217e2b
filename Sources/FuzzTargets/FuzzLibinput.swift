import Foundation
import MotionCore
import TouchInput

/// libinput record's YAML (libyaml's events composed by `YAMLDocument`) on any text: an error names a line within the text
/// (or the line after its end, where a YAML error at end of input points), every device
/// number is honoured or refused, and a touchscreen's frames have finite positions.
func fuzzLibinput(_ bytes: [UInt8]) throws {
    let text = String(decoding: bytes, as: UTF8.self)
    // Always as YAML, whatever the first line looks like: the reader is what is fuzzed here.
    let yaml = "# libinput record\n" + text
    for device in [nil, 0, 1] as [Int?] {
        let recording: EvemuRecording
        do {
            recording = try EvemuRecording(reading: yaml, device: device)
        } catch {
            let lines = yaml.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" }).count
            try fuzzCheck((1...lines + 1).contains(error.line), "line \(error.line) in a text of \(lines) lines: \(error)")
            continue
        }
        guard let replay = try? RecordingReplay(recording) else { continue }
        for frame in replay.frames() {
            for contact in frame.contacts {
                try fuzzCheck(contact.position.x.isFinite && contact.position.y.isFinite, "a position that is not finite: \(contact)")
            }
        }
    }
}
