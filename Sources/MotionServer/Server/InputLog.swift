import Logging
import MotionConfiguration
import TouchInput
import TouchModel

/// What the daemon's log says of the input's events, the same for a touchscreen and a
/// replay: a device used (where its touches land, and what its size is believed to be),
/// skipped, gone, or dropping events, and each filter's decision. Frames and counts are not
/// logged; `stats`, `devices` and the metrics have them.
enum InputLog {
    static func write(_ event: TouchInputEvent, to logger: Logger) {
        switch event {
        case .frame, .reconfigured, .filterCounts, .skippedRemoved:
            return
        case let .added(device, description, setup):
            logger.info("using \(device.node) (\(OutsideText.quoted(description.name))), output \(DeviceText.rectangle(setup.output))\(setup.grabbed ? ", grabbed: nothing else receives its events" : "")")
            for line in setup.filters.geometry.explanation + setup.filters.notes { logger.info("\(device.node): \(line)") }
        case let .filtered(device, notice):
            logger.notice("\(device.node): \(notice.text)")
        case .removed(let device, why: .unplugged):
            logger.warning("\(device.node) went away; its touches were cancelled")
        case .removed(let device, why: .deselected):
            logger.info("stopped reading \(device.node), which the configuration no longer selects; its touches were cancelled")
        case .removed(let device, why: .stopped):
            logger.info("stopped reading \(device.node): motiond is stopping")
        case let .skipped(node, reason):
            logger.info("not using \(node): \(reason.description)")
        case let .eventsDropped(device, total):
            logger.warning("the kernel dropped events from \(device.node) (\(total) times); resynced")
        }
    }
}
