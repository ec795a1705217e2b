import TouchModel

/// Contacts whose positions the panel exchanged within one frame (some infrared and optical
/// panels report slot A where B's finger is, and B where A's is): paired with their tracks as
/// a whole before the filters follow them one by one (``ContactFilters``, ``ContactPairing``).
extension TouchFrameAssembler {
    /// Whether a contact of the frame may be another's finger: its slot's contact was live
    /// before this frame and neither lands nor lifts in it.
    private func isExchangeable(_ contact: SlotContact) -> Bool {
        (contact.phase == .moved || contact.phase == .stationary) && slots[contact.slot].track?.state == .live
    }

    /// Moves the tracks of contacts whose positions the panel exchanged to the slots their
    /// fingers are reported in, before the contacts are followed one by one: a pairing is a
    /// matter of the whole frame.
    ///
    /// Only contacts near a jump are paired: each contact that jumps under its slot's
    /// identity with its nearest neighbours (``exchangeGroup(around:_:_:excluding:at:)``), at
    /// most ``ContactPairing/maximumContacts`` in all. A contact re-paired in one group is
    /// in no later one.
    ///
    /// Returns whether any contact jumps under its slot's identity; when none does, no
    /// contact of the frame can jump.
    mutating func repairExchanges(in frame: [SlotContact], at time: Double) -> Bool {
        // Most frames have no jump: nothing to pair, and nothing allocated.
        guard frame.contains(where: { isExchangeable($0) && isJump(slots[$0.slot].track!, to: $0, at: time) }) else { return false }
        let contacts = frame.filter(isExchangeable)
        let followed = contacts.map { slots[$0.slot].track! }
        var repaired = Array(repeating: false, count: contacts.count)
        for jumped in contacts.indices where !repaired[jumped] && isJump(followed[jumped], to: contacts[jumped], at: time) {
            let group = exchangeGroup(around: jumped, followed, contacts, excluding: repaired, at: time)
            guard group.count > 1 else { continue }
            let steps = group.flatMap { from in
                group.map { to in
                    let distance = jumpDistance(from: followed[from], to: contacts[to]) ?? 0
                    return ContactPairing.Step(jumps: isJump(followed[from], to: contacts[to], at: time), squaredDistance: distance * distance)
                }
            }
            let pairing = ContactPairing(count: group.count, steps: steps).best()
            for (from, to) in zip(group, pairing.map { group[$0] }) where from != to {
                slots[contacts[to].slot].track = followed[from]
                repaired[to] = true
                filters.counts.repaired += 1
                filters.notices.append(Notice(kind: .repaired(inSlotOf: followed[to].outputID), trackingID: followed[from].outputID,
                                      position: mapper.pixels(x: contacts[to].x, y: contacts[to].y), time: time))
            }
        }
        return true
    }

    /// The contact that jumped, `jumped`, and the contacts nearest it and the other jumped
    /// contacts drawn in, as indices into `contacts`
    /// (``ContactPairing/group(around:among:excluding:jumps:nearness:)``). Nearness is how
    /// close either could come to continuing the other: the jumped contact's track to the
    /// other's new position, or the other's track to the jumped contact's new position.
    private func exchangeGroup(around jumped: Int, _ followed: [Track], _ contacts: [SlotContact], excluding: [Bool], at time: Double) -> [Int] {
        ContactPairing.group(around: jumped, among: contacts.count, excluding: excluding,
                             jumps: { isJump(followed[$0], to: contacts[$0], at: time) }) { jumped, other in
            let there = jumpDistance(from: followed[jumped], to: contacts[other]) ?? .infinity
            let back = jumpDistance(from: followed[other], to: contacts[jumped]) ?? .infinity
            return Swift.min(there, back)
        }
    }
}

private typealias Track = ContactFilters.Track
private typealias Notice = ContactFilters.Notice
