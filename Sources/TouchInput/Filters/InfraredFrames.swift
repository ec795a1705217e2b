import TouchModel

/// What an infrared or optical frame gets wrong about two fingers (``InfraredFrame``): two
/// crossing sets of beams place them at two corners of a rectangle, and the frame may report
/// the other two corners too (ghosts, held back by ``PhantomTouches``), or in their place (a
/// flip, put back here).
///
/// A ghost flip is told from fingers that cross by where the fingers were going: each
/// finger's track is carried on at its last velocity, and the frame is put back only when
/// the flipped pair lies nearer those places than the pair as reported, by more than twice
/// the phantom radius, and nearer where they were too. Fingers that cross (turning around
/// each other, at any speed) are where their motion takes them, so their crossing is never
/// a flip; fingers that stop short at the crossing are where they were. A flip lasts a frame
/// or two: put-backs in a row end after ``PhantomTouchSettings/flipLongest(frameInterval:)``,
/// and the frame is believed.
extension TouchFrameAssembler {
    /// Which ghost corner of the rectangle `a` and `b` span `contact` lies at, within the
    /// phantom radius: 0 for (a.x, b.y), 1 for (b.x, a.y); nil for neither.
    func corner(of contact: SlotContact, _ a: SlotContact, _ b: SlotContact) -> Int? {
        let here = anchorPoint(contact)
        let radius = filters.repeatingTaps.radius
        if here.distance(to: anchorPoint(x: a.x, y: b.y)) <= radius { return 0 }
        if here.distance(to: anchorPoint(x: b.x, y: a.y)) <= radius { return 1 }
        return nil
    }

    /// Whether `contact` lies at a corner of the rectangle `a` and `b` span that is neither
    /// of theirs: (a.x, b.y) or (b.x, a.y), within the phantom radius.
    func isGhost(_ contact: SlotContact, of a: SlotContact, _ b: SlotContact) -> Bool {
        corner(of: contact, a, b) != nil
    }

    /// The slots of the two landing contacts that lie at the other corners of the rectangle
    /// `first` (down before) and the third landing contact span; (-1, -1) when no landing
    /// contact makes the other two its ghosts.
    func ghostsLandingWithSecondFinger(_ contacts: [SlotContact], first: SlotContact) -> (Int, Int) {
        for second in contacts where second.phase == .began {
            var found: (Int, Int) = (-1, -1)
            for other in contacts where other.phase == .began && other.slot != second.slot && isGhost(other, of: first, second) {
                if found.0 < 0 { found.0 = other.slot } else { found.1 = other.slot }
            }
            if found.1 >= 0 { return found }
        }
        return (-1, -1)
    }

    /// On an infrared frame with exactly two fingers down before and in the frame: when the
    /// frame reports them at their ghost corners (each keeps one coordinate and takes the
    /// other's), the pair put back, nearer by more than twice the phantom radius than the
    /// frame as reported or exchanged both to where the fingers were going and to where they
    /// were; nil otherwise (nearly every frame, the first after a finger of the pair began,
    /// and once put-backs in a row have lasted their longest).
    mutating func unflipped(_ contacts: [SlotContact], _ context: LandingContext, at time: Double) -> [SlotContact]? {
        // Until each finger has moved once where it is followed, where it is going is unknown.
        guard filters.resolved.infrared, let (p, q) = context.pair,
              let trackA = slots[p.slot].track, let trackB = slots[q.slot].track,
              trackA.rawTime > trackA.landTime, trackB.rawTime > trackB.landTime else {
            filters.flippedSince = nil
            return nil
        }
        // Where the fingers were going, and where they were: a flip explains the frame better
        // than the pair as reported against both (a crossing is explained by the first, a
        // pair that stops short by the second).
        let going = (expected(trackA, at: time), expected(trackB, at: time))
        let were = (anchorPoint(x: trackA.rawX, y: trackA.rawY), anchorPoint(x: trackB.rawX, y: trackB.rawY))
        // Each finger keeps its x and takes the other's y, or keeps its y and takes the other's x.
        let (keepX, keepY) = (((p.x, q.y), (q.x, p.y)), ((q.x, p.y), (p.x, q.y)))
        let best = cost(keepX, going) <= cost(keepY, going) ? keepX : keepY
        guard explainsBetter(best, than: ((p.x, p.y), (q.x, q.y)), going), explainsBetter(best, than: ((p.x, p.y), (q.x, q.y)), were) else {
            filters.flippedSince = nil
            return nil
        }
        let since = filters.flippedSince ?? time
        guard time - since < PhantomTouchSettings.flipLongest(frameInterval: filters.interval.median) else {
            // No flip lasts this long: the frame is believed, from where it puts the fingers.
            believe(p, at: time)
            believe(q, at: time)
            filters.flippedSince = nil
            return nil
        }
        filters.flippedSince = since
        filters.counts.flips += 1
        filters.notices.append(ContactFilters.Notice(kind: .flip, trackingID: trackA.outputID, position: mapper.pixels(x: p.x, y: p.y), time: time))
        return contacts.map { contact in
            var put = contact
            if contact.slot == p.slot { (put.x, put.y) = best.0 } else if contact.slot == q.slot { (put.x, put.y) = best.1 }
            return put
        }
    }

    /// How far the two places of `pair` are from `fingers` (the stuck slop's unit), in all.
    private func cost(_ pair: ((Int32, Int32), (Int32, Int32)), _ fingers: (Point, Point)) -> Double {
        anchorPoint(x: pair.0.0, y: pair.0.1).distance(to: fingers.0) + anchorPoint(x: pair.1.0, y: pair.1.1).distance(to: fingers.1)
    }

    /// Whether the flipped pair lies nearer `fingers` than the pair as reported, and than the
    /// two exchanged (each finger reported in the other's slot: the jump filter's to re-pair),
    /// by more than twice the phantom radius.
    private func explainsBetter(_ flipped: ((Int32, Int32), (Int32, Int32)), than reported: ((Int32, Int32), (Int32, Int32)),
                                _ fingers: (Point, Point)) -> Bool {
        let plain = Swift.min(cost(reported, fingers), cost((reported.1, reported.0), fingers))
        return cost(flipped, fingers) < plain - 2 * filters.repeatingTaps.radius
    }

    /// Where the track's finger is expected at `time` (in the stuck slop's unit): where the
    /// firmware last put it, carried on at its last velocity for at most the jump window.
    private func expected(_ track: ContactFilters.Track, at time: Double) -> Point {
        let window = ContactFilterSettings.jumpWindow(frameInterval: filters.interval.median)
        let gap = Swift.min(Swift.max(0, time - track.rawTime), window)
        func ahead(_ value: Int32, _ velocity: Double) -> Int32 {
            Int32(clamping: Int64((Double(value) + velocity * gap).rounded()))
        }
        return anchorPoint(x: ahead(track.rawX, track.velocityX), y: ahead(track.rawY, track.velocityY))
    }

    /// Takes the contact's position as the firmware gives it, after put-backs that went on
    /// too long: no jump from where it was put back, and no velocity from the step.
    private mutating func believe(_ contact: SlotContact, at time: Double) {
        guard var track = slots[contact.slot].track else { return }
        (track.rawX, track.rawY, track.rawTime) = (contact.x, contact.y, time)
        (track.velocityX, track.velocityY) = (0, 0)
        slots[contact.slot].track = track
    }
}
