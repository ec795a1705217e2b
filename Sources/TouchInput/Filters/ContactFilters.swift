import TouchModel

/// Cleans one device's frames of what no finger does, after ``TouchFrameAssembler`` and
/// before anything reads them: contacts stuck in place, palms, jumps, jitter, and the
/// touches no finger made (``PhantomTouchSettings``).
///
/// The filters follow each contact the assembler reports as a ``Track``, kept in the record
/// of the slot it is reported in (``Slot/track``), in one of three states:
///
/// | state     | event                                          | next      | what the frame says |
/// |-----------|------------------------------------------------|-----------|---------------------|
/// | —         | lands in a dead zone                           | `ignored` | nothing |
/// | —         | lands larger than a palm                       | `landing` | nothing             |
/// | —         | lands in doubt: a phantom's tap due there, a burst, a ghost, a flood or a storm's quiet (``PhantomTouches``) | `unproven` | nothing |
/// | —         | lands                                          | `live`    | `began`             |
/// | `unproven`| proves itself a finger (its doubt's rule)      | `live`    | `began`, where it is |
/// | `unproven`| lifts                                          | —         | nothing (a phantom) |
/// | `landing` | finger-sized within 0.1 s of landing           | `live`    | `began`             |
/// | `landing` | still larger than a palm 0.1 s after landing   | `ignored` | nothing (a palm, ignored from landing) |
/// | `landing` | lifts                                          | —         | nothing (a palm, ignored from landing) |
/// | `live`    | grows larger than a palm                       | `ignored` | `cancelled`         |
/// | `live`    | exchanged with other live contacts: another pairing of the frame leaves fewer jumps | `live`, under the slot its finger is reported in | `moved`, under its own id, kept shown position and stuck anchor |
/// | `live`    | moves farther than `jump_mm` within three of the panel's frames (at least 30 ms) | `live`    | `cancelled`, then `began` under a new id where it landed |
/// | `live`    | within the stuck slop for `stuck_after` s      | `ignored` | `cancelled` (also between frames: ``expire(at:)``) |
/// | `live`    | moves                                          | `live`    | `moved` past the hysteresis margin, else `stationary` |
/// | `live`    | a storm begins (more flood contacts a second than the limit, ``TouchStorm``) | `ignored` | `cancelled` |
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
/// units, and the frame maps what the filters show once, so pixels and millimetres always
/// agree with `device_x/_y`.
///
/// This type holds what is the device's rather than a contact's: the settings, their
/// resolution in the device's units, the counts and the notices. The filtering itself works
/// on the assembler's slots (the extension of ``TouchFrameAssembler`` below).
public struct ContactFilters {
    /// One contact the filters follow, in its slot's record.
    struct Track {
        /// `landing`: palm-sized so far, within ``ContactFilterSettings/palmVerdictWindow``
        /// of landing at `since`, and not yet reported.
        enum State: Equatable { case live, landing(since: Double), unproven(since: Double, why: Doubt), ignored }
        /// Why a contact is held back until it proves itself a finger (``PhantomTouches``).
        enum Doubt: Equatable { case repeatingTap, burst, ghost, atCorner, ghostAlone, storm }
        var state: State
        /// The id the frames carry: the firmware's, until a jump gives the contact a new one.
        var outputID: Int32
        /// Where the contact was last reported (device units, after hysteresis): the
        /// hysteresis centre.
        var shownX: Int32
        var shownY: Int32
        /// Where the firmware last put it, and when: for jumps.
        var rawX: Int32
        var rawY: Int32
        var rawTime: Double
        /// Where the contact last moved beyond the stuck slop (in the slop's unit), and when.
        var anchor: Point
        var anchorTime: Double
        /// When it landed: a touch that lifts a frame or two later may be a phantom's tap.
        var landTime: Double
        /// How fast the firmware's position moved over its last step, in device units a
        /// second: where an infrared frame's finger is expected next (``unflipped(_:_:at:)``).
        var velocityX = 0.0
        var velocityY = 0.0
    }

