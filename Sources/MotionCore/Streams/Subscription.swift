/// A handle on a live subscription; `unsubscribe()` disconnects it.
///
/// Unsubscribing is idempotent. A subscription is not cancelled when the handle is
/// dropped: whoever connects a stream (usually ``MotionRuntime``) keeps it and decides
/// when to let go, as in the Material Motion specs.
public final class Subscription {
    private var disconnect: (() -> Void)?

    /// Creates a subscription that runs `disconnect` once, on the first `unsubscribe()`.
    public init(_ disconnect: @escaping () -> Void) {
        self.disconnect = disconnect
    }

    /// Disconnects the subscription. Later calls do nothing.
    public func unsubscribe() {
        let disconnect = self.disconnect
        self.disconnect = nil
        disconnect?()
    }

    /// Whether `unsubscribe()` has been called.
    public var isUnsubscribed: Bool { disconnect == nil }
}
