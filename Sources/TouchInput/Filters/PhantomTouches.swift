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
/// | `repeatingTap` | it lands where a learned phantom taps, when its tap is due | it outlasts a phantom's touch (25 ms), or moves 2 mm | `phantom_taps` |
/// | `burst`        | it lands at an axis's end with another there in one frame, or with two others; or, after the panel was idle a minute (as the display wakes), with two others, one of them at an axis's end | it lasts 0.25 s, or moves beyond the tap slop | `bursts` |
/// | `ghost`        | on an infrared frame, it lands at a corner of the rectangle two fingers down span with another at the other corner (a ghost pair); or it was `atCorner` and moved with its corner | it leaves every such corner (once a finger of the pair lifts: `ghostAlone`) | `ghosts` |
/// | `atCorner`     | on an infrared frame, it lands alone at such a corner, or is one of two such corners landing with the second finger | it leaves every such corner, or lasts ``PhantomTouchSettings/ghostProof(frameInterval:)`` (60 ms) without moving with its corner (once a finger of the pair lifts: `ghostAlone`) | `ghosts` |
/// | `ghostAlone`   | a ghost whose pair broke (a finger lifted first) | it lasts 0.1 s more, or moves beyond the tap slop | `ghosts` |
/// | `storm`        | the panel floods contacts that lift within 70 ms (``TouchStorm``), or is quiet after a storm | it lasts 70 ms, or moves beyond the tap slop, once the quiet is over | `storm_contacts` |
///
/// Refused from landing, never reported: a contact in a dead zone (`dead_zone`).
extension TouchFrameAssembler {
    /// What the frame as a whole says of the contacts that land in it.
    struct LandingContext {
        /// How many contacts land in the frame.
        var landings = 0
        /// Whether the panel sent nothing for ``PhantomTouchSettings/wakeIdle`` before the
        /// frame (or never sent anything since it was opened).
        var idle = false
        /// How many contacts land at an axis's end in the frame.
        var landingsAtEdge = 0
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