    /// The settings as the configuration and its quirks give them: kept to resolve them
    /// again when the mapping changes.
    public private(set) var settings: ContactFilterSettings
    /// The thresholds in this device's units; changing them (a reload) keeps the contacts
    /// followed so far.
    public private(set) var resolved: ResolvedContactFilters
    /// How often each filter acted, since the device was opened.
    public internal(set) var counts = Counts() {
        didSet { countsChanged = true }
    }
    /// Whether `counts` changed since the last ``takeReport()``.
    private var countsChanged = false
    var notices: [Notice] = []
    /// Ids for contacts begun again after a jump, far from the kernel's (which count up from 0).
    fileprivate var nextJumpID: Int32 = 1 << 30
    /// How often the device reports: the jump filter's window is a few of its frames.
    var interval = FrameInterval()
    /// The phantoms that tap this panel, learned from its short touches.
    var repeatingTaps: RepeatingTaps
    /// The panel's recent landings and flood contacts, and the quiet a storm makes.
    var storm = TouchStorm()
    /// When the panel last reported a contact; nil before it ever did.
    var lastActive: Double?
    /// Since when an infrared frame's pair has been put back in every frame; nil when the
    /// last frame was taken as it came.
    var flippedSince: Double?

    /// The filters `settings` make of a device described by `device` and mapped by `mapping`.
    init(_ settings: ContactFilterSettings, device: DeviceDescription, mapping: OutputMapping) {
        self.settings = settings
        self.resolved = ResolvedContactFilters(settings, device: device, mapping: mapping)
        repeatingTaps = RepeatingTaps(unit: resolved.unit)
    }

    /// Applies new settings or a new mapping (a reload, a calibration); the contacts followed
    /// so far stay followed.
    mutating func configure(_ settings: ContactFilterSettings, device: DeviceDescription, mapping: OutputMapping) {
        self.settings = settings
        resolved = ResolvedContactFilters(settings, device: device, mapping: mapping)
        // What was learned in one unit means nothing in another.
        if repeatingTaps.radius != RepeatingTaps.radius[resolved.unit] {
            repeatingTaps = RepeatingTaps(unit: resolved.unit)
        }
    }

    /// Whether any filter is on: when none is, frames pass untouched.
    public var isActive: Bool {
        resolved.stuckAfter != nil || resolved.palmUnits != nil || resolved.jump != nil || resolved.hysteresisMargin != nil
            || resolved.phantoms.isActive(isInfrared: resolved.infrared)
    }

    /// What the filters did since the last call: what the log hears once, and the counts
    /// when they changed, so that the metrics hear only news.
    mutating func takeReport() -> Report {
        let report = Report(notices: notices, counts: countsChanged ? counts : nil)
        // Most frames notice nothing: the empty list is left as it is rather than replaced.
        if !notices.isEmpty { notices.removeAll(keepingCapacity: true) }
        countsChanged = false
        return report
    }
}

private typealias Track = ContactFilters.Track
private typealias Notice = ContactFilters.Notice

/// The contact filters at work on the assembler's slots: each contact's state is its slot's,
/// in device units, and the frame maps what they show once (``mapped(_:at:)``).
extension TouchFrameAssembler {
    /// When the next contact would be stuck if it stays put, or a palm that landed becomes
    /// one for good, in the frames' clock; nil when none would. A contact that does not move
    /// sends nothing, so only a timer can decide either; a reader that waits for input wakes
    /// then and calls ``expire(at:)``.
    public var nextDeadline: Double? {
        var next: Double?
        for slot in slots {
            guard let track = slot.track else { continue }
            let deadline: Double
            switch track.state {
            case .live:
                guard let stuckAfter = filters.resolved.stuckAfter else { continue }
                deadline = track.anchorTime + stuckAfter
            case .landing(let since):
                deadline = since + ContactFilterSettings.palmVerdictWindow
            case .unproven(let since, let why):
                guard let proof = unprovenDeadline(since: since, why: why) else { continue }
                deadline = proof
            case .ignored:
                continue
            }
            next = Swift.min(next ?? deadline, deadline)
        }
        // Asked before every event a replay reads and every poll: nothing allocated.
        guard let calm = stormCalmDeadline else { return next }
        return Swift.min(next ?? calm, calm)
    }

