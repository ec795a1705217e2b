/// Which position of a frame each followed contact continues as, for a panel that exchanges
/// contacts' positions within one frame (some infrared and optical frames do: slot A reports
/// where B's finger is, and B where A's is).
///
/// The answer is the pairing of the contacts' last positions with the frame's new ones that
/// leaves the fewest contacts jumping and, among those, the nearest: the least sum of squared
/// distances over the pairs that do not jump, the nearest-neighbour assignment mtdev makes
/// for protocol A panels. The firmware's own pairing (each contact with its own slot) stands
/// unless another leaves fewer contacts jumping: a re-pairing needs evidence.
///
/// The best pairing is built up over the sets of positions: the best way to pair the first
/// k contacts with each set of k positions follows from the best ways for the first k − 1
/// with that set less one position. That is count × 2^count steps whatever the frame
/// (2 048 for 8 contacts), so the contacts paired together are few (``maximumContacts``);
/// ``ContactFilters`` pairs only the contacts near a jump.
struct ContactPairing {
    /// The most contacts paired together: a jumped contact and the seven nearest it and to
    /// the other jumped contacts among them (``group(around:among:excluding:jumps:nearness:)``).
    static let maximumContacts = 8

    /// The contacts to pair around one that jumped: `jumped` itself, then one by one the
    /// contact of `count` nearest any contact of the group that `jumps` (ties to the lower
    /// index), at most ``maximumContacts`` in all; those `excluding` marks are left out.
    /// `nearness(a, b)` is how near contact `b` is to contact `a`, which jumped.
    ///
    /// A group of the nearest, not of contacts chained from neighbour to neighbour: among
    /// fingers in a row each within a jump of the next, a chain holds them all, grows past
    /// what can be paired, and leaves the exchange to be cancelled as jumps. The nearest are
    /// drawn to every jumped contact of the group, not to the first alone: a second exchange
    /// in the same row brings one of its contacts into the group, and without its partner
    /// the pairing would explain its jump by passing the row's ids along from finger to finger.
    static func group(around jumped: Int, among count: Int, excluding: [Bool], jumps: (Int) -> Bool, nearness: (Int, Int) -> Double) -> [Int] {
        var group = [jumped], jumpedInGroup = [jumped]
        var candidates = (0..<count).filter { $0 != jumped && !excluding[$0] }
        while group.count < maximumContacts, !candidates.isEmpty {
            let distances = candidates.map { candidate in jumpedInGroup.map { nearness($0, candidate) }.min()! }
            let nearest = candidates.indices.min { (distances[$0], candidates[$0]) < (distances[$1], candidates[$1]) }!
            let contact = candidates.remove(at: nearest)
            group.append(contact)
            if jumps(contact) { jumpedInGroup.append(contact) }
        }
        return group
    }

    /// One candidate pair: whether the contact would jump to the position, and how far it is
    /// (squared, in the jump limit's unit).
    struct Step: Sendable {
        var jumps: Bool
        var squaredDistance: Double
    }

    /// `count` contacts, `steps[contact * count + position]` from each one's last position to
    /// each new one; contact `i`'s own new position is position `i`.
    let count: Int
    let steps: [Step]

    /// For each contact, the position it continues as: `i` for each `i` (the firmware's
    /// pairing) unless another pairing leaves fewer contacts jumping.
    ///
    /// - Precondition: `count` is at most ``maximumContacts`` and `steps` has `count²` entries.
    func best() -> [Int] {
        precondition(count <= Self.maximumContacts && steps.count == count * count)
        let identity = Array(0..<count)
        let firmware = identity.reduce(Score.zero) { $0 + Score(step($1, $1)) }
        guard firmware.jumps > 0 else { return identity }

        // A set of positions is a bit mask. `best[set]`: the best score pairing the first
        // `set.nonzeroBitCount` contacts with exactly those positions; `last[set]`: the
        // position the last of those contacts takes in it.
        let sets = 1 << count
        var best = Array(repeating: Score(jumps: Int.max, squaredDistance: 0), count: sets)
        var last = Array(repeating: 0, count: sets)
        best[0] = .zero
        for set in 1..<sets {
            let contact = set.nonzeroBitCount - 1
            for position in 0..<count where set & (1 << position) != 0 {
                let score = best[set & ~(1 << position)] + Score(step(contact, position))
                if score < best[set] {
                    best[set] = score
                    last[set] = position
                }
            }
        }
        let all = sets - 1
        guard best[all].jumps < firmware.jumps else { return identity }
        var pairing = identity, set = all
        for contact in (0..<count).reversed() {
            pairing[contact] = last[set]
            set &= ~(1 << last[set])
        }
        return pairing
    }

    private func step(_ contact: Int, _ position: Int) -> Step { steps[contact * count + position] }

    /// How good a pairing, or part of one, is: fewer jumps first, then nearer.
    private struct Score: Comparable {
        var jumps: Int
        var squaredDistance: Double

        static let zero = Score(jumps: 0, squaredDistance: 0)

        init(jumps: Int, squaredDistance: Double) {
            self.jumps = jumps
            self.squaredDistance = squaredDistance
        }

        /// One pair's: a pair that jumps is cancelled whatever its distance, so only the
        /// distances of the pairs kept count.
        init(_ step: Step) {
            self = step.jumps ? Score(jumps: 1, squaredDistance: 0) : Score(jumps: 0, squaredDistance: step.squaredDistance)
        }

        static func + (a: Score, b: Score) -> Score {
            Score(jumps: a.jumps + b.jumps, squaredDistance: a.squaredDistance + b.squaredDistance)
        }

        static func < (a: Score, b: Score) -> Bool {
            a.jumps != b.jumps ? a.jumps < b.jumps : a.squaredDistance < b.squaredDistance
        }
    }
}
