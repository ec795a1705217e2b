import Glibc
import Logging
import MotionConfiguration
import TouchInput
import TouchModel
import MotionWire
import MotionDaemon

/// What the daemon's log says of the input's events, the same for a touchscreen and a
/// replay: a device used (where its touches land, and what its size is believed to be),
/// skipped, gone, or dropping events, and each filter's decision. Frames and counts are not
/// logged; `stats`, `devices` and the metrics have them.
///
/// Jumps and re-pairings come from firmware, not from people, and a glitching panel makes
/// them on every frame for every contact (60 contacts, 6,000 lines a second): each device's
/// are logged at most ``noticeLimit`` times in 10 s per kind, enough for every contact of a
/// few exchanges, and the first line after a pause says how many were not. Stuck contacts
/// and palms come once per contact and are all logged.
struct InputLog {
    let logger: Logger
    /// The monotonic clock, or a test's.
    let now: () -> Double
    /// Lines of one kind of notice one device may have in 10 s.
    static let noticeLimit = 10
    /// Jump and re-pair notices, by device node and kind.
    private var limits: [NoticeSource: LogRateLimit] = [:]

    private struct NoticeSource: Hashable {
        var node: String
        /// The filter (``ContactFilters/Notice/Kind/filter``): one limit for all its notices.
        var filter: String
    }

    init(logger: Logger, clock: @escaping () -> Double = monotonicNow) {
        self.logger = logger
        self.now = clock
    }

    /// What the log calls one notice of `kind`'s filter, in "N more …s".
    private static func noun(_ kind: ContactFilters.Notice.Kind) -> String {
        switch kind {
        case .repaired: return "re-pairing"
        case .deadZone: return "dead-zone touch"
        case .phantomTap: return "phantom tap"
        case .flip: return "flip"
        default: return kind.filter
        }
    }

    mutating func write(_ event: TouchInputEvent) {
        switch event {
        case .frame, .reconfigured, .filterCounts, .skippedRemoved:
            return
        case let .added(device, description, setup):
            logger.info("using \(device.node) (\(OutsideText.quoted(description.name))), output \(DeviceText.rectangle(setup.output))\(setup.grabbed ? ", grabbed: nothing else receives its events" : "")")
            for line in setup.filters.geometry.explanation + setup.filters.notes { logger.info("\(device.node): \(line)") }
        case let .filtered(device, notice):
            switch notice.kind {
            case .stuck, .palm, .markedPalm, .storm, .calm, .phantomTap(_, learned: true):
                logger.notice("\(device.node): \(notice.text)")
            case .jump, .repaired, .deadZone, .phantomTap, .burst, .ghost, .flip:
                let source = NoticeSource(node: device.node, filter: notice.kind.filter)
                guard let count = limits[source, default: LogRateLimit(interval: 10, burst: Self.noticeLimit)].record(at: now()) else { return }
                let held = count - 1, what = Self.noun(notice.kind)
                let unlogged = held > 0 ? " (and \(held) more \(what)\(held == 1 ? "" : "s") on this device since the last such line, not logged)" : ""
                logger.notice("\(device.node): \(notice.text)\(unlogged)")
            }
        case let .removed(device, why):
            // A node number comes back with the next device: its limits are not that one's.
            limits = limits.filter { $0.key.node != device.node }
            switch why {
            case .unplugged:
                logger.warning("\(device.node) went away; its touches were cancelled")
            case .failed(let errno):
                logger.warning("\(device.node) could not be read (\(String(cString: strerror(errno)))), so motiond let it go; its touches were cancelled")
            case .deselected:
                logger.info("stopped reading \(device.node), which the configuration no longer selects; its touches were cancelled")
            case .stopped:
                logger.info("stopped reading \(device.node): motiond is stopping")
            }
        case let .skipped(node, reason):
            logger.info("not using \(node): \(reason.description)")
        case let .eventsDropped(device, total):
            logger.warning("the kernel dropped events from \(device.node) (\(total) times); resynced")
        }
    }
}

/// Where a reading thread's batches go (the input thread's, the replay's): the daemon, and
/// the log as the input's words them (``InputLog``, which keeps its rate limits between
/// batches). Only touched under the daemon's lock (``InputQueue``).
final class InputTarget {
    let daemon: Daemon
    var log: InputLog

    init(daemon: Daemon, log: InputLog) {
        self.daemon = daemon
        self.log = log
    }

    /// A batch an ``InputQueue`` hands over, from the input thread or a replay alike: the
    /// frames it left out counted, then each event to the daemon and, after it, to the log.
    ///
    /// A frame, which the log has no words for, goes straight to ``Daemon/process(_:from:readAt:)``
    /// with its parts taken from where it lies in the batch: handing the daemon the whole event
    /// copied it out of the batch first (the enum's value witness, a switch over all its cases)
    /// and destroyed the copy after, twice: some 600 instructions and 40 lines of code a frame.
    func take(_ batch: [TouchInputEvent], coalesced: Int) {
        daemon.framesCoalesced(coalesced)
        let events = batch.span
        for index in events.indices {
            if case let .frame(frame, device, readAt) = events[index] {
                daemon.process(frame, from: device, readAt: readAt)
            } else {
                daemon.input(events[index])
                log.write(events[index])
            }
        }
    }
}
