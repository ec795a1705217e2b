/// Attract mode for one element: once nobody has touched the screen for ``after`` seconds,
/// springs carry the element back to its home, the position, rotation and scale it was
/// configured with, as a kiosk returns to its first screen between visitors.
///
/// The engine says when (``MotionEngine`` counts idle time from the last touch anywhere on
/// the screen, and calls ``reset()`` once per idle period); a finger on the element stops the
/// springs where they are and takes over.
public final class Resettable: Interaction, ReportsMotionState {
    /// Whether the interaction is moving its element.
    public let activity = ActivityTracker()
    /// Idle seconds before the element goes home.
    public let after: Double
    /// The springs home: position (pixels), rotation (radians) and scale. Disabled until a reset.
    public let position: Spring<Point>
    public let rotation: Spring<Double>
    public let scale: Spring<Double>

    /// Creates the interaction for `element`, whose current geometry is its home.
    public init(element: Element, after: Double, configuration: SpringConfiguration = .standard) {
        precondition(after > 0 && after.isFinite, "an element resets after a positive number of seconds")
        self.after = after
        // Thresholds in each value's units: a pixel, a thousandth of a radian and of the scale.
        position = Spring(to: ReactiveProperty(element.position.value), initialValue: element.position, threshold: 1, configuration: configuration)
        rotation = Spring(to: ReactiveProperty(element.rotation.value), initialValue: element.rotation, threshold: 0.001, configuration: configuration)
        scale = Spring(to: ReactiveProperty(element.scale.value), initialValue: element.scale, threshold: 0.001, configuration: configuration)
        for enabled in [position.enabled, rotation.enabled, scale.enabled] { enabled.value = false }
    }

    public func add(to element: Element, withRuntime runtime: MotionRuntime) {
        runtime.connect(tracked(on: element, springSource(position, clock: runtime.clock)), to: element.position)
        runtime.connect(tracked(on: element, springSource(rotation, clock: runtime.clock)), to: element.rotation)
        runtime.connect(tracked(on: element, springSource(scale, clock: runtime.clock)), to: element.scale)
        runtime.observe(element.gestures.touches.stream) { [weak self] _ in self?.stop() }
    }

    /// Starts the springs home from wherever the element is, at rest.
    public func reset() {
        for enabled in [position.enabled, rotation.enabled, scale.enabled] { enabled.value = true }
    }

    /// Stops the springs where they are: a finger has the element.
    public func stop() {
        for enabled in [position.enabled, rotation.enabled, scale.enabled] where enabled.value { enabled.value = false }
    }
}
