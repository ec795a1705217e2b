// Operators on plain values: the building blocks the interactions compose.

extension MotionObservable {
    /// Transforms each value.
    public func map<Output>(_ transform: @escaping (Value) -> Output) -> MotionObservable<Output> {
        _nextOperator { { value, next in next(transform(value)) } }
    }

    /// Passes on only the values for which `isIncluded` is true.
    public func filter(_ isIncluded: @escaping (Value) -> Bool) -> MotionObservable<Value> {
        _nextOperator { { value, next in if isIncluded(value) { next(value) } } }
    }
}

extension MotionObservable where Value: Equatable {
    /// Drops a value equal to the one emitted just before it.
    public func dedupe() -> MotionObservable<Value> {
        _nextOperator {
            var last: Value?
            return { value, next in
                if value != last {
                    last = value
                    next(value)
                }
            }
        }
    }
}

extension MotionObservable where Value: Comparable {
    /// Emits `min(value, bound)`: the value never goes above `bound`.
    public func upperBound(_ bound: Value) -> MotionObservable<Value> {
        map { Swift.min($0, bound) }
    }

    /// Emits `max(value, bound)`: the value never goes below `bound`.
    public func lowerBound(_ bound: Value) -> MotionObservable<Value> {
        map { Swift.max($0, bound) }
    }

    /// Where each value lies relative to `position`: `.within` only when equal to it.
    public func threshold(_ position: Value) -> MotionObservable<ThresholdSide> {
        thresholdRange(min: position, max: position)
    }

    /// Where each value lies relative to `min...max`; both bounds count as `.within`.
    ///
    /// - Precondition: `min <= max`.
    public func thresholdRange(min: Value, max: Value) -> MotionObservable<ThresholdSide> {
        precondition(min <= max, "thresholdRange needs min <= max")
        return map { value in
            if value < min { return .below }
            if value > max { return .above }
            return .within
        }
    }
}

/// The result of ``MotionObservable/threshold(_:)`` and ``MotionObservable/thresholdRange(min:max:)``.
public enum ThresholdSide: String, Sendable, Hashable, Codable {
    /// Less than the lower bound.
    case below
    /// Between the bounds, inclusive.
    case within
    /// Greater than the upper bound.
    case above
}
