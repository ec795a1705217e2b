import Testing
import TouchModel

/// ``FixedWidthInteger/init(saturating:)``: what motiond converts a Double from outside with,
/// where `Int(_:)` would trap.
@Suite("Saturating conversions")
struct SaturatingConversionTests {
    @Test("NaN is 0, past the range is the nearest end, within it rounds toward zero")
    func conversions() {
        #expect(Int32(saturating: .nan) == 0)
        #expect(Int32(saturating: 1e300) == .max && Int32(saturating: -.infinity) == .min)
        #expect(Int64(saturating: 0x1p63) == .max && Int64(saturating: -0x1p63) == .min)
        #expect(Int64(saturating: 0x1p62) == 1 << 62)
        #expect(UInt64(saturating: -1) == 0 && UInt8(saturating: 255.9) == 255)
        #expect(Int(saturating: -2.7) == -2 && Int(saturating: 2.7) == 2)
    }
}
