/// A value that can be observed: subscribing emits the current value at once, and every
/// write notifies the subscribers in the order they subscribed.
///
/// Properties are how interactions talk to each other and to the outside: an element's
/// position, a spring's destination, an `enabled` flag. A write notifies even when the value
/// is unchanged, as in Material Motion; use ``MotionObservable/dedupe()`` on ``stream``
/// where repeats matter.
public final class ReactiveProperty<Value> {
    fileprivate var storage: Value
    /// The first subscriber apart from the rest: most properties have one or none, and a
    /// scene holds thousands, so the list is made only for a second.
    private var first: PropertyObserver<Value>?
    private var others: [PropertyObserver<Value>] = []

    /// Creates a property holding `value`.
    public init(_ value: Value) {
        self.storage = value
    }

    deinit {
        // Observers point back without counting (``PropertyObserver/property``): told here.
        first?.property = nil
        for observer in others { observer.property = nil }
    }

    /// The current value. Setting it notifies every subscriber synchronously.
    public var value: Value {
        get { storage }
        set {
            storage = newValue
            guard let first else { return }
            // A snapshot, so that subscribing or unsubscribing from a handler is safe; an
            // observer removed meanwhile is skipped, being unsubscribed.
            let others = self.others
            if !first.isUnsubscribed { first.receive(newValue) }
            for observer in others where !observer.isUnsubscribed {
                observer.receive(newValue)
            }
        }
    }

    /// Subscribes to the value: `next` is called now with the current value, then on every
    /// write.
    @discardableResult
    public func subscribe(_ next: @escaping (Value) -> Void) -> Subscription {
        let observer = ValueObserver(next, of: self)
        add(observer)
        next(storage)
        return observer
    }

    /// Subscribes to the writes without their values: `notify` is called now, then on every
    /// write. What ``subscribe(_:)`` does with a handler ignoring its argument, without the
    /// closure that wrapping `notify` would allocate: the engine follows every published
    /// property this way.
    @discardableResult
    public func subscribeToWrites(_ notify: @escaping () -> Void) -> Subscription {
        let observer = WriteObserver(notify, of: self)
        add(observer)
        notify()
        return observer
    }

    /// Tells `listener` of every later write, with `tag`; unlike the `subscribe`s, not of the
    /// current value now. One object a link, with no closure: how the engine follows every
    /// property it publishes (``WriteListener``).
    func follow(_ listener: WriteListener, tag: Int) -> Subscription {
        let observer = ListenerLink(listener, tag: tag, of: self)
        add(observer)
        return observer
    }

    fileprivate func add(_ observer: PropertyObserver<Value>) {
        if first == nil { first = observer } else { changeOthers { $0.append(observer) } }
    }

    /// Lets go of `observer`.
    fileprivate func remove(_ observer: PropertyObserver<Value>) {
        if first === observer {
            var next: PropertyObserver<Value>?
            if !others.isEmpty { changeOthers { next = $0.removeFirst() } }
            first = next
        } else {
            changeOthers { $0.removeAll { $0 === observer } }
        }
    }

    /// Changes ``others`` by `change`, on a copy taken out of it: growing or shrinking an
    /// array calls into the standard library, which the compiler cannot prove leaves
    /// `others` alone, and one such change would have every access to `others` checked at
    /// run time, each write of every property included. The list is taken out whole, so the
    /// copy is the only one and changes in place.
    private func changeOthers(_ change: (inout [PropertyObserver<Value>]) -> Void) {
        var list = others
        others = []
        change(&list)
        others = list
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
    public var subscriberCount: Int { (first == nil ? 0 : 1) + others.count }
}

/// A read-only view of a ``ReactiveProperty``: the value can be read and observed, not written.
public struct ReadOnlyProperty<Value> {
    let base: ReactiveProperty<Value>

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

    /// Subscribes to the writes; see ``ReactiveProperty/subscribeToWrites(_:)``.
    @discardableResult
    public func subscribeToWrites(_ notify: @escaping () -> Void) -> Subscription {
        base.subscribeToWrites(notify)
    }

