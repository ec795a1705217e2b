import MotionCore
import TouchInput

/// What the configuration makes of one touchscreen: the `[[device]]` entry that takes it,
/// with a quirk's keys and a `[[calibration]]`'s matrix applied, how that maps and filters
/// the device, and which rules picked them.
///
/// Every reader of a device asks ``Configuration/match(_:udevCalibration:)`` (the daemon's
/// input thread, its replay, motionctl's commands on recordings, `devices`), so that a panel
/// is used alike wherever it is read, and `devices` names the rules that really applied.
public struct DeviceMatch: Sendable, Hashable {
    /// The entry's settings, with the quirk's keys the entry leaves out and the calibration
    /// table's matrix.
    public var settings: DeviceSettings
    /// The rule of the `[[device]]` entry that picked the device: nil when there are no
    /// entries (which take every device) or the entry has no rules.
    public var entryRule: DeviceSelection.Rule?
    /// The `[[calibration]]` table whose matrix replaced the entry's, and the rule that picked
    /// it; nil when no table selects the device.
    public var calibration: CalibrationSettings?
    public var calibrationRule: DeviceSelection.Rule?
    /// How the device maps to the screen: the entry's output, rotation and flips, and a
    /// calibration matrix (the table's, else the entry's, else udev's, else none).
    public var mapping: OutputMapping
    /// The contact filters, with the tap slop of `[gestures]` as their stuck slop: a finger
    /// that moved less than a tap may is still.
    public var filters: ContactFilterSettings

    /// How the input reads the device.
    public var use: TouchInputHub.DeviceUse { use(virtualOutputs: []) }

    /// How the input reads the device when the virtual touchscreens of `virtualOutputs`
    /// exist: a panel that names one is grabbed, so that the apps read it only through its
    /// virtual touchscreen; one whose virtual touchscreen could not be made is left to them.
    public func use(virtualOutputs: Set<String>) -> TouchInputHub.DeviceUse {
        let grab = settings.grab || settings.virtualTouchscreen.map(virtualOutputs.contains) == true
        return TouchInputHub.DeviceUse(mapping: mapping, grab: grab, filters: filters)
    }
}

extension Configuration {
    /// What applies to `device`, or nil when `[[device]]` entries exist and none selects it:
    /// then it is not used. `udevCalibration` is udev's `LIBINPUT_CALIBRATION_MATRIX` for
    /// the device, used when neither a table nor the entry gives a matrix.
    ///
    /// - The first `[[device]]` entry that selects the device applies; with no entries, the
    ///   defaults do, mapping onto the whole screen.
    /// - Of the `[[calibration]]` tables that select it, the one whose matching rule is the
    ///   most specific (a path, then a node, ids, a name) replaces the entry's matrix; the
    ///   last read of those as specific. So a panel calibrated where it is plugged in keeps
    ///   its matrix beside an identical panel, and `motionctl calibrate`'s drop-in, read
    ///   after the main file, wins over a table of the same kind there.
    /// - The first quirk that selects it fills in the keys the entry leaves out.
    public func match(_ device: DeviceIdentity, udevCalibration: [Double]? = nil) -> DeviceMatch? {
        guard let entry = devices.isEmpty ? DeviceSettings() : devices.first(where: { $0.selection.selects(device) }) else { return nil }
        var settings = entry
        let calibration = self.calibration(for: device)
        if let calibration { settings.calibration = calibration.table.matrix }
        if let quirk = quirks.first(where: { $0.selection.selects(device) }) { quirk.apply(to: &settings) }
        return DeviceMatch(settings: settings, entryRule: entry.selection.match(device),
                           calibration: calibration?.table, calibrationRule: calibration?.rule,
                           mapping: mapping(for: settings, udevCalibration: udevCalibration), filters: filters(for: settings))
    }

    /// The most specific `[[calibration]]` that selects `device`, the last of those as
    /// specific, with the rule that picked it.
    private func calibration(for device: DeviceIdentity) -> (table: CalibrationSettings, rule: DeviceSelection.Rule)? {
        var best: (table: CalibrationSettings, rule: DeviceSelection.Rule)?
        for table in calibrations {
            guard let rule = table.selection.match(device) else { continue }
            if best.map({ rule.specificity >= $0.rule.specificity }) ?? true { best = (table, rule) }
        }
        return best
    }

    private func filters(for settings: DeviceSettings) -> ContactFilterSettings {
        var filters = settings.filters
        filters.stuckSlop = gestures.tapSlop
        return filters
    }

    private func mapping(for settings: DeviceSettings, udevCalibration: [Double]?) -> OutputMapping {
        let output = outputRect(for: settings)
        return OutputMapping(
            outputSize: output.size, outputOrigin: output.origin,
            rotation: settings.rotation,
            flipHorizontal: settings.flipHorizontal, flipVertical: settings.flipVertical,
            calibration: settings.calibration ?? udevCalibration ?? OutputMapping.identityCalibration)
    }
}
