/// A spring that pulls a value toward a destination: the Material Motion `Spring`.
///
/// Everything that can be tuned is a property, so it can change while the spring moves:
/// a new ``destination`` retargets from the current position and velocity, a new
/// ``configuration`` continues from the current state with the new constants. The spring
/// itself only holds settings; ``springSource(_:clock:)`` runs it.
public final class Spring<Value: MotionVector> {
    /// Where the spring pulls to.
    public let destination: ReactiveProperty<Value>

    /// Where the spring starts from, read each time it starts or is re-enabled. Pass the
    /// property the spring writes to (an element's position) and it continues from wherever
    /// that value was left, for instance by a drag.
    public let initialValue: ReactiveProperty<Value>

    /// A velocity, in units per second, applied once when the spring next starts or is
    /// re-enabled, then reset to zero. Written while the spring moves, it replaces the
    /// current velocity at once: a toss.
    public let initialVelocity: ReactiveProperty<Value>

    /// How close to the destination counts as there, in the value's units.
    public var threshold: ReactiveProperty<Double> { thresholdStorage.property() }

    /// While false, the spring does not move the value (a finger is moving it instead).
    public let enabled: ReactiveProperty<Bool>

    /// Tension, friction and mass.
    public let configuration: ReactiveProperty<SpringConfiguration>

    /// A property only once asked for: the running source reads the value alone
    /// (``currentThreshold``), and few change it.
    private var thresholdStorage: OnDemandProperty<Double>
    /// Written by the running source (``setState(_:)``, ``setVelocity(_:)``); properties only
    /// once ``state`` or ``velocity`` is asked for, which the engine never does.
    private var stateStorage = OnDemandProperty(MotionState.atRest)
    private var velocityStorage = OnDemandProperty(Value.zero)

    /// Whether the spring is moving; written by its running source.
    public var state: ReadOnlyProperty<MotionState> { stateStorage.property().readOnly }

    /// The current velocity, updated every frame while the spring moves; zero at rest.
    public var velocity: ReadOnlyProperty<Value> { velocityStorage.property().readOnly }

    /// ``threshold``'s value, read without making its property.
    var currentThreshold: Double { thresholdStorage.value }

    /// Sets ``state``; for the running source.
    func setState(_ state: MotionState) {
        if let observed = stateStorage.store(state) { observed.value = state }
    }

    /// Sets ``velocity``; for the running source.
    func setVelocity(_ velocity: Value) {
        if let observed = velocityStorage.store(velocity) { observed.value = velocity }
    }

    /// Creates a spring pulling from `initialValue` toward `destination`.
    public init(
        to destination: ReactiveProperty<Value>,
        initialValue: ReactiveProperty<Value>,
        threshold: Double = 1,
        configuration: SpringConfiguration = .standard
    ) {
        self.destination = destination
        self.initialValue = initialValue
        self.initialVelocity = ReactiveProperty(.zero)
        self.thresholdStorage = OnDemandProperty(threshold)
        self.enabled = ReactiveProperty(true)
        self.configuration = ReactiveProperty(configuration)
    }

    /// Creates a spring from fixed values, with properties of its own.
    public convenience init(
        to destination: Value,
        from initialValue: Value,
        threshold: Double = 1,
        configuration: SpringConfiguration = .standard
    ) {
        self.init(
            to: ReactiveProperty(destination),
            initialValue: ReactiveProperty(initialValue),
            threshold: threshold,
            configuration: configuration
        )
    }
}