    /// The property as a stream.
    public var stream: MotionObservable<Value> { base.stream }
}

/// A property's subscriber, which is also its subscription: one object per link.
private class PropertyObserver<Value>: Subscription {
    /// The property observed, until the subscription is cancelled or the property goes
    /// (its deinit clears this): not counted, which saves every observed property the side
    /// table a weak reference would make.
    unowned(unsafe) var property: ReactiveProperty<Value>?

    init(of property: ReactiveProperty<Value>) {
        self.property = property
        super.init()
    }

    func receive(_ value: Value) {}

    override func cancel() {
        property?.remove(self)
        property = nil
    }
}

private final class ValueObserver<Value>: PropertyObserver<Value> {
    private let next: (Value) -> Void

    init(_ next: @escaping (Value) -> Void, of property: ReactiveProperty<Value>) {
        self.next = next
        super.init(of: property)
    }

    override func receive(_ value: Value) { next(value) }
}

private final class WriteObserver<Value>: PropertyObserver<Value> {
    private let notify: () -> Void

    init(_ notify: @escaping () -> Void, of property: ReactiveProperty<Value>) {
        self.notify = notify
        super.init(of: property)
    }

    override func receive(_ value: Value) { notify() }
}

extension ReactiveProperty where Value == Bool {
    /// Tells `listener` of every later write, with `tag` and the value written: what
    /// ``follow(_:tag:)`` does, for a listener that also acts on the value (the engine, on an
    /// element turned off).
    func follow(values listener: FlagListener, tag: Int) -> Subscription {
        let observer = FlagLink(listener, tag: tag, of: self)
        add(observer)
        return observer
    }
}

/// Hears the writes to the flags it follows, with their values, each link with a tag of its
/// own (``ReactiveProperty/follow(values:tag:)``), which holds it.
protocol FlagListener: AnyObject {
    /// A flag followed with `tag` was set to `value`.
    func flagWritten(_ tag: Int, to value: Bool)
}

private final class FlagLink: PropertyObserver<Bool> {
    private let listener: FlagListener
    private let tag: Int

    init(_ listener: FlagListener, tag: Int, of property: ReactiveProperty<Bool>) {
        self.listener = listener
        self.tag = tag
        super.init(of: property)
    }

    override func receive(_ value: Bool) { listener.flagWritten(tag, to: value) }
}

extension ReactiveProperty where Value == MotionState {
    /// Counts the state in `tracker` as its stream `id`, now and at every write, until the
    /// subscription is cancelled, which counts it at rest (``ActivityTracker/follow(_:)``).
    /// One object, where a closure for the value and another for the cancelling were four.
    func subscribe(countingIn tracker: ActivityTracker, as id: Int) -> Subscription {
        let observer = CountingLink(tracker, id: id, of: self)
        add(observer)
        observer.receive(storage)
        return observer
    }
}

private final class CountingLink: PropertyObserver<MotionState> {
    /// Held: a tracker holds nothing back, so this makes no cycle.
    private let tracker: ActivityTracker
    private let id: Int

    init(_ tracker: ActivityTracker, id: Int, of property: ReactiveProperty<MotionState>) {
        self.tracker = tracker
        self.id = id
        super.init(of: property)
    }

    override func receive(_ value: MotionState) { tracker.set(id, value) }

    override func cancel() {
        super.cancel()
        tracker.set(id, .atRest)
    }
}

/// Hears the writes to the properties it follows, each link with a tag of its own
/// (``ReactiveProperty/follow(_:tag:)``), which holds it: the engine's ``PublishedWrites``,
/// whose tags are the streams' numbers.
protocol WriteListener: AnyObject {
    /// A property followed with `tag` was written.
    func propertyWritten(_ tag: Int)
}

private final class ListenerLink<Value>: PropertyObserver<Value> {
    private let listener: WriteListener
    private let tag: Int

    init(_ listener: WriteListener, tag: Int, of property: ReactiveProperty<Value>) {
        self.listener = listener
        self.tag = tag
        super.init(of: property)
    }

    override func receive(_ value: Value) { listener.propertyWritten(tag) }
}
