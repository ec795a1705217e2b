/// A handle on a live subscription; `unsubscribe()` disconnects it.
///
/// Unsubscribing is idempotent. A subscription is not cancelled when the handle is
/// dropped: whoever connects a stream (usually ``MotionRuntime``) keeps it and decides
/// when to let go, as in the Material Motion specs.
///
/// Not final: within MotionCore an observer can be its own subscription (a property's, a
/// stream's gate), which saves an object and a closure per link, and a scene makes
/// thousands of links.
public class Subscription {
    private var disconnect: (() -> Void)?
    /// Stored apart from ``isUnsubscribed``, which other modules read: a property only this
    /// file sees is one the compiler can prove is never accessed twice at once, and so checks
    /// at no cost, where a public one is checked at run time at each of the many reads.
    private var unsubscribed = false

    /// Whether `unsubscribe()` was called.
    public var isUnsubscribed: Bool { unsubscribed }

    /// Creates a subscription that runs `disconnect` once, on the first `unsubscribe()`.
    public init(_ disconnect: @escaping () -> Void) {
        self.disconnect = disconnect
    }

    /// For a subclass that cancels itself (``cancel()``), and may be handed the source's
    /// disconnect later (``setDisconnect(_:)``).
    init() {}

    /// The function that disconnects from the source, once connected.
    final func setDisconnect(_ disconnect: @escaping () -> Void) {
        if unsubscribed { disconnect() } else { self.disconnect = disconnect }
    }

    /// Disconnects the subscription. Later calls do nothing.
    public final func unsubscribe() {
        guard !unsubscribed else { return }
        unsubscribed = true
        let disconnect = self.disconnect
        self.disconnect = nil
        cancel()
        disconnect?()
    }

    /// A subclass's own part of `unsubscribe()`, run once, before the source's disconnect.
    func cancel() {}

    /// Connects to the source, for a subscription made before it could be (``QuietSource``):
    /// a stream's does, if not done yet and not unsubscribed meanwhile.
    func connectNow() {}
}
