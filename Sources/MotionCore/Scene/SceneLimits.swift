/// How large a scene may grow: one place for the limits that the configuration, `add_element`
/// and the state file each enforce, so that a scene one of them accepts the others accept too.
public enum SceneLimits {
    /// The most elements a scene may hold: far more than any scene, few enough that restoring
    /// one stays quick. `add_element` refuses one more, and a state file that holds more is
    /// refused.
    public static let maximumElements = 10_000
    /// The longest element id, in UTF-8 bytes: an id names a dozen streams, each sent in
    /// every value line of its element.
    public static let maximumIDBytes = 256
}
