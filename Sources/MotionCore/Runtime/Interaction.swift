/// Something that makes a target move in response to input or time: Draggable, Tossable,
/// Attach and the rest of the Material Motion catalogue.
///
/// An interaction describes the connections; ``MotionRuntime/add(_:to:)`` asks it to make
/// them, so that the runtime owns every subscription and knows what is in motion.
public protocol Interaction<Target>: AnyObject {
    /// What the interaction acts on: an element, a property…
    associatedtype Target

    /// Connects the interaction's streams to `target`'s properties through `runtime`.
    func add(to target: Target, withRuntime runtime: MotionRuntime)
}
