import SeededRandom
import Testing
@testable import TouchInput

/// ``ContactPairing`` against every pairing tried in turn.
@Suite("Contact pairing")
struct ContactPairingTests {
    /// Every pairing of `count` contacts (`count`! of them), each as position by contact.
    static func everyPairing(_ count: Int) -> [[Int]] {
        guard count > 0 else { return [[]] }
        return everyPairing(count - 1).flatMap { shorter in
            (0...shorter.count).map { place in
                var longer = shorter
                longer.insert(count - 1, at: place)
                return longer
            }
        }
    }

    /// A pairing's jumps, and the squared distances of the pairs that do not jump.
    static func score(_ pairing: [Int], _ steps: [ContactPairing.Step]) -> (jumps: Int, squaredDistance: Double) {
        var jumps = 0, squaredDistance = 0.0
        for (contact, position) in pairing.enumerated() {
            let step = steps[contact * pairing.count + position]
            if step.jumps { jumps += 1 } else { squaredDistance += step.squaredDistance }
        }
        return (jumps, squaredDistance)
    }

    @Test("on 300 made-up frames of 1 to 7 contacts within two jump limits of one another, the pairing found leaves as few jumps as any and is the nearest such, or is the firmware's when none leaves fewer jumps than it")
    func optimal() {
        var random = SplitMix64(seed: 35)
        var repaired = 0
        let pairings = (0...7).map(Self.everyPairing)
        for _ in 0..<300 {
            // Up to 7: every one of 8 contacts' 40 320 pairings, tried in turn, takes the test seconds.
            let count = 1 + random.below(7)
            // Last positions and new ones in a square two jump limits (of 1) wide.
            let point = { (random: inout SplitMix64) in (Double(random.below(2000)) / 1000, Double(random.below(2000)) / 1000) }
            let last = (0..<count).map { _ in point(&random) }, new = (0..<count).map { _ in point(&random) }
            let steps = last.flatMap { from in
                new.map { to in
                    let squared = (from.0 - to.0) * (from.0 - to.0) + (from.1 - to.1) * (from.1 - to.1)
                    return ContactPairing.Step(jumps: squared > 1, squaredDistance: squared)
                }
            }
            let found = ContactPairing(count: count, steps: steps).best()
            var fewest = Int.max, nearest = Double.infinity
            for pairing in pairings[count] {
                let score = Self.score(pairing, steps)
                if score.jumps < fewest || (score.jumps == fewest && score.squaredDistance < nearest) { (fewest, nearest) = score }
            }
            let firmware = Self.score(Array(0..<count), steps)
            if fewest < firmware.jumps {
                let score = Self.score(found, steps)
                #expect(score.jumps == fewest && Swift.abs(score.squaredDistance - nearest) < 1e-9, "\(steps)")
                #expect(Set(found) == Set(0..<count))
                repaired += 1
            } else {
                #expect(found == Array(0..<count), "\(steps)")
            }
        }
        // Both outcomes must come often, or the loop checks little.
        #expect(repaired > 50 && repaired < 250, "\(repaired) of 300 re-paired")
    }
}
