import TouchModel

/// Cleans one device's frames of what no finger does, after ``TouchFrameAssembler`` and
/// before anything reads them: contacts stuck in place, palms, jumps, and jitter.
///
/// Each contact the assembler reports lives here as a ``Track``, in one of two states:
///
/// | state     | event                                          | next      | what the frame says |
/// |-----------|------------------------------------------------|-----------|---------------------|
/// | —         | lands larger than a palm                       | `landing` | nothing             |
/// | —         | lands                                          | `live`    | `began`             |
/// | `landing` | finger-sized within 0.1 s of landing           | `live`    | `began`             |
/// | `landing` | still larger than a palm 0.1 s after landing   | `ignored` | nothing (a palm, ignored from landing) |
/// | `landing` | lifts                                          | —         | nothing (a palm, ignored from landing) |
/// | `live`    | grows larger than a palm                       | `ignored` | `cancelled`         |
/// | `live`    | exchanged with other live contacts: another pairing of the frame leaves fewer jumps | `live`, under the slot its finger is reported in | `moved`, under its own id, kept shown position and stuck anchor |
/// | `live`    | moves farther than `jump_mm` within three of the panel's frames (at least 30 ms) | `live`    | `cancelled`, then `began` under a new id where it landed |
/// | `live`    | within the stuck slop for `stuck_after` s      | `ignored` | `cancelled` (also between frames: ``expire(at:)``) |
/// | `live`    | moves                                          | `live`    | `moved` past the hysteresis margin, else `stationary` |
/// | `live`    | lifts or is cancelled                          | —         | `ended` / `cancelled` |
/// | `ignored` | anything; lifts                                | `ignored`; — | nothing          |
///
/// Some infrared and optical panels exchange two contacts' positions within one frame (slot A
/// reports where B's finger is, and B where A's is): each would be a jump under its slot's
/// identity. Before the contacts are followed one by one, the frame's contacts that were live
/// and neither land nor lift in it are paired with the tracks' last positions as a whole
/// (``ContactPairing``): when another pairing leaves fewer of them jumping, each finger's
/// track moves to the slot its finger is now reported in, and the finger carries on with its
/// id, its shown position and its gestures. Only what no pairing explains is a jump.
///
/// A contact cancelled here ends its gestures as cancelled (no fling, no release velocity),
/// as a palm the kernel reports with `MT_TOOL_PALM` does. Positions are filtered in device
/// units and mapped again, so pixels and millimetres always agree with `device_x/_y`.
public struct ContactFilters {
    /// One contact the filters follow.
    private struct Track {
        /// `landing`: palm-sized so far, within ``ContactFilterSettings/palmVerdictWindow``
        /// of landing at `since`, and not yet reported.
        enum State: Equatable { case live, landing(since: Double), ignored }
        var state: State
        /// The id the frames carry: the firmware's, until a jump gives the contact a new one.
        var outputID: Int32
        /// Where the contact was last reported (device units, after hysteresis).
        var shownX: Int32
        var shownY: Int32
        /// Where the firmware last put it, and when: for jumps.
        var rawX: Int32
        var rawY: Int32
        var rawTime: Double
        /// Where the contact last moved beyond the stuck slop, and when.
        var anchor: Point
        var anchorTime: Double
    }

    /// The thresholds in this device's units; changing them (a reload) keeps the contacts
    /// followed so far.
    public var resolved: ResolvedContactFilters
    /// How often each filter acted.
    public private(set) var counts = Counts()

    /// Device units to pixels, kept equal to the assembler's.
    var mapper: CoordinateMapper
    /// By slot (the assembler's slots are few and dense).
    private var tracks: [Track?]
    private var notices: [Notice] = []
    /// Ids for contacts begun again after a jump, far from the kernel's (which count up from 0).
    private var nextJumpID: Int32 = 1 << 30
    /// The frame being made; its time is the frame's being filtered.
    private var output = TouchFrame(time: 0, contacts: [])
    /// How often the device reports: the jump filter's window is a few of its frames.
    private var interval = FrameInterval()

