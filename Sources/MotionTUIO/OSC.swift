/// Open Sound Control 1.0 encoding, as much of it as TUIO needs: messages with int32,
/// float32, string and time-tag arguments, gathered in bundles.
///
/// The rules, from the OSC 1.0 specification: every item is a multiple of four bytes; a
/// string is its ASCII bytes, a NUL and up to three more NULs; numbers are big-endian; a
/// message is its address, a type-tag string starting with `,`, then its arguments; a bundle
/// is the string `#bundle`, a time tag, then each element preceded by its size as an int32.
struct OSCWriter {
    /// What was written so far; reused from packet to packet (``reset()``).
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 2048) {
        bytes.reserveCapacity(capacity)
    }

    /// Starts again empty, keeping the memory.
    mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
    }

    /// How many bytes were written.
    var count: Int { bytes.count }

    /// Forgets everything written after the first `count` bytes.
    mutating func truncate(to count: Int) {
        bytes.removeSubrange(count...)
    }

    // MARK: Arguments

    /// An OSC-string. The caller gives ASCII without NULs (TUIO's addresses and the checked
    /// `source` setting); a NUL inside would end the string early for every reader.
    mutating func string(_ text: String) {
        var text = text
        text.withUTF8 { bytes.append(contentsOf: $0) }
        bytes.append(0)
        pad()
    }

    /// Four big-endian bytes.
    mutating func int32(_ value: Int32) {
        let bits = UInt32(bitPattern: value)
        bytes.append(UInt8(truncatingIfNeeded: bits >> 24))
        bytes.append(UInt8(truncatingIfNeeded: bits >> 16))
        bytes.append(UInt8(truncatingIfNeeded: bits >> 8))
        bytes.append(UInt8(truncatingIfNeeded: bits))
    }

    /// An IEEE 754 single, big-endian.
    mutating func float32(_ value: Float) {
        int32(Int32(bitPattern: value.bitPattern))
    }

    /// A time tag: eight big-endian bytes.
    mutating func timeTag(_ tag: OSCTimeTag) {
        int32(Int32(bitPattern: UInt32(truncatingIfNeeded: tag.rawValue >> 32)))
        int32(Int32(bitPattern: UInt32(truncatingIfNeeded: tag.rawValue)))
    }

    private mutating func pad() {
        while bytes.count % 4 != 0 { bytes.append(0) }
    }

    // MARK: Messages and bundles

    /// Starts a bundle with its time tag. Messages written after it are its elements.
    mutating func beginBundle(_ tag: OSCTimeTag) {
        string("#bundle")
        timeTag(tag)
    }

    /// Writes one bundle element: a message to `address` whose arguments `arguments` writes,
    /// which must match `typeTags` (",sif…"), preceded by its size.
    /// `repeating` adds that many more tags of one type after `typeTags`, for messages with a
    /// list (TUIO's `alive`).
    mutating func message(_ address: String, _ typeTags: String, repeating tag: UInt8 = 0, times: Int = 0,
                          _ arguments: (inout OSCWriter) -> Void) {
        let sizeAt = bytes.count
        int32(0)
        string(address)
        var tags = typeTags
        tags.withUTF8 { bytes.append(contentsOf: $0) }
        for _ in 0..<times { bytes.append(tag) }
        bytes.append(0)
        pad()
        arguments(&self)
        let size = UInt32(bytes.count - sizeAt - 4)
        bytes[sizeAt] = UInt8(truncatingIfNeeded: size >> 24)
        bytes[sizeAt + 1] = UInt8(truncatingIfNeeded: size >> 16)
        bytes[sizeAt + 2] = UInt8(truncatingIfNeeded: size >> 8)
        bytes[sizeAt + 3] = UInt8(truncatingIfNeeded: size)
    }

    /// The bytes one string takes: itself, its NUL and the padding.
    static func size(of text: String) -> Int { (text.utf8.count / 4 + 1) * 4 }
}

/// An OSC time tag: NTP's 64-bit fixed point, seconds since 1900 in the high half.
struct OSCTimeTag: Hashable {
    var rawValue: UInt64

    /// "Immediately": 63 zero bits and a one, as the specification reserves.
    static let immediately = OSCTimeTag(rawValue: 1)

    /// Seconds between NTP's epoch (1900) and Unix's (1970).
    static let unixEpochOffset: UInt64 = 2_208_988_800

    /// The time tag of a Unix time, in seconds and nanoseconds.
    init(unixSeconds: Int, nanoseconds: Int) {
        let seconds = UInt64(max(0, unixSeconds)) &+ Self.unixEpochOffset
        let fraction = (UInt64(max(0, min(nanoseconds, 999_999_999))) << 32) / 1_000_000_000
        rawValue = seconds << 32 | fraction
    }

    init(rawValue: UInt64) {
        self.rawValue = rawValue
    }
}
