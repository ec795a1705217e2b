import MotionServer
import MotionWire

/// The JSON request parser on any bytes. A value that parses has only finite numbers and
/// parses again, written back, to the same value; an error names a column on the line.
func fuzzJSON(_ bytes: [UInt8]) throws {
    let value: JSONInput
    do {
        value = try JSONInput(parsing: bytes)
    } catch {
        try fuzzCheck((1...bytes.count + 1).contains(error.column), "column \(error.column) is outside a line of \(bytes.count) bytes")
        return
    }
    try fuzzCheck(value.allNumbersFinite, "a number that is not finite")
    let encoded = value.encoded
    let again: JSONInput
    do {
        again = try JSONInput(parsing: Substring(encoded))
    } catch {
        throw BrokenInvariant(message: "\(encoded), written back, does not parse: \(error)")
    }
    try fuzzCheck(again == value, "\(encoded) parses to another value")
}
