import TouchModel

/// The phantom-touch filters at work on the assembler's slots (``PhantomTouchSettings``):
/// where a contact that lands is refused, held back until it proves itself a finger, or let
/// through; a storm's quiet; an infrared frame's flipped pair put back.
///
/// A contact held back (``ContactFilters/Track/State/unproven(since:why:)``) is followed but
/// not reported. It proves itself a finger by what no phantom of its kind does, and then
/// begins where it is; if it lifts first, it was the phantom, and nothing was ever reported:
///
/// | doubt          | why it is held back | it proves itself when | lifting first counts |
/// |----------------|---------------------|-----------------------|----------------------|
/// | `repeatingTap` | it lands where a learned phantom taps, when its tap is due | it outlasts a phantom's touch (a frame or two), or moves | `phantom_taps` |
/// | `burst`        | it lands with others in one frame at an axis's end; or with others, one of them at an axis's end, after the panel was idle a minute (as the display wakes) | it lasts 0.25 s, or moves beyond the tap slop | `bursts` |
/// | `ghost`        | on an infrared frame, it lands at a corner of the rectangle two fingers down span with another at the other corner (a ghost pair); or it was `atCorner` and moved with its corner | it leaves every such corner (once a finger of the pair lifts: `ghostAlone`) | `ghosts` |
/// | `atCorner`     | on an infrared frame, it lands alone at such a corner, or is one of two such corners landing with the second finger | it leaves every such corner, or lasts ``PhantomTouchSettings/ghostProof(frameInterval:)`` (60 ms) without moving with its corner (once a finger of the pair lifts: `ghostAlone`) | `ghosts` |
/// | `ghostAlone`   | a ghost whose pair broke (a finger lifted first) | it lasts 0.1 s more, or moves beyond the tap slop | `ghosts` |
///
/// Refused from landing, never reported: a contact in a dead zone (`dead_zone`), and while
/// the panel is quiet after a storm, every contact (`storm_contacts`).
extension TouchFrameAssembler {
    /// What the frame as a whole says of the contacts that land in it.
    struct LandingContext {
        /// How many contacts land in the frame.
        var landings = 0
        /// Whether the panel sent nothing for ``PhantomTouchSettings/wakeIdle`` before the
        /// frame (or never sent anything since it was opened).
        var idle = false
        /// Whether a contact lands at an axis's end in the frame.
        var landingAtEdge = false
        /// The two contacts down before the frame and still down in it, when exactly two
        /// are: the pair whose ghost corners an infrared frame may report.
        var pair: (SlotContact, SlotContact)?
        /// How many reported contacts were down before the frame and still are.
        var fingersDown = 0
        /// Whether contacts land at both ghost corners of ``pair`` in the frame: a ghost pair.
        var ghostPairLands = false
        /// On an infrared frame with one finger down before the frame and three contacts
        /// landing in it: the slots of the two that lie at the other corners of the
        /// rectangle the finger and the third span (the second finger landing with its
        /// ghosts); -1 when none.
        var ghostSlots: (Int, Int) = (-1, -1)
    }

    /// The frame's context for the landing rules, and the storm's: when landings begin a
    /// storm, every contact down is cancelled into ``shown``.
    mutating func prepareLandings(_ contacts: [SlotContact], at time: Double) -> LandingContext {
        var context = LandingContext()
        let phantoms = filters.resolved.phantoms
        context.idle = filters.lastActive.map { time - $0 >= PhantomTouchSettings.wakeIdle } ?? true
        if !contacts.isEmpty { filters.lastActive = time }
        var first: SlotContact?
        var pairCount = 0
        for contact in contacts {
            if contact.phase == .began {
                context.landings += 1
                if isAtExtreme(contact.x, of: mapper.xAxis) || isAtExtreme(contact.y, of: mapper.yAxis) { context.landingAtEdge = true }
                if filters.storm.landed(at: time, limit: phantoms.stormContacts, quiet: phantoms.stormQuiet) { beginQuiet(at: time) }
            } else if (contact.phase == .moved || contact.phase == .stationary) && slots[contact.slot].track?.state == .live {
                pairCount += 1
                if pairCount == 1 { first = contact } else if pairCount == 2, let first { context.pair = (first, contact) }
            }
        }
        context.fingersDown = pairCount
        if pairCount != 2 { context.pair = nil }
        if filters.resolved.infrared, let (a, b) = context.pair {
            var landed = (false, false)  // at each corner; nothing allocated, every frame
            for contact in contacts where contact.phase == .began {
                switch corner(of: contact, a, b) {
                case 0?: landed.0 = true
                case 1?: landed.1 = true
                default: break
                }
            }
            context.ghostPairLands = landed.0 && landed.1
        }
        if filters.resolved.infrared, pairCount == 1, context.landings == 3, let first {
            context.ghostSlots = ghostsLandingWithSecondFinger(contacts, first: first)
        }
        return context
    }

