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

    @Test("on 300 made-up frames of 1 to 7 contacts within two jump limits of one another, the pairing found leaves as few jumps as any and is the nearest such, or is the firmware's when none leaves fewer jumps than it", .seeded)
    func optimal() {
        var random = TestSeed.generator()
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

    @Test("on 12 made-up frames of exactly 8 contacts, the most paired together, the pairing found is the best of all 40 320", .seeded)
    func optimalAtTheLimit() {
        var random = TestSeed.generator()
        let count = ContactPairing.maximumContacts
        let pairings = Self.everyPairing(count)
        #expect(pairings.count == 40_320)
        var repaired = 0
        for _ in 0..<12 {
            // Each contact's new position near another's last one: the panel exchanged them.
            let last = (0..<count).map { _ in (Double(random.below(4000)) / 1000, Double(random.below(4000)) / 1000) }
            var order = Array(0..<count)
            for index in order.indices.reversed() { order.swapAt(index, random.below(index + 1)) }
            let new = order.map { (last[$0].0 + Double(random.below(100)) / 1000, last[$0].1 + Double(random.below(100)) / 1000) }
            let steps = last.flatMap { from in
                new.map { to in
                    let squared = (from.0 - to.0) * (from.0 - to.0) + (from.1 - to.1) * (from.1 - to.1)
                    return ContactPairing.Step(jumps: squared > 1, squaredDistance: squared)
                }
            }
            let found = ContactPairing(count: count, steps: steps).best()
            var fewest = Int.max, nearest = Double.infinity
            for pairing in pairings {
                let score = Self.score(pairing, steps)
                if score.jumps < fewest || (score.jumps == fewest && score.squaredDistance < nearest) { (fewest, nearest) = score }
            }
            let score = Self.score(found, steps), firmware = Self.score(Array(0..<count), steps)
            #expect(Set(found) == Set(0..<count))
            if fewest < firmware.jumps {
                #expect(score.jumps == fewest && Swift.abs(score.squaredDistance - nearest) < 1e-9, "\(steps)")
                repaired += 1
            } else {
                #expect(found == Array(0..<count), "\(steps)")
            }
        }
        #expect(repaired >= 6, "\(repaired) of 12 re-paired: the frames are meant to be exchanges")
    }

    @Test("a group is the jumped contact and the nearest: all of 8, the 8 nearest of 9 (the farthest left out, whatever its place), never a ninth; those already re-paired are left out; a second exchange drawn in brings its partner")
    func groups() {
        let none = Array(repeating: false, count: 10)
        // Contact 4 alone jumped; the others' nearness to it is their distance along a row.
        let row: (Int, Int) -> Double = { a, b in Double(Swift.abs(a - b)) * 20 }
        let onlyFour: (Int) -> Bool = { $0 == 4 }
        #expect(ContactPairing.group(around: 4, among: 8, excluding: none, jumps: onlyFour, nearness: row) == [4, 3, 5, 2, 6, 1, 7, 0])
        let nine = ContactPairing.group(around: 4, among: 9, excluding: none, jumps: onlyFour, nearness: row)
        #expect(nine.count == ContactPairing.maximumContacts && nine.first == 4 && Set(nine) == Set(0..<9).subtracting([8]), "\(nine)")
        // The farthest first in order is left out as surely as the last.
        let farFirst = ContactPairing.group(around: 4, among: 9, excluding: none, jumps: onlyFour) { a, b in b == 0 ? 1000 : row(a, b) }
        #expect(Set(farFirst) == Set(1..<9), "\(farFirst)")
        var repaired = none
        repaired[3] = true
        repaired[5] = true
        #expect(ContactPairing.group(around: 4, among: 9, excluding: repaired, jumps: onlyFour, nearness: row) == [4, 2, 6, 1, 7, 0, 8])
        #expect(ContactPairing.group(around: 0, among: 1, excluding: [false], jumps: { _ in true }) { _, _ in 0 } == [0])
        // Ten in a row, 0 and 9 exchanged, and 3 and 6: each jumped contact is nearest its partner.
        let partner = [0: 9, 9: 0, 3: 6, 6: 3]
        let two = ContactPairing.group(around: 0, among: 10, excluding: none, jumps: { partner[$0] != nil }) { a, b in partner[a] == b ? 0 : row(a, b) }
        #expect(two == [0, 9, 1, 8, 2, 7, 3, 6], "\(two)")
    }
}
