import ArgumentParser
import Glibc
import MotionConfiguration
import MotionCore
import TouchInput
import MotionWire

/// `motionctl sweep DIR`: every recording in a folder through the contact filters, as the
/// daemon would read its device. A packager runs it on a corpus of real panels before a
/// rollout: a device that loses contacts there would lose its users' fingers.
struct SweepCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sweep",
        abstract: "Run every recording in a folder through the contact filters and say which devices would lose contacts.",
        discussion: """
            Reads the evemu (.evemu, .desc, and .events with the .desc its name names) and \
            libinput record (.yml, .yaml) files in the folder and its subfolders, regular \
            files of at most 64 MiB only, each device mapped and filtered as motiond would: with \
            the defaults, or as the configuration's [[device]] entry says. For each, whether \
            motiond accepts it and else the reason; the filters as they apply to it and why \
            any is off; contacts begun as the device sent them and after the filters, those \
            the filters cancelled, and those lost (never reported, or cancelled by a filter \
            where the device lifted them or kept them down); and each filter's count. A \
            last line sums it up. Exits with 0 unless the folder cannot be read (1), or with \
            --fail-on-loss, when a device lost a contact (1).
            """
    )

    @Argument(help: "The folder of recordings.") var folder: String
    @Option(help: "Map and filter each device as this configuration's [[device]] entry does (default: motiond's defaults).")
    var config: String?
    @Flag(help: "One JSON object per line: each recording, then the summary.") var json = false
    @Flag(help: "Exit with 1 when an accepted device lost a contact.") var failOnLoss = false

    func run() throws {
        let configuration = try config.map(loadConfiguration) ?? .builtInDefault
        let recordings: [RecordingSweep.Recording]
        var progress = ProgressLine()
        do {
            recordings = try RecordingSweep.sweep(folder: folder, progress: { progress.show($0) }) { path, device in
                guard let match = configuration.match(.recording(path, description: device)) else {
                    return .notSelected("no [[device]] entry in \(config ?? "the configuration") selects it")
                }
                return .read(match.mapping, match.filters)
            }
        } catch {
            progress.clear()
            fail("motionctl: \(error)")
        }
        progress.clear()
        var summary = Summary()
        for recording in recordings {
            summary.add(recording)
            if json { emit(Self.json(recording).encoded) } else { Self.show(recording) }
        }
        if json { emit(summary.json.encoded) } else { emit(summary.text) }
        if failOnLoss && summary.lost > 0 { throw ExitCode(ExitStatus.refused) }
    }

    /// Where the sweep is, on one line of the terminal that is rewritten as it goes: a corpus
    /// of thousands of recordings, or one large file, takes a while, and silence until the
    /// end looks like a hang. Only when standard error is a terminal, so that logs and pipes
    /// get none of it, and at most ten times a second.
    struct ProgressLine {
        private let shown = isatty(STDERR_FILENO) == 1
        private var shownAt = -Double.infinity
        private var written = false

        mutating func show(_ progress: RecordingSweep.Progress) {
            guard shown else { return }
            let now = monotonicNow()
            guard now - shownAt >= 0.1 else { return }
            shownAt = now
            written = true
            writeStandardError("\r\u{1B}[K" + Self.text(progress, width: Self.terminalWidth()))
        }

        /// Takes the line away, before the results are written.
        mutating func clear() {
            if written { writeStandardError("\r\u{1B}[K") }
            written = false
        }

        /// "sweeping: 12 files read; FILE, 3.2 of 60 MiB", the file's name shortened from
        /// its start to fit `width` columns.
        static func text(_ progress: RecordingSweep.Progress, width: Int) -> String {
            let done = "sweeping: \(progress.filesDone) file\(progress.filesDone == 1 ? "" : "s") read; "
            let amount = progress.bytes >= 1 << 20
                ? ", \(formatted("%.1f", Double(progress.bytesRead) / 1048576)) of \(formatted("%.1f", Double(progress.bytes) / 1048576)) MiB" : ""
            var path = OutsideText.quoted(progress.path)
            let room = width - 1 - done.count - amount.count
            if path.count > room { path = "…" + path.suffix(Swift.max(room - 1, 0)) }
            return done + path + amount
        }

        private static func terminalWidth() -> Int {
            var size = winsize()
            guard ioctl(STDERR_FILENO, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 else { return 80 }
            return Int(size.ws_col)
        }
    }

    /// The whole sweep in numbers.
    struct Summary {
        var recordings = 0, accepted = 0, refused = 0, withoutEvents = 0, lost = 0

        mutating func add(_ recording: RecordingSweep.Recording) {
            recordings += 1
            if recording.failure != nil { refused += 1 }
            for device in recording.devices {
                switch device.verdict {
                case .accepted(let report):
                    accepted += 1
                    if report.lost > 0 { lost += 1 }
                case .withoutEvents: withoutEvents += 1
                case .refused: refused += 1
                }
            }
        }

        var text: String {
            "\(recordings) recording\(recordings == 1 ? "" : "s"): \(accepted) accepted, \(refused) refused, \(withoutEvents) without events; "
                + "\(lost) device\(lost == 1 ? "" : "s") lost contacts"
        }

        var json: JSONValue {
            .object([("summary", .object([
                ("recordings", .integer(Int64(recordings))), ("accepted", .integer(Int64(accepted))), ("refused", .integer(Int64(refused))),
                ("without_events", .integer(Int64(withoutEvents))), ("lost_contacts", .integer(Int64(lost))),
            ]))])
        }
    }

    /// One recording as a block of text: its path, then each device.
    static func show(_ recording: RecordingSweep.Recording) {
        emit(OutsideText.quoted(recording.path))
        if let failure = recording.failure { emit("  refused: \(failure)") }
        for device in recording.devices {
            let name = (device.index.map { "device \($0) " } ?? "") + (device.name.map(OutsideText.quoted) ?? "(no device header)")
            switch device.verdict {
            case .refused(let reason):
                emit("  \(name): refused: \(reason)")
            case .withoutEvents(let filters):
                emit("  \(name): a touchscreen motiond accepts, but no events to replay (a device description)")
                showFilters(filters)
            case .accepted(let report):
                emit("  \(name): accepted" + (report.lost > 0 ? "; LOST \(report.lost) contact\(report.lost == 1 ? "" : "s")" : ""))
                showFilters(report.filters)
                emit("    contacts: \(report.rawContacts) sent by the device, \(report.filteredContacts) after the filters, \(report.cancelled) cancelled by them, \(report.lost) lost")
                let counts = report.counts
                emit("    filtered: stuck \(counts.stuck), palms \(counts.palms), jumps \(counts.jumps), re-paired \(counts.repaired), held \(counts.held), last lifts \(counts.lastLifts)")
                emit("    phantoms: dead zone \(counts.deadZone), phantom taps \(counts.phantomTaps), bursts \(counts.bursts), storms \(counts.storms) (\(counts.stormContacts) contacts), ghosts \(counts.ghosts), flips \(counts.flips)")
            }
        }
    }

    /// The filters as `devices` words them, any setting `devices` has no words for yet as
    /// its JSON, and every note on them.
    private static func showFilters(_ filters: ResolvedContactFilters) {
        let encoded = JSONValue.filters(filters)
        for line in filters.geometry.explanation { emit("    \(line)") }
        if let quirk = filters.quirk { emit("    quirk \(OutsideText.quoted(quirk)) applies") }
        if let words = try? JSONInput(parsing: encoded.encoded[...]) {
            emit("    filters: " + DevicesCommand.describeFilters(words))
        }
        if case .object(let members) = encoded {
            for (key, value) in members where !worded.contains(key) { emit("    \(key): \(value.encoded)") }
        }
        for note in filters.notes { emit("      \(note)") }
    }

    /// The settings `DevicesCommand.describeFilters` words, and the notes, shown apart.
    private static let worded: Set<String> = ["stuck_after", "palm_size", "palm_size_mm", "jump_mm", "jump_px", "hysteresis", "notes", "quirk",
                                              "phantom_taps", "wake_bursts", "storm_contacts", "storm_quiet", "infrared", "dead_zones"]

    /// One recording as a JSON object: `path`, `error` when it could not be read, and
    /// `devices`, each with its `verdict` and, when accepted, `filters` (as `devices` gives
    /// them), `contacts` and `filtered`.
    static func json(_ recording: RecordingSweep.Recording) -> JSONValue {
        var members: [(String, JSONValue)] = [("path", .string(recording.path))]
        if let failure = recording.failure { members.append(("error", .string(failure))) }
        members.append(("devices", .array(recording.devices.map { device in
            var members: [(String, JSONValue)] = [
                ("device", device.index.map { .integer(Int64($0)) } ?? .null),
                ("name", device.name.map { .string($0) } ?? .null),
            ]
            switch device.verdict {
            case .refused(let reason):
                members += [("verdict", "refused"), ("reason", .string(reason))]
            case .withoutEvents(let filters):
                members += [("verdict", "without_events"), ("geometry", .geometry(filters.geometry)), ("filters", .filters(filters))]
            case .accepted(let report):
                members += [
                    ("verdict", "accepted"), ("geometry", .geometry(report.filters.geometry)), ("filters", .filters(report.filters)),
                    ("contacts", .object([
                        ("raw", .integer(Int64(report.rawContacts))), ("filtered", .integer(Int64(report.filteredContacts))),
                        ("cancelled", .integer(Int64(report.cancelled))), ("lost", .integer(Int64(report.lost))),
                    ])),
                    ("filtered", .filtered(report.counts)),
                ]
            }
            return .object(members)
        })))
        return .object(members)
    }
}