    /// Filters for a device with `slots` slots, mapped by `mapper`.
    public init(_ resolved: ResolvedContactFilters, mapper: CoordinateMapper, slots: Int) {
        self.resolved = resolved
        self.mapper = mapper
        self.tracks = Array(repeating: nil, count: Swift.max(slots, 1))
        // A jump reports two contacts for one slot: room for that, so frames never grow it.
        self.output.contacts.reserveCapacity(Swift.max(slots, 1) * 2)
    }

    /// Whether any filter is on: when none is, frames pass untouched.
    public var isActive: Bool {
        resolved.stuckAfter != nil || resolved.palmUnits != nil || resolved.jump != nil || resolved.hysteresisMargin != nil
    }

    /// What the filters did since the last call, for the log.
    public mutating func takeNotices() -> [Notice] {
        defer { notices.removeAll(keepingCapacity: true) }
        return notices
    }

    /// When the next contact would be stuck if it stays put, or a palm that landed becomes
    /// one for good, in the frames' clock; nil when none would. A contact that does not move
    /// sends nothing, so only a timer can decide either.
    public var nextDeadline: Double? {
        var next: Double?
        for case let track? in tracks {
            let deadline: Double
            switch track.state {
            case .live:
                guard let stuckAfter = resolved.stuckAfter else { continue }
                deadline = track.anchorTime + stuckAfter
            case .landing(let since):
                deadline = since + ContactFilterSettings.palmVerdictWindow
            case .ignored:
                continue
            }
            next = Swift.min(next ?? deadline, deadline)
        }
        return next
    }

    /// Cancels the contacts that have stayed put until `time`, and takes the palms whose
    /// verdict window has passed for palms: for the stretch between frames. Nil when no
    /// contact is cancelled (a palm's verdict shows in the counts and notices alone).
    public mutating func expire(at time: Double) -> TouchFrame? {
        output.time = time
        output.contacts.removeAll(keepingCapacity: true)
        for slot in tracks.indices {
            guard let track = tracks[slot] else { continue }
            switch track.state {
            case .live:
                guard let stuckAfter = resolved.stuckAfter, track.anchorTime + stuckAfter <= time else { continue }
                output.contacts.append(ignore(slot, because: .stuck, at: time))
            case .landing(let since):
                if since + ContactFilterSettings.palmVerdictWindow <= time { judgePalm(slot, at: time) }
            case .ignored:
                continue
            }
        }
        return output.contacts.isEmpty ? nil : output
    }

    /// The frame with the filters applied; nil when nothing in it is left to report.
    public mutating func filter(_ frame: TouchFrame) -> TouchFrame? {
        interval.frame(at: frame.time)
        output.time = frame.time
        output.contacts.removeAll(keepingCapacity: true)
        let mayJump = repairExchanges(in: frame)
        for contact in frame.contacts {
            guard tracks.indices.contains(contact.slot) else { continue }
            switch contact.phase {
            case .began: land(contact, at: frame.time)
            case .moved, .stationary: move(contact, at: frame.time, mayJump: mayJump)
            case .ended, .cancelled: end(contact)
            }
        }
        return output.contacts.isEmpty ? nil : output
    }

    // MARK: Exchanged positions

