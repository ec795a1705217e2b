/// An element as the engine runs it: its recognizers, its interactions, its published
/// properties and the contacts routed to it in the frame being processed. A class: contacts
/// are routed to it by identity (``ContactRouter``).
final class EngineElement {
    let element: Element
    let runtime: MotionRuntime
    /// Made at the element's first touch, with the thresholds then in force.
    var recognizers: Recognizers?
    /// Its value streams, in publication order.
    var values: [(id: StreamID, property: PublishedProperty)] = []
    var links: [Subscription] = []
    var activityLink: Subscription?
    /// The gesture streams, by ``GestureKind`` in `allCases` order.
    var gestureStreams: [StreamID?] = []
    /// This frame's contacts on the element; emptied, not freed, after each frame.
    var contacts: [TouchContact] = []
    /// The contacts holding it, while its predictions are updated (``ContactRouter/collectFingers()``);
    /// emptied, not freed, after.
    var fingers: [(key: ContactKey, id: Int32)] = []
    /// Whether the element was found not finite and reported, and has not been finite since.
    var nonFiniteReported = false

    init(element: Element, runtime: MotionRuntime) {
        self.element = element
        self.runtime = runtime
    }

    /// Cuts every link: its interactions stop (springs in flight too) and its properties are
    /// no longer followed.
    func detach() {
        runtime.disconnectAll()
        links.forEach { $0.unsubscribe() }
        activityLink?.unsubscribe()
    }

    /// An element's recognizers, by reference: their state takes kilobytes, which an element
    /// held inline (a ``GestureSet`` is a struct) took whether touched or not, and most elements
    /// of a large scene never are.
    final class Recognizers {
        var gestures: GestureSet

        init(_ gestures: GestureSet) {
            self.gestures = gestures
        }
    }
}
