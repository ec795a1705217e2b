import MotionCore
import TouchInput

/// A panel whose firmware misdescribes it, and what to believe instead: resolutions, a size,
/// a touch-size resolution or a filter's setting, under the keys a `[[device]]` entry gives
/// them. motiond ships its quirks in `quirks.toml` (compiled in); each names the public
/// evidence it comes from, as libinput's quirks files and systemd's hwdb do. A `[[device]]`
/// entry's own keys always win over a quirk's.
public struct Quirk: Sendable, Hashable {
    /// What `devices` and the log call it.
    public var name: String
    /// Where the values come from: a public source anyone can check.
    public var evidence: String
    /// Which devices it is for: `ids`, `name` (a glob), or both.
    public var selection: DeviceSelection
    /// Its keys, as a `[[device]]` entry holds them; only ``DeviceSettings/explicit`` ones apply.
    public var settings: DeviceSettings

    /// Fills in the keys the quirk sets and `settings` does not.
    public func apply(to settings: inout DeviceSettings) {
        let keys = self.settings.explicit.subtracting(settings.explicit)
        guard !keys.isEmpty else { return }
        let geometry: Set = ["resolution", "size_mm", "touch_resolution"]
        if !keys.isDisjoint(with: geometry) && settings.explicit.isDisjoint(with: ["resolution", "size_mm"]) {
            var hints = self.settings.filters.panel
            if settings.explicit.contains("touch_resolution") { hints.touchResolution = settings.filters.panel.touchResolution }
            hints.source = "quirk \(OutsideText.quoted(name))"
            settings.filters.panel = hints
        } else if keys.contains("touch_resolution") {
            settings.filters.panel.touchResolution = self.settings.filters.panel.touchResolution
            settings.filters.panel.source = "quirk \(OutsideText.quoted(name))"
        }
        if !keys.isDisjoint(with: ["palm_size_mm", "palm_size"]) && settings.explicit.isDisjoint(with: ["palm_size_mm", "palm_size"]) {
            settings.filters.palmSize = self.settings.filters.palmSize
        }
        if keys.contains("jump_mm") { settings.filters.jumpMillimetres = self.settings.filters.jumpMillimetres }
        if keys.contains("hysteresis") { settings.filters.hysteresis = self.settings.filters.hysteresis }
        if keys.contains("stuck_after") { settings.filters.stuckAfter = self.settings.filters.stuckAfter }
        let quirked = self.settings.filters.phantoms
        if keys.contains("phantom_taps") { settings.filters.phantoms.repeatingTaps = quirked.repeatingTaps }
        if keys.contains("wake_bursts") { settings.filters.phantoms.wakeBursts = quirked.wakeBursts }
        if keys.contains("storm_contacts") { settings.filters.phantoms.stormContacts = quirked.stormContacts }
        if keys.contains("storm_quiet") { settings.filters.phantoms.stormQuiet = quirked.stormQuiet }
        if keys.contains("infrared") { settings.filters.phantoms.infrared = quirked.infrared }
        settings.quirk = name
        settings.filters.quirk = name
    }

    /// The quirks shipped with motiond. The file is checked by the tests; should it ever fail
    /// to read, motiond goes without quirks rather than without input.
    public static let builtIn: [Quirk] = (try? read(String(decoding: PackageResources.quirks_toml, as: UTF8.self), file: "quirks.toml")) ?? []
}

extension Quirk {
    /// Reads a quirks file's text; `file` names it in errors.
    public static func read(_ text: String, file: String) throws(ConfigurationError) -> [Quirk] {
        try Configuration.readQuirks(text, file: file)
    }
}
