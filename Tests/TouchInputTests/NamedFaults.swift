import MotionCore
import TouchModel
@testable import TouchInput

/// The contacts the default filters said they acted on, from their notices: what the
/// do-no-harm test (``DoNoHarmTests``) lets them change, and nothing else.
///
/// A notice names its contact by tracking id; a storm names every contact of the flood it
/// counted (the second before it began), down when it began, or landing while the panel was
/// quiet; a flip names the pair it put back; a re-pairing
/// names both contacts it exchanged; a jump names the contact it cancelled and the one it
/// began in its place. A contact held back until it proved itself a finger (a ghost corner,
/// a burst, a phantom's tap due) is named by its late beginning, within the longest hold-back.
struct NamedFaults {
    /// Each named contact (its tracking id with the filters off), and what named it.
    var contacts: [Int32: String] = [:]
    /// The named contacts the filters take away or cut short: all but those put back in
    /// place (a flip, a re-pairing), which keep the finger.
    var removed: Set<Int32> = []
    /// The contacts the defaults report that the device never did (a jump's new contact).
    var born: Set<Int32> = []
    /// The filters that named something, as their counts are called (``countKeys``).
    var filters: Set<String> = []

    /// The filters' names for their counts, as `stats`, `sweep --json` and the phantom
    /// recordings' expected.json call them, with each count.
    static let countKeys: [String: WritableKeyPath<ContactFilters.Counts, Int> & Sendable] = [
        "stuck": \.stuck, "palms": \.palms, "jumps": \.jumps, "repaired": \.repaired, "dead_zone": \.deadZone,
        "phantom_taps": \.phantomTaps, "bursts": \.bursts, "storms": \.storms, "storm_contacts": \.stormContacts,
        "ghosts": \.ghosts, "flips": \.flips,
    ]

    var isEmpty: Bool { contacts.isEmpty && born.isEmpty }

    /// What the defaults' replay (`moments`) named, with the contacts of the replay with every
    /// filter off (`raw`) to find a storm's.
    init(_ moments: [RecordingReplay.ReplayedFrame], raw: [TouchFrame]) {
        let lives = DefaultFiltersKeepFingersTests.lives(raw)
        let rawIDs = Set(lives.map(\.trackingID))
        let filteredLives = DefaultFiltersKeepFingersTests.lives(moments.compactMap(\.frame))
        let keptWhole = Set(filteredLives.filter { $0.endPhase != .cancelled }.map(\.trackingID))
        let calms = moments.flatMap { $0.notices.filter { if case .calm = $0.kind { true } else { false } }.map(\.time) }
        for moment in moments {
            for notice in moment.notices {
                let why = "\(notice.kind.filter) at \(String(format: "%.3f", notice.time)) s"
                switch notice.kind {
                case .phantomTap(_, learned: true):
                    continue  // the touch that taught the filter its phantom: reported, kept
                case .storm:
                    // The flood it counted (the second before it began) and the quiet, which
                    // lasts until the calm is told (or the recording ends). A contact the
                    // defaults still report whole was held back until the quiet ended: named,
                    // not taken away.
                    let calm = calms.first { $0 >= notice.time } ?? .infinity
                    let flood = notice.time - 1
                    for life in lives where life.began >= flood && life.began <= calm {
                        name(life.trackingID, why, removing: !keptWhole.contains(life.trackingID))
                    }
                    for life in lives where life.began < flood && (life.ended ?? .infinity) >= notice.time {
                        name(life.trackingID, why, removing: !keptWhole.contains(life.trackingID))
                    }
                case .calm:
                    continue  // the end of a storm's quiet: it names no contact
                case .flip:
                    name(notice.trackingID, why, removing: false)
                    for contact in moment.frame?.activeContacts ?? [] where contact.trackingID != notice.trackingID {
                        name(contact.trackingID, why, removing: false)
                    }
                case .repaired(let other):
                    name(notice.trackingID, why, removing: false)
                    name(other, why, removing: false)
                case .jump:
                    name(notice.trackingID, why, removing: true)
                    for contact in moment.frame?.contacts ?? [] where contact.phase == .began && !rawIDs.contains(contact.trackingID) {
                        born.insert(contact.trackingID)
                        contacts[contact.trackingID] = why
                    }
                case .stuck, .palm, .markedPalm, .deadZone, .phantomTap, .burst, .ghost:
                    name(notice.trackingID, why, removing: true)
                }
                filters.insert(Self.countKey(notice.kind))
            }
        }
        nameHeldBack(filteredLives, raw: lives)
    }

