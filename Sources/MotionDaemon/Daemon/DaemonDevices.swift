import TouchInput
import MotionWire

/// What the input side says of the touchscreens, taken as it comes (``TouchInputEvent``),
/// from the input thread or a replay alike: kept in ``DeviceRegistry`` for `devices` and
/// `stats`, counted in the metrics, and heard by every client as `device` events.
extension Daemon {
    /// Takes one event of the input. A frame is processed (``process(_:from:)``); a filter's
    /// notice is for the log, which the caller keeps, and, when it learns a phantom or
    /// begins a storm, for `devices` and health.
    public func input(_ event: TouchInputEvent) {
        assert(mayEnter(), "the daemon was reached without its lock")
        switch event {
        case let .frame(frame, device, readAt):
            process(frame, from: device, readAt: readAt)
        case let .added(device, description, setup):
            touchscreens.devices.add(device, description: description, setup: setup)
            status.deviceAdded(device)
            clients.broadcast(ProtocolLine.device(added: true, node: device.node, name: description.name))
        case let .reconfigured(device, setup):
            touchscreens.devices.reconfigured(node: device.node, setup: setup)
        case let .filtered(device, notice):
            touchscreens.devices.noticed(node: device.node, notice)
        case let .filterCounts(device, counts):
            touchscreens.devices.filtered(node: device.node, counts: counts)
        case let .eventsDropped(device, total):
            touchscreens.devices.dropped(node: device.node, total: total)
        case .removed(let device, _):
            // Its touches went with it, and so does its calibration, if any.
            touchscreens.deviceRemoved(node: device.node)
            touchscreens.devices.remove(node: device.node)
            clients.broadcast(ProtocolLine.device(added: false, node: device.node))
        case let .skipped(node, reason):
            // `devices` lists it with the reason until it is used or goes away, so that a
            // kiosk's operator sees why without reading the log.
            touchscreens.devices.skip(node: node, reason: reason)
        case .skippedRemoved(let node):
            touchscreens.devices.removeSkipped(node: node)
        }
    }
}
