/// The two channels an observer of a ``MotionObservable`` listens on.
public struct MotionObserver<Value> {
    /// Receives each value.
    public let next: (Value) -> Void
    /// Receives each change of ``MotionState``.
    public let state: (MotionState) -> Void

    /// Creates an observer from its two handlers.
    public init(next: @escaping (Value) -> Void, state: @escaping (MotionState) -> Void = { _ in }) {
        self.next = next
        self.state = state
    }
}

/// A cold stream of values with a second channel for ``MotionState``.
///
/// This is the Material Motion `MotionObservable`: nothing happens until someone
/// subscribes, and each subscription runs the source's connect function anew, so
/// stateful operators (``dedupe()``, ``translated(from:)``…) keep their state per
/// subscription. Everything runs synchronously on the caller's thread; motiond drives
/// all of MotionCore from one event loop, which is why none of it needs locks.
public struct MotionObservable<Value> {
    /// Connects an observer to the source and returns the function that disconnects it.
    public typealias Connect = (MotionObserver<Value>) -> (() -> Void)

    private let connect: Connect
    /// The event stream this stream's values all come from, when it is one that has sent
    /// nothing yet: subscriptions wait there until it first sends (``QuietSource``).
    let quietSource: (any QuietSource)?

    /// Creates a stream from a connect function, which is called once per subscription.
    public init(_ connect: @escaping Connect) {
        self.connect = connect
        self.quietSource = nil
    }

    /// Creates a stream whose values all come from `source` (an operator passes on its
    /// upstream's), so that subscribing to it may wait until the source first sends.
    init(from source: (any QuietSource)?, _ connect: @escaping Connect) {
        self.connect = connect
        self.quietSource = source
    }

    /// Subscribes with a value handler and an optional state handler.
    ///
    /// - Returns: the subscription; `unsubscribe()` on it disconnects from the source.
    @discardableResult
    public func subscribe(
        next: @escaping (Value) -> Void,
        state: @escaping (MotionState) -> Void = { _ in }
    ) -> Subscription {
        subscribe(MotionObserver(next: next, state: state))
    }

    /// Subscribes an observer.
    @discardableResult
    public func subscribe(_ observer: MotionObserver<Value>) -> Subscription {
        let subscription = GatedSubscription(observer, connect: connect)
        if let quietSource, quietSource.isQuiet {
            quietSource.hold(subscription)
        } else {
            subscription.connectNow()
        }
        return subscription
    }

    /// A stream that emits the given values in order, then comes to rest.
    public static func of(_ values: Value...) -> MotionObservable<Value> {
        MotionObservable { observer in
            values.forEach(observer.next)
            return {}
        }
    }
}

/// An event stream that has sent nothing yet: a subscription to a stream drawn from it alone
/// has nothing to receive, so it is held and connected when the source first sends, all of
/// them in the order they subscribed, before that first value is delivered. What the
/// observers receive, and in which order, is the same as if each had connected at once; but
/// an element nobody touches never builds its gestures' chains of operators, which are most
/// of what its interactions allocate, and a restored scene holds thousands of such elements.
///
/// Only streams whose connecting has no effect but to connect to their upstream may say
/// they come from a quiet source: an event stream itself, and the operators that transform
/// one upstream's values (``MotionObservable/_nextOperator(_:)``, ``ActivityTracker/tracked(_:)``).
protocol QuietSource: AnyObject {
    /// Whether the source has sent nothing yet, and holds new subscriptions.
    var isQuiet: Bool { get }
    /// Keeps `subscription` to connect at the first send.
    func hold(_ subscription: Subscription)
}

/// A stream's subscription, which is also the gate in front of its observer: nothing reaches
/// the observer after `unsubscribe()`, even if a source emits from within its own disconnect.
/// One object where a gate and a subscription holding it were two: the source holds it
/// through the gate, and it holds the source's disconnect, so it is freed once unsubscribed
/// (which whoever connects a stream does, ``MotionRuntime/disconnectAll()``).
private final class GatedSubscription<Value>: Subscription {
    private var target: MotionObserver<Value>?
    /// The source's connect function, until it is called.
    private var connect: MotionObservable<Value>.Connect?

    init(_ target: MotionObserver<Value>, connect: @escaping MotionObservable<Value>.Connect) {
        self.target = target
        self.connect = connect
        super.init()
    }

    override func connectNow() {
        guard let connect else { return }
        self.connect = nil
        let gate = MotionObserver<Value>(
            next: { [self] value in target?.next(value) },
            state: { [self] state in target?.state(state) }
        )
        setDisconnect(connect(gate))
    }

    override func cancel() {
        target = nil
        connect = nil
    }
}

extension MotionObservable {
    /// Builds an operator that transforms values and passes states through unchanged.
    ///
    /// `makeTransform` is called once per subscription, so the closure it returns may
    /// keep state of its own (the last value, a cached start position…).
    public func _nextOperator<Output>(
        _ makeTransform: @escaping () -> (Value, (Output) -> Void) -> Void
    ) -> MotionObservable<Output> {
        MotionObservable<Output>(from: quietSource) { observer in
            let transform = makeTransform()
            let subscription = self.subscribe(
                next: { value in transform(value, observer.next) },
                state: observer.state
            )
            return subscription.unsubscribe
        }
    }
}
