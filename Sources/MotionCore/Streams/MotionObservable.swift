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

    /// Creates a stream from a connect function, which is called once per subscription.
    public init(_ connect: @escaping Connect) {
        self.connect = connect
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
        // The observer is gated so that nothing reaches it after unsubscribe, even if a
        // source emits from within its own disconnect.
        let gate = ObserverGate(observer)
        let disconnect = connect(gate.observer)
        return Subscription {
            gate.close()
            disconnect()
        }
    }

    /// A stream that emits the given values in order, then comes to rest.
    public static func of(_ values: Value...) -> MotionObservable<Value> {
        MotionObservable { observer in
            values.forEach(observer.next)
            return {}
        }
    }
}

/// Stops delivery to an observer once its subscription is cancelled.
private final class ObserverGate<Value> {
    private var target: MotionObserver<Value>?

    init(_ target: MotionObserver<Value>) { self.target = target }

    var observer: MotionObserver<Value> {
        MotionObserver(
            next: { [self] value in target?.next(value) },
            state: { [self] state in target?.state(state) }
        )
    }

    func close() { target = nil }
}

extension MotionObservable {
    /// Builds an operator that transforms values and passes states through unchanged.
    ///
    /// `makeTransform` is called once per subscription, so the closure it returns may
    /// keep state of its own (the last value, a cached start position…).
    public func _nextOperator<Output>(
        _ makeTransform: @escaping () -> (Value, (Output) -> Void) -> Void
    ) -> MotionObservable<Output> {
        MotionObservable<Output> { observer in
            let transform = makeTransform()
            let subscription = self.subscribe(
                next: { value in transform(value, observer.next) },
                state: observer.state
            )
            return subscription.unsubscribe
        }
    }
}
