/// Owns the connections between streams and properties, and knows whether anything is moving.
///
/// The runtime is where interactions are added; it keeps their subscriptions alive, and it
/// aggregates the ``MotionState`` of every stream it connected into one ``state``: `.atRest`
/// only when all of them are. The daemon uses that to know when a scene has settled.
public final class MotionRuntime {
    /// The frame clock springs in this runtime run on.
    public let clock: FrameClock

    private var subscriptions: [Subscription] = []
    private var interactions: [AnyObject] = []
    private var activeStreams = ActiveIDs()
    private var nextStreamID = 0
    /// A property only once ``state`` is asked for, which the engine never does.
    private var aggregate = OnDemandProperty(MotionState.atRest)

    /// Creates a runtime whose springs run on `clock`.
    public init(clock: FrameClock) {
        self.clock = clock
    }

    /// `.active` while any connected stream is active, `.atRest` when all are at rest.
    /// Written only when it changes.
    public var state: ReadOnlyProperty<MotionState> { aggregate.property().readOnly }

    /// Writes every value of `stream` to `property`, and counts the stream's state in ``state``.
    public func connect<Value>(_ stream: MotionObservable<Value>, to property: ReactiveProperty<Value>) {
        connect(stream) { property.value = $0 }
    }

    /// Subscribes to `stream` for its state alone (a gesture, say), counting it in ``state``.
    public func observeState<Value>(of stream: MotionObservable<Value>) {
        connect(stream) { _ in }
    }

    /// Asks `interaction` to connect itself to `target`, and keeps it alive.
    public func add<I: Interaction>(_ interaction: I, to target: I.Target) {
        interactions.append(interaction)
        interaction.add(to: target, withRuntime: self)
    }

    /// Disables `spring` while `gesture` is in progress and re-enables it when the gesture
    /// ends, however it ends: the finger moves the value, then the spring takes over from
    /// wherever the finger left it.
    public func toggle<Value, Event: GestureEvent>(_ spring: Spring<Value>, inReactionTo gesture: MotionObservable<Event>) {
        let subscription = gesture.subscribe(next: { event in
            let shouldBeEnabled = !event.state.isInProgress
            if event.state != .possible, spring.enabled.value != shouldBeEnabled {
                spring.enabled.value = shouldBeEnabled
            }
        })
        keep(subscription)
    }

    /// Calls `next` with every value of `stream` for as long as the runtime is connected,
    /// without counting the stream's state: for a reaction (a release that retargets a
    /// spring) that moves nothing itself. The runtime keeps the subscription, so
    /// ``disconnectAll()`` ends it with the rest.
    public func observe<Value>(_ stream: MotionObservable<Value>, next: @escaping (Value) -> Void) {
        keep(stream.subscribe(next: next))
    }

    /// Cancels every connection the runtime made: springs stop and let go of the clock, and
    /// the interactions, no longer referenced by their targets' streams, can be freed.
    public func disconnectAll() {
        subscriptions.forEach { $0.unsubscribe() }
        subscriptions = []
        interactions = []
        activeStreams = ActiveIDs()
        setAggregate()
    }

    /// Calls `next` with every value of `stream`, and counts the stream's state in ``state``:
    /// for an interaction that writes several properties from one value.
    public func connect<Value>(_ stream: MotionObservable<Value>, next: @escaping (Value) -> Void) {
        let id = nextStreamID
        nextStreamID += 1
        let subscription = stream.subscribe(next: next, state: { [weak self] state in
            guard let self else { return }
            self.activeStreams.set(id, active: state == .active)
            self.setAggregate()
        })
        keep(subscription)
    }

    /// Keeps `subscription` until ``disconnectAll()``: for one an interaction makes itself
    /// (``EventStream/onFirstValue(_:)``).
    func keep(_ subscription: Subscription) {
        // Room for a few at once: an interaction makes three or four, and a scene has a
        // runtime an element.
        if subscriptions.isEmpty { subscriptions.reserveCapacity(4) }
        subscriptions.append(subscription)
    }

    private func setAggregate() {
        let state: MotionState = activeStreams.isEmpty ? .atRest : .active
        guard aggregate.value != state else { return }
        if let observed = aggregate.store(state) { observed.value = state }
    }
}