    /// Whether a contact of the frame may be another's finger: its slot's contact was live
    /// before this frame and neither lands nor lifts in it.
    private func isExchangeable(_ contact: TouchContact) -> Bool {
        (contact.phase == .moved || contact.phase == .stationary) && tracks.indices.contains(contact.slot)
            && tracks[contact.slot]?.state == .live
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
    private mutating func repairExchanges(in frame: TouchFrame) -> Bool {
        // Most frames have no jump: nothing to pair, and nothing allocated.
        guard frame.contacts.contains(where: { isExchangeable($0) && isJump(tracks[$0.slot]!, to: $0, at: frame.time) }) else { return false }
        let contacts = frame.contacts.filter(isExchangeable)
        let followed = contacts.map { tracks[$0.slot]! }
        var repaired = Array(repeating: false, count: contacts.count)
        for jumped in contacts.indices where !repaired[jumped] && isJump(followed[jumped], to: contacts[jumped], at: frame.time) {
            let group = exchangeGroup(around: jumped, followed, contacts, excluding: repaired, at: frame.time)
            guard group.count > 1 else { continue }
            let steps = group.flatMap { from in
                group.map { to in
                    let distance = jumpDistance(from: followed[from], to: contacts[to]) ?? 0
                    return ContactPairing.Step(jumps: isJump(followed[from], to: contacts[to], at: frame.time), squaredDistance: distance * distance)
                }
            }
            let pairing = ContactPairing(count: group.count, steps: steps).best()
            for (from, to) in zip(group, pairing.map { group[$0] }) where from != to {
                tracks[contacts[to].slot] = followed[from]
                repaired[to] = true
                counts.repaired += 1
                notices.append(Notice(kind: .repaired(inSlotOf: followed[to].outputID), trackingID: followed[from].outputID,
                                      position: contacts[to].position, time: frame.time))
            }
        }
        return true
    }

    /// The contact that jumped, `jumped`, and the contacts nearest it and the other jumped
    /// contacts drawn in, as indices into `contacts`
    /// (``ContactPairing/group(around:among:excluding:jumps:nearness:)``). Nearness is how
    /// close either could come to continuing the other: the jumped contact's track to the
    /// other's new position, or the other's track to the jumped contact's new position.
    private func exchangeGroup(around jumped: Int, _ followed: [Track], _ contacts: [TouchContact], excluding: [Bool], at time: Double) -> [Int] {
        ContactPairing.group(around: jumped, among: contacts.count, excluding: excluding,
                             jumps: { isJump(followed[$0], to: contacts[$0], at: time) }) { jumped, other in
            let there = jumpDistance(from: followed[jumped], to: contacts[other]) ?? .infinity
            let back = jumpDistance(from: followed[other], to: contacts[jumped]) ?? .infinity
            return Swift.min(there, back)
        }
    }

    // MARK: Transitions

    private mutating func land(_ contact: TouchContact, at time: Double) {
        // A slot's old contact that ended in this same frame was reported before this one.
        var track = follow(contact, as: contact.trackingID, at: time)
        if isPalm(contact) {
            // Some firmware reports a landing finger's first size several times too large:
            // the verdict waits for the window (or the lift) before it is a palm's.
            track.state = .landing(since: time)
        } else {
            output.contacts.append(contact)
        }
        tracks[contact.slot] = track
    }

    /// Follows a contact that was down before; `mayJump` false when no contact of the frame
    /// jumps (``repairExchanges(in:)`` looked).
    private mutating func move(_ contact: TouchContact, at time: Double, mayJump: Bool) {
        guard var track = tracks[contact.slot] else {
            // Not seen landing (a contact down when the filters were made): follow it from here.
            tracks[contact.slot] = follow(contact, as: contact.trackingID, at: time)
            output.contacts.append(contact)
            return
        }
        if case .landing(let since) = track.state {
            if !isPalm(contact) {
                // Finger-sized within the window: a finger, begun where it is now.
                tracks[contact.slot] = follow(contact, as: contact.trackingID, at: time)
                var began = contact
                began.phase = .began
                output.contacts.append(began)
            } else if since + ContactFilterSettings.palmVerdictWindow <= time {
                judgePalm(contact.slot, at: time)
            }
            return
        }
        guard track.state == .live else { return }
        if isPalm(contact) {
            output.contacts.append(ignore(contact.slot, because: .palm(fromLanding: false), at: time))
            return
        }
        if mayJump && isJump(track, to: contact, at: time) {
            output.contacts.append(shown(track, contact, phase: .cancelled))
            counts.jumps += 1
            notices.append(Notice(kind: .jump, trackingID: track.outputID, position: contact.position, time: time))
            track = follow(contact, as: freshID(), at: time)
            tracks[contact.slot] = track
            output.contacts.append(shown(track, contact, phase: .began))
            return
        }
        track.rawX = contact.deviceX
        track.rawY = contact.deviceY
        track.rawTime = time
        let (x, y) = hysteresis(contact.deviceX, contact.deviceY, center: (track.shownX, track.shownY))
        let moved = x != track.shownX || y != track.shownY
        if !moved && contact.phase == .moved { counts.held += 1 }
        track.shownX = x
        track.shownY = y
        if let stuckAfter = resolved.stuckAfter {
            let point = anchorPoint(contact)
            if point.distance(to: track.anchor) > resolved.stuckSlop {
                track.anchor = point
                track.anchorTime = time
            } else if track.anchorTime + stuckAfter <= time {
                tracks[contact.slot] = track
                output.contacts.append(ignore(contact.slot, because: .stuck, at: time))
                return
            }
        }
        tracks[contact.slot] = track
        output.contacts.append(shown(track, contact, phase: moved ? .moved : .stationary))
    }

    private mutating func end(_ contact: TouchContact) {
        guard let track = tracks[contact.slot] else {
            // Never seen (filters switched on mid-contact): pass it on as it is.
            output.contacts.append(contact)
            return
        }
        if case .landing = track.state { judgePalm(contact.slot, at: output.time) }
        tracks[contact.slot] = nil
        guard track.state == .live else { return }
        // A lift lands where the contact was shown unless it moved beyond the margin.
        var ended = track
        (ended.shownX, ended.shownY) = hysteresis(contact.deviceX, contact.deviceY, center: (track.shownX, track.shownY))
        output.contacts.append(shown(ended, contact, phase: contact.phase))
    }

    /// A contact followed from here, shown where the device puts it, under `id`.
    private func follow(_ contact: TouchContact, as id: Int32, at time: Double) -> Track {
        Track(state: .live, outputID: id, shownX: contact.deviceX, shownY: contact.deviceY,
              rawX: contact.deviceX, rawY: contact.deviceY, rawTime: time, anchor: anchorPoint(contact), anchorTime: time)
    }

    /// A contact palm-sized since it landed is a palm: ignored until it lifts, never reported.
    private mutating func judgePalm(_ slot: Int, at time: Double) {
        guard var track = tracks[slot] else { return }
        track.state = .ignored
        tracks[slot] = track
        counts.palms += 1
        notices.append(Notice(kind: .palm(fromLanding: true), trackingID: track.outputID, position: mapper.pixels(x: track.rawX, y: track.rawY), time: time))
    }

    /// Cancels the slot's contact and ignores it until it lifts; returns the cancelling contact.
    private mutating func ignore(_ slot: Int, because kind: Notice.Kind, at time: Double) -> TouchContact {
        var track = tracks[slot]!
        track.state = .ignored
        tracks[slot] = track
        let position = mapper.pixels(x: track.shownX, y: track.shownY)
        switch kind {
        case .stuck: counts.stuck += 1
        case .palm: counts.palms += 1
        case .jump: counts.jumps += 1
        case .repaired: break  // never here: a re-paired contact carries on
        }
        notices.append(Notice(kind: kind, trackingID: track.outputID, position: position, time: time))
        return TouchContact(
            slot: slot, trackingID: track.outputID, phase: .cancelled, deviceX: track.shownX, deviceY: track.shownY,
            position: position, millimetres: mapper.millimetres(x: track.shownX, y: track.shownY))
    }

    // MARK: Tests

    private func isPalm(_ contact: TouchContact) -> Bool {
        guard let limit = resolved.palmUnits, let major = contact.touchMajor else { return false }
        return major > limit
    }

    /// Whether the contact, continuing `track`, jumped: moved farther than the jump limit
    /// within the jump window (``ContactFilterSettings/jumpWindow(frameInterval:)``); over a
    /// gap longer than ``ContactFilterSettings/jumpWindow``, farther than the limit per that
    /// time, so that a slow panel's fast finger is not a jump.
    private func isJump(_ track: Track, to contact: TouchContact, at time: Double) -> Bool {
        let gap = time - track.rawTime
        return gap <= ContactFilterSettings.jumpWindow(frameInterval: interval.median)
            && jumpDistanceExceeded(from: track, to: contact, scale: Swift.max(1, gap / ContactFilterSettings.jumpWindow))
    }

    /// Whether the contact is farther than `scale` times the jump limit from where the
    /// firmware last put `track`; false when the filter is off or the distance unknown.
    private func jumpDistanceExceeded(from track: Track, to contact: TouchContact, scale: Double) -> Bool {
        guard let limit = resolved.jump, let distance = jumpDistance(from: track, to: contact) else { return false }
        switch limit {
        case .millimetres(let limit), .pixels(let limit): return distance > limit * scale
        }
    }

    /// How far the contact is from where the firmware last put `track`, in the jump limit's
    /// unit (millimetres on a panel whose size is believed, else screen pixels); nil when
    /// that is unknown.
    private func jumpDistance(from track: Track, to contact: TouchContact) -> Double? {
        switch resolved.jump {
        case .millimetres?:
            guard let from = mapper.millimetres(x: track.rawX, y: track.rawY), let to = contact.millimetres else { return nil }
            return from.distance(to: to)
        case .pixels?:
            return mapper.pixels(x: track.rawX, y: track.rawY).distance(to: contact.position)
        case nil:
            return nil
        }
    }

    /// Where a contact is, for the stuck slop: millimetres where the device has them.
    private func anchorPoint(_ contact: TouchContact) -> Point {
        resolved.stuckSlopIsPhysical ? contact.millimetres ?? contact.position : contact.position
    }

    /// Hysteresis: a position within the margin's ellipse around the last one shown stays
    /// where it was; beyond it, the shown position follows the finger at the ellipse's edge,
    /// so it never lags more than the margin behind.
    private func hysteresis(_ x: Int32, _ y: Int32, center: (Int32, Int32)) -> (Int32, Int32) {
        guard let margin = resolved.hysteresisMargin else { return (x, y) }
        let dx = Double(x) - Double(center.0), dy = Double(y) - Double(center.1)
        // How far out the point is, in units of the ellipse: below 1, inside it.
        let (mx, my) = (Double(margin.x), Double(margin.y))
        let scale = ((dx * dx) / (mx * mx) + (dy * dy) / (my * my)).squareRoot()
        guard scale > 1 else { return center }
        // The ellipse's edge along the same direction is at 1/scale of the way out: between
        // the centre and the device's position, so within Int32 whatever the firmware sent
        // (computed in Double: an Int32 step across the whole range would overflow).
        let keep = 1 - 1 / scale
        return (Int32((Double(center.0) + dx * keep).rounded()), Int32((Double(center.1) + dy * keep).rounded()))
    }

    /// The contact as shown: its id and filtered position, mapped again.
    private func shown(_ track: Track, _ contact: TouchContact, phase: TouchPhase) -> TouchContact {
        var shown = contact
        shown.trackingID = track.outputID
        shown.phase = phase
        if shown.deviceX != track.shownX || shown.deviceY != track.shownY {
            shown.deviceX = track.shownX
            shown.deviceY = track.shownY
            shown.position = mapper.pixels(x: track.shownX, y: track.shownY)
            shown.millimetres = mapper.millimetres(x: track.shownX, y: track.shownY)
        }
        return shown
    }

    private mutating func freshID() -> Int32 {
        let inUse = Set(tracks.compactMap { $0?.outputID })
        repeat {
            nextJumpID = nextJumpID == Int32.max ? 1 << 30 : nextJumpID + 1
        } while inUse.contains(nextJumpID)
        return nextJumpID
    }
}