    /// Cancels the contacts that have stayed put until `time`, and takes the palms whose
    /// verdict window has passed for palms: for the stretch between frames. Nil when no
    /// contact is cancelled (a palm's verdict shows in the counts and notices alone).
    public mutating func expire(at time: Double) -> TouchFrame? {
        shown.removeAll(keepingCapacity: true)
        for slot in slots.indices {
            guard let track = slots[slot].track else { continue }
            switch track.state {
            case .live:
                guard let stuckAfter = filters.resolved.stuckAfter, track.anchorTime + stuckAfter <= time else { continue }
                shown.append(ignore(slot, because: .stuck, at: time))
            case .landing(let since):
                if since + ContactFilterSettings.palmVerdictWindow <= time { judgePalm(slot, at: time) }
            case .unproven, .ignored:
                continue
            }
        }
        proveWaiting(at: time)
        return mapped(shown, at: time)
    }

    /// Decides the earliest deadline before `time` (and not after `latest`), as ``expire(at:)``
    /// at that deadline: what it cancelled (nil if nothing) and when; nil when no deadline is
    /// due. Called until nil before each event, by a replay and by a live device alike, so a
    /// deadline is decided before the events that come after it however late they are read:
    /// a reader that fell behind would otherwise take a held-back contact's lift before the
    /// wait that proved it a finger, and count a finger as a phantom.
    public mutating func expireDue(before time: Double, notAfter latest: Double = .infinity) -> (frame: TouchFrame?, at: Double)? {
        guard let deadline = nextDeadline, deadline < time, deadline <= latest else { return nil }
        return (expire(at: deadline), deadline)
    }

    /// Applies the filters to the frame's `contacts`, at `time`, into ``shown``.
    mutating func filter(_ reported: [SlotContact], at time: Double) {
        filters.interval.frame(at: time)
        shown.removeAll(keepingCapacity: true)
        let context = prepareLandings(reported, at: time)
        let contacts = unflipped(reported, context, at: time) ?? reported
        let mayJump = repairExchanges(in: contacts, at: time)
        for contact in contacts {
            switch contact.phase {
            case .began: land(contact, context, at: time)
            case .moved, .stationary: move(contact, context, at: time, mayJump: mayJump)
            case .ended, .cancelled: end(contact, at: time)
            }
        }
    }

    // MARK: Transitions

    private mutating func land(_ contact: SlotContact, _ context: LandingContext, at time: Double) {
        // A slot's old contact that ended in this same frame was reported before this one.
        var track = follow(contact, as: contact.trackingID, at: time)
        let verdict = landingVerdict(contact, context, at: time)
        if case .refused = verdict {
            track.state = .ignored
        } else if isPalm(contact) {
            // Some firmware reports a landing finger's first size several times too large:
            // the verdict waits for the window (or the lift) before it is a palm's.
            track.state = .landing(since: time)
        } else if case .doubted(let why) = verdict {
            track.state = .unproven(since: time, why: why)
        } else {
            shown.append(contact)
        }
        slots[contact.slot].track = track
    }

