/// A value that becomes a ``ReactiveProperty`` only once someone asks to observe it
/// (``property()``): until then it is a plain field, which no one could have heard. For the
/// states and velocities that few observe (an interaction's activity, a runtime's, a spring's
/// velocity), each an object a scene of thousands of elements made for nothing.
///
/// What observers hear is what a property made at once would have told them: the value when
/// they subscribe, then every write.
struct OnDemandProperty<Value> {
    /// The value, while there is no property.
    private var plain: Value
    /// The property, once someone asked for it; it holds the value from then on.
    private var observed: ReactiveProperty<Value>?

    /// Holds `value`, without a property yet.
    init(_ value: Value) {
        plain = value
    }

    /// The value.
    var value: Value { observed?.value ?? plain }

    /// Keeps `value` while there is no property, and returns nil; once there is one, returns
    /// it for the caller to write `value` to, after this call. Not a setter: that write
    /// notifies the property's observers, which may write here again, and a setter would
    /// still be accessing this value then (an exclusivity violation).
    mutating func store(_ value: Value) -> ReactiveProperty<Value>? {
        if observed == nil { plain = value }
        return observed
    }

    /// The property, made now if it was not, holding the value.
    mutating func property() -> ReactiveProperty<Value> {
        if let observed { return observed }
        let property = ReactiveProperty(plain)
        observed = property
        return property
    }
}
