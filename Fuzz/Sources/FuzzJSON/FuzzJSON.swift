import FuzzSupport
import MotionServer

/// The JSON request parser on any bytes. A value that parses has only finite numbers and
/// parses again, written back, to the same value; an error names a column on the line.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSON(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    let bytes = fuzzInput(data, size)
    let value: JSONInput
    do {
        value = try JSONInput(parsing: bytes)
    } catch {
        fuzzCheck((1...bytes.count + 1).contains(error.column), "column \(error.column) is outside a line of \(bytes.count) bytes")
        return 0
    }
    fuzzCheck(value.allNumbersFinite, "a number that is not finite")
    let encoded = value.encoded
    do {
        let again = try JSONInput(parsing: Substring(encoded))
        fuzzCheck(again == value, "\(encoded) parses to another value")
    } catch {
        fuzzCheck(false, "\(encoded), written back, does not parse: \(error)")
    }
    return 0
}