    /// Follows a contact that was down before; `mayJump` false when no contact of the frame
    /// jumps (``repairExchanges(in:at:)`` looked).
    private mutating func move(_ contact: SlotContact, _ context: LandingContext, at time: Double, mayJump: Bool) {
        guard var track = slots[contact.slot].track else {
            // Not seen landing (a contact down when the filters were made): follow it from here.
            slots[contact.slot].track = follow(contact, as: contact.trackingID, at: time)
            shown.append(contact)
            return
        }
        switch track.state {
        case .landing(let since):
            followLanding(contact, since: since, at: time)
            return
        case .unproven(let since, let why):
            slots[contact.slot].track?.rawX = contact.x
            slots[contact.slot].track?.rawY = contact.y
            followUnproven(contact, since: since, why: why, context, at: time)
            return
        case .ignored:
            return
        case .live:
            break
        }
        if isPalm(contact) {
            shown.append(ignore(contact.slot, because: .palm(fromLanding: false), at: time))
            return
        }
        if mayJump && isJump(track, to: contact, at: time) {
            shown.append(showing(track, contact, phase: .cancelled))
            filters.counts.jumps += 1
            filters.notices.append(Notice(kind: .jump, trackingID: track.outputID, position: mapper.pixels(x: contact.x, y: contact.y), time: time))
            track = follow(contact, as: freshID(), at: time)
            slots[contact.slot].track = track
            shown.append(showing(track, contact, phase: .began))
            return
        }
        let step = time - track.rawTime
        let isStep = step > 0 && step <= ContactFilterSettings.jumpWindow(frameInterval: filters.interval.median)
        track.velocityX = isStep ? (Double(contact.x) - Double(track.rawX)) / step : 0
        track.velocityY = isStep ? (Double(contact.y) - Double(track.rawY)) / step : 0
        track.rawX = contact.x
        track.rawY = contact.y
        track.rawTime = time
        let (x, y) = hysteresis(contact.x, contact.y, center: (track.shownX, track.shownY))
        let moved = x != track.shownX || y != track.shownY
        if !moved && contact.phase == .moved { filters.counts.held += 1 }
        track.shownX = x
        track.shownY = y
        if let stuckAfter = filters.resolved.stuckAfter {
            let point = anchorPoint(contact)
            if point.distance(to: track.anchor) > filters.resolved.stuckSlop.value {
                track.anchor = point
                track.anchorTime = time
            } else if track.anchorTime + stuckAfter <= time {
                slots[contact.slot].track = track
                shown.append(ignore(contact.slot, because: .stuck, at: time))
                return
            }
        }
        slots[contact.slot].track = track
        shown.append(showing(track, contact, phase: moved ? .moved : .stationary))
    }

    /// Follows a contact palm-sized since it landed at `since`, not yet reported.
    private mutating func followLanding(_ contact: SlotContact, since: Double, at time: Double) {
        if !isPalm(contact) {
            // Finger-sized within the window: a finger, begun where it is now.
            slots[contact.slot].track = follow(contact, as: contact.trackingID, at: time)
            var began = contact
            began.phase = .began
            shown.append(began)
        } else if since + ContactFilterSettings.palmVerdictWindow <= time {
            judgePalm(contact.slot, at: time)
        }
    }

    private mutating func end(_ contact: SlotContact, at time: Double) {
        guard let track = slots[contact.slot].track else {
            // Never seen (filters switched on mid-contact): pass it on as it is.
            shown.append(contact)
            return
        }
        if case .landing = track.state { judgePalm(contact.slot, at: time) }
        slots[contact.slot].track = nil
        if case .unproven(_, let why) = track.state { liftUnproven(track, why: why, at: time) }
        guard track.state == .live else { return }
        if contact.phase == .ended { rememberShortTouch(track, at: time) }
        // A lift lands where the contact was shown unless it moved beyond the margin.
        var ended = track
        (ended.shownX, ended.shownY) = hysteresis(contact.x, contact.y, center: (track.shownX, track.shownY))
        shown.append(showing(ended, contact, phase: contact.phase))
    }

    /// A contact followed from here, shown where the device puts it, under `id`.
    func follow(_ contact: SlotContact, as id: Int32, at time: Double) -> ContactFilters.Track {
        Track(state: .live, outputID: id, shownX: contact.x, shownY: contact.y,
              rawX: contact.x, rawY: contact.y, rawTime: time, anchor: anchorPoint(contact), anchorTime: time, landTime: time)
    }

    /// A contact palm-sized since it landed is a palm: ignored until it lifts, never reported.
    private mutating func judgePalm(_ slot: Int, at time: Double) {
        guard var track = slots[slot].track else { return }
        track.state = .ignored
        slots[slot].track = track
        filters.counts.palms += 1
        filters.notices.append(Notice(kind: .palm(fromLanding: true), trackingID: track.outputID, position: mapper.pixels(x: track.rawX, y: track.rawY), time: time))
    }

