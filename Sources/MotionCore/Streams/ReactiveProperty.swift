/// A value that can be observed: subscribing emits the current value at once, and every
/// write notifies the subscribers in the order they subscribed.
///
/// Properties are how interactions talk to each other and to the outside: an element's
/// position, a spring's destination, an `enabled` flag. A write notifies even when the value
/// is unchanged, as in Material Motion; use ``MotionObservable/dedupe()`` on ``stream``
/// where repeats matter.
public final class ReactiveProperty<Value> {
    private var storage: Value
    private var observers: [PropertyObserver<Value>] = []

    /// Creates a property holding `value`.
    public init(_ value: Value) {
        self.storage = value
    }

    /// The current value. Setting it notifies every subscriber synchronously.
    public var value: Value {
        get { storage }
        set {
            storage = newValue
            // A snapshot, so that subscribing or unsubscribing from a handler is safe; an
            // observer removed during this loop is skipped through its `isActive` flag.
            for observer in observers where observer.isActive {
                observer.next(newValue)
            }
        }
    }

    /// Subscribes to the value: `next` is called now with the current value, then on every
    /// write.
    @discardableResult
    public func subscribe(_ next: @escaping (Value) -> Void) -> Subscription {
        let observer = PropertyObserver(next, of: self)
        observers.append(observer)
        next(storage)
        // The observer alone is what the subscription holds: a closure holding one object
        // needs no allocation of its own, and a scene makes thousands of subscriptions.
        return Subscription(observer.cancel)
    }

    /// Lets go of `observer`.
    fileprivate func remove(_ observer: PropertyObserver<Value>) {
        observers.removeAll { $0 === observer }
    }

    /// The property as a stream: the current value on subscription, then every write.
    public var stream: MotionObservable<Value> {
        MotionObservable { observer in
            self.subscribe(observer.next).unsubscribe
        }
    }

    /// A read-only view of this property, for handing out what only its owner may write.
    public var readOnly: ReadOnlyProperty<Value> { ReadOnlyProperty(self) }

    /// How many subscribers the property has (for tests and diagnostics).
    public var subscriberCount: Int { observers.count }
}

/// A read-only view of a ``ReactiveProperty``: the value can be read and observed, not written.
public struct ReadOnlyProperty<Value> {
    private let base: ReactiveProperty<Value>

    /// Creates a read-only view of `base`.
    public init(_ base: ReactiveProperty<Value>) {
        self.base = base
    }

    /// The current value.
    public var value: Value { base.value }

    /// Subscribes to the value; see ``ReactiveProperty/subscribe(_:)``.
    @discardableResult
    public func subscribe(_ next: @escaping (Value) -> Void) -> Subscription {
        base.subscribe(next)
    }

    /// The property as a stream.
    public var stream: MotionObservable<Value> { base.stream }
}

private final class PropertyObserver<Value> {
    let next: (Value) -> Void
    var isActive = true
    /// The property observed, until the subscription is cancelled.
    private weak var property: ReactiveProperty<Value>?

    init(_ next: @escaping (Value) -> Void, of property: ReactiveProperty<Value>) {
        self.next = next
        self.property = property
    }

    func cancel() {
        isActive = false
        property?.remove(self)
        property = nil
    }
}
