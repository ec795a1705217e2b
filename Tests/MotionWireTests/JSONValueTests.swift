import Testing
@testable import MotionConfiguration
@testable import MotionWire

/// JSONValue's equality: values equal when they would be sent as the same JSON, compared as
/// values (not by encoding both).
@Suite("JSON values")
struct JSONValueTests {
    @Test("equality and hashing agree with the encoding, pair by pair")
    func equalityFollowsTheWire() {
        let values: [JSONValue] = [
            .null, .number(.nan), .number(.infinity), .bool(true), .bool(false), .integer(1), .number(1), .number(1.5),
            .integer(-0), .number(-0.0), .number(1e15), .integer(1_000_000_000_000_000), .string("1"), .string(""),
            .array([1, 2]), .array([2, 1]), .array([.number(2), .integer(1)]),
            .object([("a", 1), ("b", 2)]), .object([("b", 2), ("a", 1)]), .object([("a", .number(1)), ("b", 2)]), .object([]),
        ]
        for a in values {
            for b in values {
                #expect((a == b) == (a.encoded == b.encoded), "\(a.encoded) vs \(b.encoded)")
                if a == b { #expect(a.hashValue == b.hashValue, "\(a.encoded)") }
            }
        }
        #expect(Set(values).count == Set(values.map(\.encoded)).count)
    }
}