    /// Cancels the slot's contact and ignores it until it lifts; returns the cancelling contact.
    /// `kind` is counted and noticed; nil when the caller counts (a storm's quiet).
    mutating func ignore(_ slot: Int, because kind: ContactFilters.Notice.Kind?, at time: Double) -> SlotContact {
        var track = slots[slot].track!
        track.state = .ignored
        slots[slot].track = track
        let position = mapper.pixels(x: track.shownX, y: track.shownY)
        switch kind {
        case .stuck?: filters.counts.stuck += 1
        case .palm?: filters.counts.palms += 1
        case .jump?: filters.counts.jumps += 1
        default: break  // never here: each of the others is counted where it acts
        }
        if let kind { filters.notices.append(Notice(kind: kind, trackingID: track.outputID, position: position, time: time)) }
        return SlotContact(slot: slot, trackingID: track.outputID, phase: .cancelled, x: track.shownX, y: track.shownY, measured: false)
    }

    // MARK: Tests

    private func isPalm(_ contact: SlotContact) -> Bool {
        guard let limit = filters.resolved.palmUnits, let major = contact.touchMajor else { return false }
        return major > limit
    }

    /// Whether the contact, continuing `track`, jumped: moved farther than the jump limit
    /// within the jump window (``ContactFilterSettings/jumpWindow(frameInterval:)``); over a
    /// gap longer than ``ContactFilterSettings/jumpWindow``, farther than the limit per that
    /// time, so that a slow panel's fast finger is not a jump.
    func isJump(_ track: ContactFilters.Track, to contact: SlotContact, at time: Double) -> Bool {
        let gap = time - track.rawTime
        return gap <= ContactFilterSettings.jumpWindow(frameInterval: filters.interval.median)
            && jumpDistanceExceeded(from: track, to: contact, scale: Swift.max(1, gap / ContactFilterSettings.jumpWindow))
    }

    /// Whether the contact is farther than `scale` times the jump limit from where the
    /// firmware last put `track`; false when the filter is off or the distance unknown.
    private func jumpDistanceExceeded(from track: Track, to contact: SlotContact, scale: Double) -> Bool {
        guard let limit = filters.resolved.jump, let distance = jumpDistance(from: track, to: contact) else { return false }
        return distance > limit.value * scale
    }

    /// How far the contact is from where the firmware last put `track`, in the jump limit's
    /// unit (millimetres on a panel whose size is believed, else screen pixels); nil when
    /// that is unknown.
    func jumpDistance(from track: ContactFilters.Track, to contact: SlotContact) -> Double? {
        switch filters.resolved.jump?.unit {
        case .millimetres?:
            guard let from = mapper.millimetres(x: track.rawX, y: track.rawY), let to = mapper.millimetres(x: contact.x, y: contact.y) else { return nil }
            return from.distance(to: to)
        case .pixels?:
            return mapper.pixels(x: track.rawX, y: track.rawY).distance(to: mapper.pixels(x: contact.x, y: contact.y))
        case nil:
            return nil
        }
    }

    /// Where a contact is, for the stuck slop: millimetres where the device has them.
    func anchorPoint(_ contact: SlotContact) -> Point { anchorPoint(x: contact.x, y: contact.y) }

    /// Where a position is in the stuck slop's unit.
    func anchorPoint(x: Int32, y: Int32) -> Point {
        if filters.resolved.unit.isPhysical, let millimetres = mapper.millimetres(x: x, y: y) { return millimetres }
        return mapper.pixels(x: x, y: y)
    }

    /// Hysteresis: a position within the margin's ellipse around the last one shown stays
    /// where it was; beyond it, the shown position follows the finger at the ellipse's edge,
    /// so it never lags more than the margin behind.
    private func hysteresis(_ x: Int32, _ y: Int32, center: (Int32, Int32)) -> (Int32, Int32) {
        guard let margin = filters.resolved.hysteresisMargin else { return (x, y) }
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

    /// The contact as `track` shows it: under its id, at its filtered position.
    private func showing(_ track: Track, _ contact: SlotContact, phase: TouchPhase) -> SlotContact {
        var shown = contact
        shown.trackingID = track.outputID
        shown.phase = phase
        shown.x = track.shownX
        shown.y = track.shownY
        return shown
    }

    private mutating func freshID() -> Int32 {
        let inUse = Set(slots.compactMap { $0.track?.outputID })
        repeat {
            filters.nextJumpID = filters.nextJumpID == Int32.max ? 1 << 30 : filters.nextJumpID + 1
        } while inUse.contains(filters.nextJumpID)
        return filters.nextJumpID
    }
}