    /// The frame's context for the landing rules, and the storm's: the frame's flood
    /// contacts lift before its contacts land, and when they begin a storm, every contact
    /// down is cancelled into ``shown``.
    mutating func prepareLandings(_ contacts: [SlotContact], at time: Double) -> LandingContext {
        var context = LandingContext()
        context.idle = filters.lastActive.map { time - $0 >= PhantomTouchSettings.wakeIdle } ?? true
        if !contacts.isEmpty { filters.lastActive = time }
        noticeCalm(at: time)
        countFloods(contacts, at: time)
        var first: SlotContact?
        var pairCount = 0
        for contact in contacts {
            if contact.phase == .began {
                context.landings += 1
                if isAtEdge(contact) { context.landingsAtEdge += 1 }
                filters.storm.landed(at: time)
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

    /// Tells the storm of the frame's contacts that lift as a flood's do: within
    /// ``TouchStorm/floodTouch`` of landing, where they landed, reported or held back as a
    /// flood's (a burst's contacts, a phantom's tap, a ghost or a palm have their own rules,
    /// and hold nothing back). A storm they begin makes the panel quiet.
    private mutating func countFloods(_ contacts: [SlotContact], at time: Double) {
        let phantoms = filters.resolved.phantoms
        guard phantoms.stormContacts > 0 else { return }
        for contact in contacts where contact.phase == .ended || contact.phase == .cancelled {
            guard let track = slots[contact.slot].track, track.state == .live || track.state.isHeldAsFlood,
                  time - track.landTime <= TouchStorm.floodTouch, track.anchorTime == track.landTime else { continue }
            let apart = TouchStorm.apart[filters.resolved.unit]
            if filters.storm.shortContact(at: time, place: track.anchor, apart: apart, limit: phantoms.stormContacts, calm: phantoms.stormQuiet) {
                beginQuiet(at: time)
            }
        }
    }

    /// Tells that a storm's quiet is over, once, when `time` is past its end (for a frame,
    /// and ``proveWaiting(at:)`` at ``stormCalmDeadline``).
    mutating func noticeCalm(at time: Double) {
        let calm = filters.resolved.phantoms.stormQuiet
        guard let end = filters.storm.calmed(at: time, calm: calm) else { return }
        filters.notices.append(Notice(kind: .calm(after: calm), trackingID: -1, position: Point(x: 0, y: 0), time: end))
    }

    /// When a storm's quiet ends if the flood has stopped: nil when none is to be told over.
    var stormCalmDeadline: Double? { filters.storm.pendingCalm(calm: filters.resolved.phantoms.stormQuiet) }

    /// A storm began at `time`: every contact down is cancelled and ignored until it lifts;
    /// one not yet reported is held back until the quiet is over, a palm's ignored.
    private mutating func beginQuiet(at time: Double) {
        filters.counts.storms += 1
        filters.notices.append(Notice(kind: .storm(contacts: filters.storm.floodsInLastSecond, quiet: filters.resolved.phantoms.stormQuiet),
                                      trackingID: -1, position: Point(x: 0, y: 0), time: time))
        for slot in slots.indices {
            guard let track = slots[slot].track else { continue }
            switch track.state {
            case .live:
                shown.append(ignore(slot, because: nil, at: time))
                filters.counts.stormContacts += 1
            case .landing:
                slots[slot].track?.state = .ignored
                filters.counts.stormContacts += 1
            case .unproven:
                // Counted when it lifts unproven.
                slots[slot].track?.state = .unproven(since: time, why: .storm)
            case .ignored:
                continue
            }
        }
    }

    /// What becomes of a contact that lands: refused (its kind of refusal), held back (its
    /// doubt), or nil, let through to the palm test and then reported.
    mutating func landingVerdict(_ contact: SlotContact, _ context: LandingContext, at time: Double) -> LandingVerdict? {
        let phantoms = filters.resolved.phantoms
        if phantoms.stormContacts > 0, filters.storm.holds(at: time, calm: phantoms.stormQuiet) { return .doubted(.storm) }
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
            // Two fingers tapping together, one of them at the edge, are a hand: a burst is
            // two at the edges, or three or more with one at the edge.
            let atEdge = isAtEdge(contact)
            if (atEdge && context.landingsAtEdge >= 2) || (context.landings >= 3 && (atEdge || (context.idle && context.landingsAtEdge > 0))) {
                return .doubted(.burst)
            }
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
            proven = time - since > RepeatingTaps.longestTouch || moved > filters.repeatingTaps.radius
        case .burst:
            proven = time - since >= PhantomTouchSettings.burstProof || moved > filters.resolved.stuckSlop.value
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
            proven = time - since >= PhantomTouchSettings.ghostAloneProof || moved > filters.resolved.stuckSlop.value
        case .storm:
            let quiet = stormQuietEnd
            proven = time >= stormProof(since: since) || (time >= quiet && moved > filters.resolved.stuckSlop.value)
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

    /// Begins the slot's contact, held back until now, where `contact` puts it. It keeps
    /// when it landed: a touch held back that lifts soon after is no short touch (a phantom's
    /// tap, a flood's contact).
    private mutating func begin(_ slot: Int, as contact: SlotContact, at time: Double) {
        let id = slots[slot].track?.outputID ?? contact.trackingID
        let landed = slots[slot].track?.landTime ?? time
        slots[slot].track = follow(contact, as: id, at: time)
        slots[slot].track?.landTime = landed
        var began = contact
        began.trackingID = id
        began.phase = .began
        shown.append(began)
    }

    /// Begins the contacts held back by time alone whose wait is over at `time`, where they
    /// were last put, and tells of a storm's quiet that is over (for ``expire(at:)``: a
    /// finger held still sends nothing, and a panel whose flood stopped nothing at all).
    mutating func proveWaiting(at time: Double) {
        noticeCalm(at: time)
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
        case .repeatingTap: return since + RepeatingTaps.longestTouch
        case .burst: return since + PhantomTouchSettings.burstProof
        case .ghost: return nil
        case .atCorner: return since + PhantomTouchSettings.ghostProof(frameInterval: filters.interval.median)
        case .ghostAlone: return since + PhantomTouchSettings.ghostAloneProof
        case .storm: return stormProof(since: since)
        }
    }

    /// When the latest storm's quiet ends (or ended); -infinity before any storm.
    private var stormQuietEnd: Double { filters.storm.quietEnd(calm: filters.resolved.phantoms.stormQuiet) ?? -.infinity }

    /// When a contact held back by a storm since `since` proves itself by lasting: it outlasts
    /// a flood's contact, counted from the quiet's end when it landed before it (judged as
    /// landing then).
    private func stormProof(since: Double) -> Double { Swift.max(since, stormQuietEnd) + TouchStorm.floodTouch }

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
        case .storm:
            // A flood's contact: the storm's notice tells of them all.
            filters.counts.stormContacts += 1
        }
    }

    /// A contact that was reported lifted: a short one that stayed at its place is
    /// remembered, to learn a repeating phantom from.
    mutating func rememberShortTouch(_ track: ContactFilters.Track, at time: Double) {
        guard filters.resolved.phantoms.repeatingTaps,
              time - track.landTime <= RepeatingTaps.longestTouch,
              track.anchorTime == track.landTime else { return }
        let pixels = mapper.pixels(x: track.rawX, y: track.rawY)
        if let phantom = filters.repeatingTaps.shortTouch(at: track.anchor, pixels: pixels, time: time) {
            filters.notices.append(Notice(kind: .phantomTap(period: phantom.period, learned: true), trackingID: track.outputID,
                                          position: pixels, time: time))
        }
    }

    // MARK: Places

    /// Whether the contact lies at either end of an axis.
    private func isAtEdge(_ contact: SlotContact) -> Bool {
        let perMillimetre = filters.resolved.unit.isPhysical ? mapper.unitsPerMillimetre : nil
        return isAtExtreme(contact.x, of: mapper.xAxis, unitsPerMillimetre: perMillimetre?.x)
            || isAtExtreme(contact.y, of: mapper.yAxis, unitsPerMillimetre: perMillimetre?.y)
    }

    /// Whether `value` lies at either end of `axis`: within ``PhantomTouchSettings/edgeMillimetres``
    /// where the panel's size is believed, else within ``PhantomTouchSettings/extremeFraction``.
    private func isAtExtreme(_ value: Int32, of axis: AxisInfo, unitsPerMillimetre: Double?) -> Bool {
        let span = Double(axis.maximum) - Double(axis.minimum)
        let band = Int64(unitsPerMillimetre.map { $0 * PhantomTouchSettings.edgeMillimetres } ?? span * PhantomTouchSettings.extremeFraction)
        return Int64(value) <= Int64(axis.minimum) + band || Int64(value) >= Int64(axis.maximum) - band
    }
}

private typealias Notice = ContactFilters.Notice

extension ContactFilters.Track.State {
    /// Whether the contact is held back as a flood's (``TouchStorm``).
    var isHeldAsFlood: Bool {
        if case .unproven(_, .storm) = self { return true }
        return false
    }
}
