import Testing
@testable import MotionConfiguration

/// The configuration's side of the one rule for numbers from outside (the daemon's side,
/// `set` and `add_element`, is ValueLimitTests in MotionServerTests): what the file gives is
/// finite and in range, or refused on its line with the field and the range.
@Suite("Values from outside, in the configuration")
struct ConfigurationValueLimitTests {
    @Test("the configuration refuses the same values on their line, relative to its own screen")
    func configuration() {
        let element = "[screen]\nwidth = 800\nheight = 600\n\n[[element]]\nid = \"card\"\n"
        expectRefused(element + "center = [1e308, 0]\nsize = [10, 10]\n", line: 7, "center: x must be within -8000…8800 (10 screens around the 800×600 screen), not 1e+308")
        expectRefused(element + "center = [10, 10]\nsize = [10, 6001]\n", line: 8, "size: height must be more than 0 and at most 6000")
        expectRefused(element + "center = [10, 10]\nsize = [10, 10]\n\n[element.tossable]\ndestination = [0, -7000]\n", line: 11, "destination: y must be within -6000…6600")
        expectRefused(element + "center = [10, 10]\nsize = [10, 10]\n\n[element.tossable]\nsnap_points = { far = [9000, 0] }\n", line: 11, "x must be within -8000…8800")
        expectRefused(element + "center = [10, 10]\nsize = [10, 10]\n\n[element.attach]\ndestination = [5, 5]\nspring = { tension = 342, friction = 30, mass = 1e-9 }\n",
                      line: 12, "mass must be within 0.001…1000")
    }

    @Test("an element with both tossable and attach is refused: they would publish the same streams (found by the config fuzzer, which crashed on it)")
    func tossableAndAttach() {
        let element = "[[element]]\nid = \"card\"\ncenter = [10, 10]\nsize = [10, 10]\n\n[element.tossable]\ndestination = [5, 5]\n\n[element.attach]\ndestination = [50, 50]\n"
        expectRefused(element, line: 9, "element 'card' has tossable and attach")
    }

    @Test("[screen] prediction is 0 to 0.05 s; more, or not a number, is refused with the file, line and range", arguments: ["0.06", "-0.01", "\"soon\""])
    func predictionOutOfRange(value: String) throws {
        do {
            _ = try Configuration.parse("[screen]\nprediction = \(value)\n", file: "p.toml")
            Issue.record("prediction = \(value) was taken")
        } catch {
            #expect("\(error)".contains("p.toml:2") && "\(error)".contains("prediction"), "\(error)")
        }
    }
}
