import MotionCore
import SeededRandom
import Testing
import TouchInput
@testable import MotionConfiguration
import MotionWire
@testable import MotionDaemon

/// The publisher writes `value` lines straight into buffers; they must be the bytes the
/// general encoder (``JSONValue``) writes, which the rest of the protocol uses.
@Suite("Value lines")
struct ValueLineTests {
    private func general(_ stream: String, _ value: PublishedValue, _ time: Double, _ seq: Int) -> String {
        JSONValue.object([("event", "value"), ("stream", .string(stream)), ("value", .published(value)), ("t", .number(time)), ("seq", .integer(Int64(seq)))]).encoded + "\n"
    }

    private func direct(_ stream: String, _ value: PublishedValue, _ time: Double, _ seq: Int) -> String {
        var buffer = LineBuffer(capacity: 16)
        buffer.writeValueLine(stream: stream, value: value, time: time, seq: seq)
        return String(decoding: buffer.lines, as: UTF8.self)
    }

    @Test("numbers: whole, fractional, tiny, huge, negative, not finite", .seeded)
    func numbers() {
        var generator = TestSeed.generator()
        var numbers: [Double] = [0, -0.0, 1, -1, 0.5, 1e15, 1e15 - 1, -1e15, 1e16, 1e-300, .leastNonzeroMagnitude, .greatestFiniteMagnitude,
                                 -.greatestFiniteMagnitude, .infinity, -.infinity, .nan, 866, 866.000_000_1, 12_345.678_901_234_5, 0.1 + 0.2]
        for _ in 0..<5000 {
            numbers.append(Double(bitPattern: generator.next()))
            numbers.append(Double.random(in: -4000...4000, using: &generator))
            numbers.append(Double(Int.random(in: -100_000...100_000, using: &generator)) / 8)
        }
        for number in numbers {
            #expect(direct("a.rotation", .number(number), number, 7) == general("a.rotation", .number(number), number, 7), "\(number)")
        }
    }

    @Test("numbers of a few decimals, which are written without the standard library's algorithm, at every magnitude and either side of its bounds", .seeded)
    func fewDecimals() {
        var generator = TestSeed.generator()
        var numbers: [Double] = [1e-4, -1e-4, 1e-4.nextDown, 1e-4.nextUp, 0.00011, 0.0009999, 0.001, 0.1, 0.2, 0.3, 0.1 + 0.2, 0x1p33, 0x1p33.nextDown,
                                 -0x1p33.nextDown, 8_589_934_591.999_9, 8_589_934_591.5, 880.8, 882.800_000_000_000_1, 263.25, 1234.567_8, 99_999.999_9]
        for _ in 0..<100_000 {
            let places = Int.random(in: 1...6, using: &generator)
            let magnitude = Int64.random(in: 0...14, using: &generator)
            var power: Int64 = 1
            for _ in 0..<magnitude { power *= 10 }
            let digits = Int64.random(in: -power...power, using: &generator)
            var scale = 1.0
            for _ in 0..<places { scale *= 10 }
            numbers.append(Double(digits) / scale)
            numbers.append((Double(digits) / scale).nextUp)
        }
        for number in numbers {
            #expect(direct("a.x", .number(number), 1, 1) == general("a.x", .number(number), 1, 1), "\(number)")
        }
    }

    @Test("time stamps and numbers of up to fifteen places, byte for byte Swift's own description of them", .seeded)
    func manyDecimals() {
        var generator = TestSeed.generator()
        var numbers: [Double] = [52_569.345_589_07, 52_569.671_401_07, 0.000_123_456_789, 1e-4 + 1e-15, 8_589_934_591.000_001,
                                 0x1p33.nextDown, 1234.567_890_123_45, 0.1 + 0.2, 1.0 / 3, 2.0 / 3, 86_399.999_999_999]
        for _ in 0..<100_000 {
            // A time stamp of a clock's resolution: whole seconds up to 2³³, nanoseconds to tens of them.
            let places = Int.random(in: 1...15, using: &generator)
            var scale = 1.0
            for _ in 0..<places { scale *= 10 }
            let seconds = Double(Int64.random(in: 0..<(1 << 33), using: &generator) >> Int.random(in: 0...33, using: &generator))
            let number = seconds + Double(Int64.random(in: 0..<Int64(scale), using: &generator)) / scale
            numbers += [number, number.nextUp, number.nextDown, -number]
            // Any double between the bounds, and either side of them.
            let exponent = Double.random(in: -4.5...10.5, using: &generator)
            numbers.append(Double.random(in: 1...10, using: &generator) * pow10(exponent))
        }
        for number in numbers where number.isFinite && number != number.rounded() {
            let expected = "{\"event\":\"value\",\"stream\":\"a.t\",\"value\":1,\"t\":\(String(describing: number)),\"seq\":1}\n"
            #expect(direct("a.t", .number(1), number, 1) == expected, "\(number)")
        }
    }

