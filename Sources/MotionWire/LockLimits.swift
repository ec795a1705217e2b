/// How long a lock (`lock`) lasts: long enough to wipe a screen, never for good.
public enum LockLimits {
    public static let defaultSeconds = 30.0
    public static let seconds: ClosedRange<Double> = 1...3600
}
