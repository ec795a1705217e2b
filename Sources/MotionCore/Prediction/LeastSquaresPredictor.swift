/// A least-squares line through the samples of the last 40 ms, extended by the horizon: the
/// plainest smoothing of a panel's noise, and the baseline the default must beat.
public struct LeastSquaresPredictor: TouchPredictor {
    public static let name = "least_squares"
    /// How far back the line looks.
    public static let window = 0.040
    private var samples = SampleWindow()
    public init() {}

    public mutating func add(_ position: Point, at time: Double) {
        samples.add(position, at: time, keeping: Self.window)
    }

    public func predict(_ horizon: Double) -> Point {
        guard let last = samples.last else { return Point(x: 0, y: 0) }
        guard let line = samples.fit(quadratic: false) else { return last.position }
        return Point(x: line.position.x + line.velocity.x * horizon, y: line.position.y + line.velocity.y * horizon)
    }
}