    /// The longest a filter holds a landing back before it proves itself a finger (a burst's
    /// proof; a ghost corner's and a phantom tap's are shorter): the delay the filters'
    /// documentation allows a real finger.
    static let longestHoldBack = PhantomTouchSettings.burstProof

    /// Names the contacts the defaults began later than the device did, by no more than a
    /// hold-back: held back until they proved themselves fingers, they are the same fingers
    /// begun late, which the check then takes as the defaults show them. A later beginning
    /// than that is left unnamed: harm.
    private mutating func nameHeldBack(_ filtered: [DefaultFiltersKeepFingersTests.Life], raw: [DefaultFiltersKeepFingersTests.Life]) {
        for life in filtered where contacts[life.trackingID] == nil {
            guard let device = raw.first(where: { $0.trackingID == life.trackingID && $0.began <= life.began && life.began <= ($0.ended ?? .infinity) }),
                  life.began > device.began, life.began - device.began <= Self.longestHoldBack + 1e-9 else { continue }
            name(life.trackingID, "held back \(Int(((life.began - device.began) * 1000).rounded())) ms", removing: false)
        }
    }

    private mutating func name(_ id: Int32, _ why: String, removing: Bool) {
        contacts[id] = contacts[id].map { $0.contains(why) ? $0 : $0 + ", " + why } ?? why
        if removing { removed.insert(id) }
    }

    /// The count a notice's filter adds to.
    static func countKey(_ kind: ContactFilters.Notice.Kind) -> String {
        switch kind {
        case .stuck: return "stuck"
        case .palm, .markedPalm: return "palms"
        case .jump: return "jumps"
        case .repaired: return "repaired"
        case .deadZone: return "dead_zone"
        case .phantomTap: return "phantom_taps"
        case .burst: return "bursts"
        case .storm, .calm: return "storms"
        case .ghost: return "ghosts"
        case .flip: return "flips"
        }
    }

    /// Why what the filters named is not a fault the recording holds, one line each: a
    /// filter that named something must be one the recording declares, with the count it
    /// declares (a storm's contacts too), and no contact it takes away may be a finger the
    /// recording declares kept. Empty when all is declared.
    func undeclared(_ declared: DeclaredFaults, counts: ContactFilters.Counts) -> [String] {
        var problems: [String] = []
        var keys = filters
        if keys.contains("storms") { keys.insert("storm_contacts") }
        for key in keys.sorted() {
            let counted = counts[keyPath: Self.countKeys[key]!], expected = declared.counts[key] ?? 0
            if expected == 0 || counted != expected {
                problems.append("\(key): \(counted) counted, and the recording declares \(expected)")
            }
        }
        for id in removed.sorted() where declared.fingers.contains(id) {
            problems.append("contact \(id), a finger the recording declares kept, named: \(contacts[id] ?? "?")")
        }
        return problems
    }

    /// The frames with every filter off (`raw`), but for the named contacts, which are as
    /// the defaults have them (`filtered`): what the defaults must come to if they changed
    /// nothing but what they named.
    func cleaned(raw: [TouchFrame], filtered: [TouchFrame]) -> [TouchFrame] {
        var byTime: [Double: [TouchContact]] = [:]
        var mixed: Set<Double> = []
        for frame in raw {
            byTime[frame.time, default: []] += frame.contacts.filter { contacts[$0.trackingID] == nil }
        }
        for frame in filtered {
            let named = frame.contacts.filter { contacts[$0.trackingID] != nil }
            guard !named.isEmpty else { continue }
            byTime[frame.time, default: []] += named
            mixed.insert(frame.time)
        }
        return byTime.keys.sorted().compactMap { time in
            guard var contacts = byTime[time], !contacts.isEmpty else { return nil }
            if mixed.contains(time) { contacts.sort { $0.slot < $1.slot } }
            return TouchFrame(time: time, contacts: contacts)
        }
    }
}

/// What a recording says of its faults: the filters' counts it must come to (a phantom
/// recording's expected.json; none for a real recording), and the fingers it must keep.
struct DeclaredFaults {
    var counts: [String: Int] = [:]
    var fingers: Set<Int32> = []
}
