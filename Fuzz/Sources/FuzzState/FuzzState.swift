import FuzzSupport
import MotionCore
import MotionServer

/// The state file's reader on any bytes. A state it reads is within its limits and, written
/// back, reads again to the same state and the same bytes; a refusal names an element only
/// within the ones the file could hold.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzState(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    let limits = ValueLimits(screen: Size(width: 1920, height: 1080))
    let state: SceneState
    do {
        state = try SceneState(reading: bytes, limits: limits)
    } catch {
        fuzzCheck(!error.message.isEmpty, "a refusal without a reason")
        if let element = error.element { fuzzCheck((0..<SceneState.maximumElements).contains(element), "element \(element) named") }
        return 0
    }
    fuzzCheck(state.elements.count <= SceneState.maximumElements, "\(state.elements.count) elements")
    fuzzCheck(Set(state.elements.map(\.id)).count == state.elements.count, "an id twice")
    for element in state.elements {
        fuzzCheck(!element.id.isEmpty && !element.id.unicodeScalars.contains("\u{0}"), "the id \(element.id.debugDescription)")
        fuzzCheck(limits.problem(position: element.position) == nil, "the position \(element.position)")
        fuzzCheck(SceneState.scales.contains(element.scale) && SceneState.rotations.contains(element.rotation), "scale \(element.scale), rotation \(element.rotation)")
    }
    let encoded = state.encoded
    do {
        let again = try SceneState(reading: encoded, limits: limits)
        fuzzCheck(again == state, "\(String(decoding: encoded, as: UTF8.self)) reads to another state")
        fuzzCheck(again.encoded == encoded, "written twice, other bytes")
    } catch {
        fuzzCheck(false, "\(String(decoding: encoded, as: UTF8.self)), written back, is refused: \(error)")
    }
    return 0
}
