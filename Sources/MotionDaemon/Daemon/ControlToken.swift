/// The WebSocket's control token (`auth`), compared so that a wrong guess learns nothing.
enum ControlToken {
    /// Compares in time that depends only on the lengths, so that how long a wrong guess
    /// takes says nothing about how much of it was right.
    static func matches(_ given: String, _ expected: String) -> Bool {
        let a = Array(given.utf8), b = Array(expected.utf8)
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count) | (a.count == b.count ? 0 : 1)
        for index in 0..<b.count { difference |= (index < a.count ? a[index] : 0) ^ b[index] }
        return difference == 0
    }
}
