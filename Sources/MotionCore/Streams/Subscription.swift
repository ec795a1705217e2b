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
    public private(set) var isUnsubscribed = false

    /// Creates a subscription that runs `disconnect` once, on the first `unsubscribe()`.
    public init(_ disconnect: @escaping () -> Void) {
        self.disconnect = disconnect
    }

    /// For a subclass that cancels itself (``cancel()``), and may be handed the source's
    /// disconnect later (``setDisconnect(_:)``).
    init() {}

    /// The function that disconnects from the source, once connected.
    final func setDisconnect(_ disconnect: @escaping () -> Void) {
        if isUnsubscribed { disconnect() } else { self.disconnect = disconnect }
    }

    /// Disconnects the subscription. Later calls do nothing.
    public final func unsubscribe() {
        guard !isUnsubscribed else { return }
        isUnsubscribed = true
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
