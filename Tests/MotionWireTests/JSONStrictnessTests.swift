import Testing
@testable import MotionConfiguration
@testable import MotionWire

/// `JSONInput` holds to RFC 8259 and RFC 3629 where a lenient reader would guess, and says
/// where a line goes wrong.
@Suite("JSON input is strict")
struct JSONStrictnessTests {
    /// The error for `text`, or nil when it parses.
    func failure(_ text: String) -> JSONInputError? {
        do { _ = try JSONInput(parsing: Substring(text)); return nil } catch { return error }
    }

    func failure(bytes: [UInt8]) -> JSONInputError? {
        do { _ = try JSONInput(parsing: bytes); return nil } catch { return error }
    }

    @Test("a \\u escape is exactly four hexadecimal digits: no sign", arguments: [
        (#""\u+1ab""#, 4), (#""\u-000""#, 4), (#""\u+fff""#, 4), (#""ab\u00+1""#, 8),
    ])
    func signedEscape(text: String, column: Int) throws {
        let error = try #require(failure(text))
        #expect(error.column == column && error.message.contains("four hexadecimal digits"), "\(error)")
    }

    @Test("a \\u escape still reads upper and lower case digits")
    func hexDigits() throws {
        #expect(try JSONInput(parsing: #""\u00E9\u00e9\uD83D\uDE00""#) == .string("éé😀"))
    }

    @Test("a member name that appears twice is refused, naming it and its column", arguments: [
        (#"{"id": 1, "id": 2}"#, "id", 11),
        (#"{"op": "set", "value": {"x": 1, "x": 2}}"#, "x", 33),
        (#"{"a\u0062": 1, "ab": 2}"#, "ab", 16),
    ])
    func duplicateKey(text: String, key: String, column: Int) throws {
        let error = try #require(failure(text))
        #expect(error.column == column && error.message.contains("\"\(key)\""), "\(error)")
    }

    @Test("a surrogate without its pair is refused at its escape", arguments: [
        (#""\udc00""#, 2), (#""x\ud800""#, 3), (#""\ud800\u0041""#, 2), (#""\udfff\ud800""#, 2),
    ])
    func loneSurrogate(text: String, column: Int) throws {
        let error = try #require(failure(text))
        #expect(error.column == column && error.message.contains("lone surrogate"), "\(error)")
    }

    @Test("bytes that are not UTF-8 are refused at the first bad byte", arguments: [
        [0xC0, 0x80],              // an overlong NUL
        [0xE0, 0x80, 0xAF],        // an overlong '/'
        [0xED, 0xA0, 0x80],        // a surrogate encoded in UTF-8
        [0xF4, 0x90, 0x80, 0x80],  // past U+10FFFF
        [0xE2, 0x82],              // cut short
        [0x80],                    // a continuation byte alone
        [0xFE], [0xFF],
    ] as [[UInt8]])
    func invalidUTF8(sequence: [UInt8]) throws {
        let line = Array(#"{"k": "é"#.utf8) + sequence + Array(#"x"}"#.utf8)
        let error = try #require(failure(bytes: line))
        #expect(error.column == 10 && error.message.contains("UTF-8"), "\(error)")
    }

    @Test("valid UTF-8 of every length reads as the characters it encodes")
    func validUTF8() throws {
        #expect(try JSONInput(parsing: Array(#""aé€😀""#.utf8)) == .string("aé€😀"))
    }

    @Test("a byte order mark is refused, and said to be one")
    func byteOrderMark() throws {
        let error = try #require(failure(bytes: [0xEF, 0xBB, 0xBF] + Array("{}".utf8)))
        #expect(error.column == 1 && error.message.contains("byte order mark"), "\(error)")
    }

    @Test("a byte that cannot start a value is shown as a byte, not as a raw character", arguments: [
        ("\u{01}", "byte 0x01"), ("\u{7F}", "byte 0x7F"), ("é", "byte 0xC3"), (" +1", "'+'"),
    ])
    func unexpectedByte(text: String, shown: String) throws {
        let error = try #require(failure(text))
        #expect(error.message == "unexpected \(shown) where a value was expected", "\(error)")
    }

    @Test("numbers are RFC 8259's and no more", arguments: [
        ("+1", 1), ("-", 2), ("1.", 3), ("01", 1), ("-01", 1), (".5", 1), ("1e", 3), ("1e+", 4),
        ("1e400", 6), ("-1e400", 7), ("0x10", 2), ("Infinity", 1), ("NaN", 1), ("1.5.2", 4),
    ])
    func badNumber(text: String, column: Int) throws {
        let error = try #require(failure(text))
        #expect(error.column == column, "\(error)")
    }

    @Test("control characters in a string are refused; DEL is not one")
    func controlCharacters() throws {
        for byte in UInt8(0)..<0x20 {
            let error = try #require(failure(bytes: Array(#""ab"#.utf8) + [byte] + [UInt8(ascii: "\"")]), "\(byte)")
            #expect(error.column == 4, "\(error)")
        }
        #expect(try JSONInput(parsing: Substring("\"\u{7F}\"")) == .string("\u{7F}"))
    }
}
