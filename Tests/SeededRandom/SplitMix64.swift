/// A small seeded generator (SplitMix64), for the tests that draw many cases at random: the
/// same seed gives the same cases on every run, so a failure can be replayed. One copy for
/// every test target that needs one.
public struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64

    /// The sequence that starts from `seed`.
    public init(seed: UInt64) {
        state = seed
    }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A number from 0 up to, not including, `bound`.
    public mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}