    /// A storm began at `time`: every contact down is cancelled (or, not yet reported,
    /// dropped) and ignored until it lifts.
    private mutating func beginQuiet(at time: Double) {
        filters.counts.storms += 1
        filters.notices.append(Notice(kind: .storm(contacts: filters.storm.landingsInLastSecond, quiet: filters.resolved.phantoms.stormQuiet),
                                      trackingID: -1, position: Point(x: 0, y: 0), time: time))
        for slot in slots.indices {
            guard let track = slots[slot].track else { continue }
            switch track.state {
            case .live:
                shown.append(ignore(slot, because: nil, at: time))
                filters.counts.stormContacts += 1
            case .landing, .unproven:
                slots[slot].track?.state = .ignored
                filters.counts.stormContacts += 1
            case .ignored:
                continue
            }
        }
    }

    /// What becomes of a contact that lands: refused (its kind of refusal), held back (its
    /// doubt), or nil, let through to the palm test and then reported.
    mutating func landingVerdict(_ contact: SlotContact, _ context: LandingContext, at time: Double) -> LandingVerdict? {
        let phantoms = filters.resolved.phantoms
        if filters.storm.isQuiet(at: time) {
            filters.counts.stormContacts += 1
            return .refused
        }
        if !phantoms.deadZones.isEmpty {
            let pixels = mapper.pixels(x: contact.x, y: contact.y)
            if phantoms.deadZones.contains(where: { $0.contains(pixels) }) {
                filters.counts.deadZone += 1
                filters.notices.append(Notice(kind: .deadZone, trackingID: contact.trackingID, position: pixels, time: time))
                return .refused
            }
        }
        if filters.resolved.infrared {
            if let (a, b) = context.pair, isGhost(contact, of: a, b) { return .doubted(context.ghostPairLands ? .ghost : .atCorner) }
            if contact.slot == context.ghostSlots.0 || contact.slot == context.ghostSlots.1 { return .doubted(.atCorner) }
        }
        if phantoms.repeatingTaps, filters.repeatingTaps.isDue(at: anchorPoint(contact), time: time) { return .doubted(.repeatingTap) }
        if phantoms.wakeBursts {
            let (atEdgeX, atEdgeY) = (isAtExtreme(contact.x, of: mapper.xAxis), isAtExtreme(contact.y, of: mapper.yAxis))
            if context.landings >= 2 && (atEdgeX || atEdgeY || (context.idle && context.landingAtEdge)) { return .doubted(.burst) }
        }
        return nil
    }

    /// What ``landingVerdict(_:_:at:)`` decides.
    enum LandingVerdict {
        case refused
        case doubted(ContactFilters.Track.Doubt)
    }

    /// Follows a contact held back (`since`, `why`) that is still down in this frame: begins
    /// it where it is once it proves itself a finger.
    mutating func followUnproven(_ contact: SlotContact, since: Double, why: ContactFilters.Track.Doubt,
                                 _ context: LandingContext, at time: Double) {
        guard let track = slots[contact.slot].track else { return }
        let moved = anchorPoint(contact).distance(to: track.anchor)
        let proven: Bool
        switch why {
        case .repeatingTap:
            proven = time - since > RepeatingTaps.shortest(frameInterval: filters.interval.median) || moved > filters.repeatingTaps.radius
        case .burst:
            proven = time - since >= PhantomTouchSettings.burstProof || moved > filters.resolved.stuckSlop
        case .ghost:
            guard let (a, b) = context.pair else { return leftAlone(contact, at: time) }
            proven = !isGhost(contact, of: a, b)
        case .atCorner:
            guard let (a, b) = context.pair else {
                if context.fingersDown < 2 { return leftAlone(contact, at: time) }
                proven = time - since >= PhantomTouchSettings.ghostProof(frameInterval: filters.interval.median)
                break
            }
            if isGhost(contact, of: a, b) && moved > filters.repeatingTaps.radius / 2 {
                // It moved with its corner, as only a ghost does: a ghost until it leaves it.
                slots[contact.slot].track?.state = .unproven(since: since, why: .ghost)
                return
            }
            proven = !isGhost(contact, of: a, b) || time - since >= PhantomTouchSettings.ghostProof(frameInterval: filters.interval.median)
        case .ghostAlone:
            proven = time - since >= PhantomTouchSettings.ghostAloneProof || moved > filters.resolved.stuckSlop
        }
        guard proven else { return }
        begin(contact.slot, as: contact, at: time)
    }

