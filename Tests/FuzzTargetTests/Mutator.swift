import SeededRandom

/// Inputs made from a corpus the way libFuzzer mutates one, without its coverage feedback:
/// a corpus entry changed by one to five edits (bits flipped, bytes set, inserted, deleted or
/// copied, a splice with another entry, a dictionary token put in), within the longest input.
/// The same generator state gives the same inputs, so a seed names every input it made.
struct Mutator {
    let corpus: [[UInt8]]
    let tokens: [[UInt8]]
    let maximumLength: Int

    /// Bytes that parsers treat specially: ends, quotes, signs, escapes and the extremes.
    private static let special: [UInt8] = [0, 0xFF, 0x7F, 0x80, 0x0A, 0x0D, 0x22, 0x5C, 0x2D, 0x30, 0x39, 0x20, 0x5B, 0x7B, 0x3D]

    func input(_ random: inout SplitMix64) -> [UInt8] {
        var bytes = corpus.isEmpty ? [] : corpus[random.below(corpus.count)]
        for _ in 0...random.below(5) { edit(&bytes, &random) }
        return Array(bytes.prefix(maximumLength))
    }

    private func edit(_ bytes: inout [UInt8], _ random: inout SplitMix64) {
        let position = random.below(bytes.count + 1)
        switch random.below(bytes.isEmpty ? 3 : 9) {
        case 0:
            // Up to eight random bytes.
            bytes.insert(contentsOf: (0...random.below(8)).map { _ in UInt8(truncatingIfNeeded: random.next()) }, at: position)
        case 1:
            bytes.insert(Self.special[random.below(Self.special.count)], at: position)
        case 2:
            if !tokens.isEmpty { bytes.insert(contentsOf: tokens[random.below(tokens.count)], at: position) }
        case 3:
            bytes[random.below(bytes.count)] ^= 1 << UInt8(random.below(8))
        case 4:
            bytes[random.below(bytes.count)] = UInt8(truncatingIfNeeded: random.next())
        case 5:
            let start = random.below(bytes.count)
            bytes.removeSubrange(start..<min(bytes.count, start + 1 + random.below(16)))
        case 6:
            // A piece of the input copied elsewhere in it, as repeated fields are.
            let start = random.below(bytes.count)
            let piece = bytes[start..<min(bytes.count, start + 1 + random.below(64))]
            bytes.insert(contentsOf: piece, at: position)
        case 7:
            // This entry's head on another's tail.
            guard !corpus.isEmpty else { return }
            let other = corpus[random.below(corpus.count)]
            bytes = Array(bytes[..<min(position, bytes.count)] + other[random.below(other.count + 1)...])
        default:
            // A token written over what is there.
            guard !tokens.isEmpty else { return bytes[random.below(bytes.count)] = Self.special[random.below(Self.special.count)] }
            let token = tokens[random.below(tokens.count)]
            let start = min(position, bytes.count)
            bytes.replaceSubrange(start..<min(bytes.count, start + token.count), with: token)
        }
    }
}
