import Testing
@testable import MotionControl

/// `motionctl lock --for`: decimal seconds or minutes, from 1 s to an hour, and nothing else
/// a number parser would take.
@Suite("motionctl lock --for")
struct LockCommandTests {
    @Test("seconds and minutes, whole or decimal", arguments: [("90", 90.0), ("90s", 90), ("2m", 120), ("1.5m", 90), ("1", 1), ("3600", 3600), ("60m", 3600), ("2.5", 2.5)])
    func taken(text: String, seconds: Double) throws {
        #expect(try LockCommand.seconds(text) == seconds)
    }

    @Test("hexadecimal, exponents, nan, infinity, signs, nothing, and durations beyond 1 s to an hour are refused, saying what is taken",
          arguments: ["0x10", "0x10s", "0X1p4", "1e3", "nan", "inf", "infinity", "-5", "+5", "0", "0.5", "61m", "3601", "1e999", "99999999999999999999", "", "s", "m", ".", "1.2.3", "١٢", " 90", "90 s"])
    func refused(text: String) {
        #expect {
            _ = try LockCommand.seconds(text)
        } throws: { error in
            "\(error)".contains("decimal seconds or minutes")
        }
    }
}