    /// A finger of the pair whose corner the contact is at lifted: a ghost goes with it, in
    /// this frame or the next; a contact that stays is held a little more (`ghostAlone`).
    private mutating func leftAlone(_ contact: SlotContact, at time: Double) {
        slots[contact.slot].track?.state = .unproven(since: time, why: .ghostAlone)
        let here = anchorPoint(contact)
        slots[contact.slot].track?.anchor = here
    }

    /// Begins the slot's contact, held back until now, where `contact` puts it.
    private mutating func begin(_ slot: Int, as contact: SlotContact, at time: Double) {
        let id = slots[slot].track?.outputID ?? contact.trackingID
        slots[slot].track = follow(contact, as: id, at: time)
        var began = contact
        began.trackingID = id
        began.phase = .began
        shown.append(began)
    }

    /// Begins the contacts held back by time alone whose wait is over at `time`, where they
    /// were last put (for ``expire(at:)``: a finger held still sends nothing).
    mutating func proveWaiting(at time: Double) {
        for slot in slots.indices {
            guard let track = slots[slot].track, case .unproven(let since, let why) = track.state,
                  let deadline = unprovenDeadline(since: since, why: why), deadline <= time else { continue }
            begin(slot, as: SlotContact(slot: slot, trackingID: track.outputID, phase: .began, x: track.rawX, y: track.rawY), at: time)
        }
    }

    /// When a contact held back since `since` for `why` proves itself by lasting; nil when
    /// lasting proves nothing (a ghost lasts as long as its fingers).
    func unprovenDeadline(since: Double, why: ContactFilters.Track.Doubt) -> Double? {
        switch why {
        case .repeatingTap: return since + RepeatingTaps.shortest(frameInterval: filters.interval.median)
        case .burst: return since + PhantomTouchSettings.burstProof
        case .ghost: return nil
        case .atCorner: return since + PhantomTouchSettings.ghostProof(frameInterval: filters.interval.median)
        case .ghostAlone: return since + PhantomTouchSettings.ghostAloneProof
        }
    }

    /// A contact held back lifted before it proved itself: it was the phantom.
    mutating func liftUnproven(_ track: ContactFilters.Track, why: ContactFilters.Track.Doubt, at time: Double) {
        let pixels = mapper.pixels(x: track.rawX, y: track.rawY)
        switch why {
        case .repeatingTap:
            filters.counts.phantomTaps += 1
            let phantom = filters.repeatingTaps.tapped(at: track.anchor, time: time)
            filters.notices.append(Notice(kind: .phantomTap(period: phantom?.period ?? 0, learned: false), trackingID: track.outputID,
                                          position: pixels, time: time))
        case .burst:
            filters.counts.bursts += 1
            filters.notices.append(Notice(kind: .burst, trackingID: track.outputID, position: pixels, time: time))
        case .ghost, .atCorner, .ghostAlone:
            filters.counts.ghosts += 1
            filters.notices.append(Notice(kind: .ghost, trackingID: track.outputID, position: pixels, time: time))
        }
    }

    /// A contact that was reported lifted: a short one that stayed at its place is
    /// remembered, to learn a repeating phantom from.
    mutating func rememberShortTouch(_ track: ContactFilters.Track, at time: Double) {
        guard filters.resolved.phantoms.repeatingTaps,
              time - track.landTime <= RepeatingTaps.shortest(frameInterval: filters.interval.median),
              track.anchorTime == track.landTime else { return }
        let pixels = mapper.pixels(x: track.rawX, y: track.rawY)
        if let phantom = filters.repeatingTaps.shortTouch(at: track.anchor, pixels: pixels, time: time) {
            filters.notices.append(Notice(kind: .phantomTap(period: phantom.period, learned: true), trackingID: track.outputID,
                                          position: pixels, time: time))
        }
    }

    // MARK: Places

    /// Whether `value` lies at either end of `axis`, within ``PhantomTouchSettings/extremeFraction``.
    private func isAtExtreme(_ value: Int32, of axis: AxisInfo) -> Bool {
        let band = Int64((Double(axis.maximum) - Double(axis.minimum)) * PhantomTouchSettings.extremeFraction)
        return Int64(value) <= Int64(axis.minimum) + band || Int64(value) >= Int64(axis.maximum) - band
    }
}

private typealias Notice = ContactFilters.Notice
