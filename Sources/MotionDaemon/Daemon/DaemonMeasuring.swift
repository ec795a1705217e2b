import MotionConfiguration
import MotionCore

/// What the benchmarks (Benchmarks/, `@_spi(Measuring) import MotionDaemon`) drive besides
/// the public API: a start's restoring of a kept scene, and a reload that carries the scene
/// over, without a state file, its writer thread and its scheduler around them, so that
/// what is measured is the scene's work alone. Not for motiond's own use.
@_spi(Measuring)
extension Daemon {
    /// Puts `state` back over the configured scene, as a start with a state file does
    /// (``keepScene(in:interval:scheduler:writer:)``); the notes on what was left out.
    public func restoreScene(_ state: SceneState) -> [String] {
        let notes = scene.restore(state)
        _ = engine.tick(at: clock.now)
        return notes
    }

    /// Replaces the configuration as a reload does when the daemon keeps its scene: the
    /// elements clients added, and where every element is, carry over.
    public func reloadCarryingScene(_ configuration: Configuration) {
        _ = replaceScene(with: configuration, carryingOver: true)
    }
}
