import MotionCore
import MotionServer
import MotionDaemon

/// The state file's reader on any bytes. A state it reads is within its limits and, written
/// back, reads again to the same state and the same bytes; a refusal names an element only
/// within the ones the file could hold.
func fuzzState(_ bytes: [UInt8]) throws {
    let limits = ValueLimits(screen: Size(width: 1920, height: 1080))
    let state: SceneState
    do {
        state = try SceneState(reading: bytes, limits: limits)
    } catch {
        try fuzzCheck(!error.message.isEmpty, "a refusal without a reason")
        if let element = error.element { try fuzzCheck((0..<SceneState.maximumElements).contains(element), "element \(element) named") }
        return
    }
    try fuzzCheck(state.elements.count <= SceneState.maximumElements, "\(state.elements.count) elements")
    try fuzzCheck(Set(state.elements.map(\.id)).count == state.elements.count, "an id twice")
    for element in state.elements {
        try fuzzCheck(!element.id.isEmpty && !element.id.unicodeScalars.contains("\u{0}"), "the id \(element.id.debugDescription)")
        try fuzzCheck(limits.problem(position: element.position) == nil, "the position \(element.position)")
        try fuzzCheck(SceneState.scales.contains(element.scale) && SceneState.rotations.contains(element.rotation), "scale \(element.scale), rotation \(element.rotation)")
    }
    let encoded = state.encoded
    let again: SceneState
    do {
        again = try SceneState(reading: encoded, limits: limits)
    } catch {
        throw BrokenInvariant(message: "\(String(decoding: encoded, as: UTF8.self)), written back, is refused: \(error)")
    }
    try fuzzCheck(again == state, "\(String(decoding: encoded, as: UTF8.self)) reads to another state")
    try fuzzCheck(again.encoded == encoded, "written twice, other bytes")
}
