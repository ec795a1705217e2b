// Rubber-banding: resistance that grows as a value is pulled past its bounds, as in
// iOS scroll views. The distance past a bound, d, is shown as
//     band(d) = L · (1 − 1 / (0.55 · d / L + 1))
// which starts with slope 0.55, so it moves about half as far as the finger, and never
// exceeds L, the maximum length.

/// The distance shown for a value pulled `overshoot` past its bound (see the file comment).
///
/// - Parameters:
///   - overshoot: how far past the bound the value is, zero or more.
///   - maxLength: the most the band stretches; zero or less disables the band.
public func rubberBandDistance(_ overshoot: Double, maxLength: Double) -> Double {
    guard maxLength > 0, overshoot > 0 else { return 0 }
    return maxLength * (1 - 1 / (0.55 * overshoot / maxLength + 1))
}

/// `value` with rubber-band resistance outside `min...max`; inside, it is unchanged.
public func rubberBand(_ value: Double, min: Double, max: Double, maxLength: Double) -> Double {
    if value < min { return min - rubberBandDistance(min - value, maxLength: maxLength) }
    if value > max { return max + rubberBandDistance(value - max, maxLength: maxLength) }
    return value
}

/// `point` with rubber-band resistance outside `rect`, each axis on its own.
public func rubberBand(_ point: Point, outsideOf rect: Rect, maxLength: Double) -> Point {
    Point(
        x: rubberBand(point.x, min: rect.minX, max: rect.maxX, maxLength: maxLength),
        y: rubberBand(point.y, min: rect.minY, max: rect.maxY, maxLength: maxLength)
    )
}

extension MotionObservable where Value == Double {
    /// Applies rubber-band resistance outside `min...max`.
    public func rubberBanded(below min: Double, above max: Double, maxLength: Double = 48) -> MotionObservable<Double> {
        map { rubberBand($0, min: min, max: max, maxLength: maxLength) }
    }
}

extension MotionObservable where Value == Point {
    /// Applies rubber-band resistance outside `rect`, each axis on its own.
    public func rubberBanded(outsideOf rect: Rect, maxLength: Double = 48) -> MotionObservable<Point> {
        map { rubberBand($0, outsideOf: rect, maxLength: maxLength) }
    }
}
