import Testing
@testable import MotionWire
@testable import MotionDaemon

/// A state file's cost (SceneState) counted from a value's encoded size (JSONValue), as its
/// encoding would measure it.
@Suite("JSON values in the state file")
struct StateFileCostTests {
    @Test("a value's encoded size is counted as its encoding would measure, and a state file's cost with it")
    func encodedSizeFollowsTheEncoding() {
        let values: [JSONValue] = [
            .null, .bool(true), .bool(false), .integer(0), .integer(-7), .integer(Int64.min), .integer(Int64.max),
            .number(9), .number(-10), .number(1.5), .number(-2.25e-7), .number(1e15), .number(.nan), .number(.infinity),
            .string(""), .string("card"), .string("q\"uo\\te"), .string("tab\tline\nnul\u{0}del\u{7F}c1\u{85}"),
            .string("é ü ✓ 𝄞 \u{2028}\u{2029}"), .string("a,b[c]{d}"),
            .array([]), .array([1]), .array([1, "x,y", [2, [3, []]]]), .object([]),
            .object([("center", [960, 540]), ("id", "n1-,[{"), ("interactions", .object([("tossable", .object([("destination", [1.5, 2])]))]))]),
        ]
        for value in values {
            let bytes = value.encodedBytes
            #expect(value.encodedSize.bytes == bytes.count, "\(value.encoded)")
            #expect(value.encodedSize.separators + 1 == SceneState.valueBound(bytes), "\(value.encoded)")
            for id in ["card", "ü\"\n"] {
                // What the cost was, from the encoding itself.
                let cost = SceneState.Cost(id: id, added: value)
                #expect(cost.bytes == JSONValue.string(id).encodedBytes.count + bytes.count + 80 + 6 * 24 + 1)
                #expect(cost.values == 12 + SceneState.valueBound(bytes))
            }
        }
        #expect(SceneState.Cost(id: "card", added: nil) == SceneState.Cost(bytes: 6 + 4 + 80 + 6 * 24 + 1, values: 13))
    }
}