    /// 10 to a power, near enough for drawing numbers of every magnitude.
    private func pow10(_ exponent: Double) -> Double {
        var result = 1.0
        for _ in 0..<Int(exponent.magnitude) { result = exponent < 0 ? result / 10 : result * 10 }
        return result
    }

    @Test("names are found plain, eight bytes at a time, exactly when each of their bytes is", .seeded)
    func plainNames() {
        var generator = TestSeed.generator()
        let odd: [UInt8] = [0, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x5B, 0x5C, 0x5D, 0x7E, 0x7F, 0x80, 0xC3, 0xFF]
        for _ in 0..<50_000 {
            var bytes = (0..<Int.random(in: 0...40, using: &generator)).map { _ in UInt8.random(in: 0x20...0x7E, using: &generator) }
            if !bytes.isEmpty, Bool.random(using: &generator) {
                bytes[Int.random(in: bytes.indices, using: &generator)] = odd.randomElement(using: &generator)!
            }
            let plain = bytes.allSatisfy { $0 >= 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "\"") && $0 != UInt8(ascii: "\\") }
            #expect(bytes.withUnsafeBytes { ValueLine.isPlain($0) } == plain, "\(bytes)")
        }
    }

    @Test("a frame's lines of the same time share its digits, and a line of another time has its own", .seeded)
    func sharedTimes() {
        var generator = TestSeed.generator()
        let times: [Double] = [52_569.947_841_069_996, 52_569.345_589_07, 4.25, 0, -0.0, 12, .nan, .infinity, 1e-300, 1e300, -3.5, 0x1p33 + 0.5]
        var buffer = LineBuffer(capacity: 16)
        var expected = ""
        var shared = TimeDigits()
        var time = times[0]
        for seq in 0..<5000 {
            if Bool.random(using: &generator) { time = times.randomElement(using: &generator)! }
            buffer.writeValueLine(stream: "a.x", value: .number(Double(seq) / 4), time: time, seq: seq, times: &shared)
            expected += general("a.x", .number(Double(seq) / 4), time, seq)
        }
        #expect(String(decoding: buffer.lines, as: UTF8.self) == expected)
    }

    @Test("every kind of value, and names and texts that need escapes")
    func kinds() {
        let values: [PublishedValue] = [
            .point(Point(x: 866.25, y: -830)), .size(Size(width: 520, height: 360.5)), .number(.pi), .bool(true), .bool(false),
            .text("atRest"), .text("quote \" backslash \\ newline \n tab \t bell \u{7} é ☃"),
            .spring(SpringConfiguration(tension: 342, friction: 30, mass: 1)),
        ]
        for value in values {
            for stream in ["card.position", "odd \"name\"\\.x", "é.state"] {
                for seq in [0, 1, 42, Int(Int32.max), -3] {
                    #expect(direct(stream, value, 123_456.789_012, seq) == general(stream, value, 123_456.789_012, seq))
                }
            }
        }
    }

    @Test("screen.contacts: none, one, several, device names that need escapes")
    func contacts() {
        let fingers: [ScreenContact] = [
            .init(id: 0, position: Point(x: 960, y: 540), device: "/dev/input/event3"),
            .init(id: 17, position: Point(x: -0.25, y: 1e-7), device: "odd \"node\" é"),
            .init(id: Int(Int32.max), position: Point(x: .nan, y: 12_345.678_9), device: ""),
        ]
        for count in 0...fingers.count {
            var state = ScreenContacts()
            for (index, finger) in fingers.prefix(count).enumerated() {
                let contact = TouchContact(slot: index, trackingID: Int32(index), phase: .began, deviceX: 0, deviceY: 0, position: finger.position)
                _ = state.update(with: [ReportedContact(device: index, finger: finger.id, contact: contact, predicted: nil)], device: finger.device)
            }
            let expected = JSONValue.object([("event", "value"), ("stream", .string(ScreenContacts.name)), ("value", .published(.contacts(state.contacts))), ("t", .number(4.25)), ("seq", .integer(9))]).encoded + "\n"
            var buffer = LineBuffer(capacity: 16)
            let contacts = state.contacts
            buffer.writeValueLine(stream: ScreenContacts.name, time: 4.25, seq: 9) { $0.writeContacts(contacts) }
            #expect(String(decoding: buffer.lines, as: UTF8.self) == expected)
            #expect(contacts.count == count)
        }
    }
}
