import MotionCore
import NIOCore
import Testing
import TouchInput
@testable import MotionConfiguration
@testable import MotionServer

/// The publisher writes `value` lines straight into buffers; they must be the bytes the
/// general encoder (``JSONValue``) writes, which the rest of the protocol uses.
@Suite("Value lines")
struct ValueLineTests {
    private func general(_ stream: String, _ value: PublishedValue, _ time: Double, _ seq: Int) -> String {
        JSONValue.object([("event", "value"), ("stream", .string(stream)), ("value", .published(value)), ("t", .number(time)), ("seq", .integer(Int64(seq)))]).encoded + "\n"
    }

    private func direct(_ stream: String, _ value: PublishedValue, _ time: Double, _ seq: Int) -> String {
        var buffer = ByteBufferAllocator().buffer(capacity: 16)
        buffer.writeValueLine(stream: stream, value: value, time: time, seq: seq)
        return String(buffer: buffer)
    }

    @Test("numbers: whole, fractional, tiny, huge, negative, not finite")
    func numbers() {
        var generator = SystemRandomNumberGenerator()
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

    @Test("numbers of a few decimals, which are written without the standard library's algorithm, at every magnitude and either side of its bounds")
    func fewDecimals() {
        var generator = SystemRandomNumberGenerator()
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
            var buffer = ByteBufferAllocator().buffer(capacity: 16)
            let contacts = state.contacts
            buffer.writeValueLine(stream: ScreenContacts.name, time: 4.25, seq: 9) { $0.writeContacts(contacts) }
            #expect(String(buffer: buffer) == expected)
            #expect(contacts.count == count)
        }
    }
}
