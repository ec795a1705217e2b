import TouchInput

/// What the input side tells the daemon of its touchscreens: kept in ``DeviceRegistry`` for
/// `devices` and `stats`, and heard by every client as `device` events.
extension Daemon {
    /// A touchscreen came; every client hears of it.
    func deviceAdded(node: String, description: DeviceDescription, grabbed: Bool = false, setup: DeviceSetup? = nil) {
        touchscreens.devices.add(node: node, description: description, grabbed: grabbed, setup: setup)
        metrics.deviceAdded(node: node)
        clients.broadcast(ProtocolLine.device(added: true, node: node, name: description.name))
    }

    /// A reload changed where a device's touches land or how they are filtered.
    func deviceReconfigured(node: String, setup: DeviceSetup) {
        touchscreens.devices.reconfigured(node: node, setup: setup)
    }

    /// A device's contact filters acted; `counts` so far.
    func contactsFiltered(node: String, counts: ContactFilters.Counts) {
        touchscreens.devices.filtered(node: node, counts: counts)
    }

    /// A touchscreen went.
    public func deviceRemoved(node: String) {
        touchscreens.deviceRemoved(node: node)
        touchscreens.devices.remove(node: node)
        clients.broadcast(ProtocolLine.device(added: false, node: node))
    }

    /// A touchscreen was found but is not read (not selected, not openable, or described in
    /// a way motiond cannot trust): `devices` lists it with the reason until it is used or
    /// goes away, so that a kiosk's operator sees why without reading the log.
    public func deviceSkipped(node: String, reason: TouchInputHub.SkipReason) {
        touchscreens.devices.skip(node: node, reason: reason)
    }

    /// A touchscreen that was skipped went away.
    public func skippedDeviceRemoved(node: String) {
        touchscreens.devices.removeSkipped(node: node)
    }

    /// The kernel dropped a device's events; `total` so far.
    public func eventsDropped(node: String, total: Int) {
        touchscreens.devices.dropped(node: node, total: total)
    }
}
