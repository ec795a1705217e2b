/// What an element id may be: one rule, for the configuration file's `[[element]]`,
/// `add_element` (read by the same reader) and the state file.
///
/// An id names streams (`card.position`) that clients subscribe to, set and compare, and
/// appears in logs. Swift compares strings by canonical equivalence, so `café` written with
/// the one character é and `café` written as e plus a combining accent would be one id while
/// their bytes differ, and a client could get its streams back in a byte form it never sent.
/// Requiring Unicode Normalization Form C (NFC) leaves each name one byte form: two NFC
/// strings are canonically equivalent only when their bytes are equal, so accepted ids compare
/// byte for byte, whatever the language comparing them.
///
/// An id also has to look like what it is. `card` followed by a zero width joiner prints as
/// `card` and would be another element, so invisible characters are refused: the format
/// characters (general category Cf: zero-width space and joiners, the direction marks, the
/// word joiner, the byte order mark, the soft hyphen) and the other default-ignorable ones
/// (variation selectors, the Hangul fillers, which Unicode counts as letters). Controls,
/// unassigned code points and private-use characters are refused too: private-use ones mean
/// only what one machine's fonts make of them, and print as a box or nothing in a log or on a
/// terminal elsewhere (``OutsideText`` escapes all three as not plainly visible).
extension ElementSettings {
    /// Why `id` cannot name an element, or nil when it can.
    public static func idProblem(_ id: String) -> String? {
        if id.isEmpty { return "an element id cannot be empty" }
        if id.utf8.count > maximumIDBytes { return "an element id is at most \(maximumIDBytes) bytes, not \(id.utf8.count)" }
        // The common id, ASCII letters, digits, '_' and '-', passes every check below (it
        // is visible, and NFC); said at once, since a restore checks thousands of them twice.
        // The bytes in place where they are contiguous (always, but for a bridged string).
        if id.utf8.withContiguousStorageIfAvailable({ $0.allSatisfy(isPlainIDByte) }) ?? id.utf8.allSatisfy(isPlainIDByte) { return nil }
        if id.unicodeScalars.contains("\u{0}") {
            return "an element id cannot contain a NUL character (\\u0000): logs and C libraries would cut it there, into another id"
        }
        for scalar in id.unicodeScalars {
            if let kind = unseen(scalar) {
                return "an element id cannot contain \(codePoint(scalar)), \(kind): it would look like another id"
            }
        }
        guard id.allSatisfy(isIDCharacter) else {
            return "an element id is letters, digits, '_' and '-' (it names streams such as \(id).position), not '\(id)'"
        }
        guard isNFC(id) else {
            return "an element id is in Unicode Normalization Form C (NFC), and '\(id)' is not: it holds a character in "
                + "decomposed form, such as e followed by U+0301 COMBINING ACUTE ACCENT; send it precomposed (é as U+00E9), "
                + "so that one name has one form"
        }
        return nil
    }

    private static func isPlainIDByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "_"), UInt8(ascii: "-"):
            return true
        default:
            return false
        }
    }

    /// What kind of character that does not show `scalar` is, or nil when it shows.
    private static func unseen(_ scalar: Unicode.Scalar) -> String? {
        switch scalar.properties.generalCategory {
        case .control: return "a control character"
        case .format: return "an invisible formatting character"
        case .unassigned: return "a code point Unicode has not assigned"
        case .privateUse: return "a private-use character"
        case .surrogate: return "a surrogate"
        default: return scalar.properties.isDefaultIgnorableCodePoint ? "an invisible character" : nil
        }
    }

    /// Whether `character` may be part of an id: it starts with a letter, a digit, `_` or
    /// `-`, and anything after that in the same character is a mark on it (an accent, a
    /// vowel sign) or a letter or digit joined to it (Hangul jamo), nothing else (an emoji
    /// modifier).
    private static func isIDCharacter(_ character: Character) -> Bool {
        guard character.isLetter || character.isNumber || character == "_" || character == "-" else { return false }
        return character.unicodeScalars.dropFirst().allSatisfy { scalar in
            switch scalar.properties.generalCategory {
            case .nonspacingMark, .spacingMark, .enclosingMark, .uppercaseLetter, .lowercaseLetter, .titlecaseLetter,
                 .modifierLetter, .otherLetter, .decimalNumber, .letterNumber, .otherNumber:
                return true
            default:
                return false
            }
        }
    }

    /// The standard library's full NFC check, not only its quick check, which cannot decide
    /// for some marks (x followed by U+0301 is NFC: no precomposed character has it).
    private static func isNFC(_ text: String) -> Bool {
        var span = text.utf8Span
        return span.checkForNFC(quickCheck: false)
    }

    private static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}
