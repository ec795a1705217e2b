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

/// An interaction that reports whether it is moving its target.
///
/// Its ``state`` is `.active` while any of its streams is (a drag in progress, a spring
/// moving); the element's own state, and the runtime's, aggregate it with the others'.
public protocol ReportsMotionState: AnyObject {
    /// Aggregates the states of the interaction's streams.
    var activity: ActivityTracker { get }
}

extension ReportsMotionState {
    /// `.active` while the interaction moves its target.
    public var state: ReadOnlyProperty<MotionState> { activity.state }

    /// `stream`, with its state counted for this interaction and for `element`.
    func tracked<Value>(on element: Element, _ stream: MotionObservable<Value>) -> MotionObservable<Value> {
        activity.tracked(stream, alsoIn: element.activity)
    }
}
