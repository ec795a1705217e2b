import MotionConfiguration
import MotionCore

/// The scene the daemon runs and what it was made from: the engine, the configuration in
/// force, and the interactions each element was configured with. A reload replaces all
/// three together; the daemon, its clients and its request dispatcher share this one object,
/// so none of them can hold an engine the others have dropped.
final class DaemonScene {
    /// The engine running the configured scene.
    private(set) var engine: MotionEngine
    /// The configuration in force.
    private(set) var configuration: Configuration
    /// The interactions each element was configured with, for `elements`.
    var interactionNames: [String: [String]] = [:]
    /// `screen.contacts`, which the daemon (not the engine) feeds.
    private(set) var contactsStream: StreamID
    private let clock: FrameClock

    init(_ configuration: Configuration, clock: FrameClock) {
        self.clock = clock
        self.configuration = configuration
        self.engine = configuration.makeEngine(clock: clock)
        self.contactsStream = engine.registerExternalStream(ContactsStream.name)
        interactionNames = Self.interactionNames(configuration)
    }

    /// Makes the new engine, hands it the touches in progress (``MotionEngine/handOver(to:)``:
    /// the gestures that end, end while the old engine is still the scene's, so that they reach
    /// the clients under its streams), and takes the old one apart (its springs stop, so
    /// nothing of the old scene stays in memory or keeps the clock running). Returns the
    /// report of the gestures that ended, to publish under the old streams, and the old
    /// streams' catalog, which the publisher renumbers from.
    func replace(with configuration: Configuration) -> (endings: FrameReport, oldCatalog: StreamCatalog) {
        let successor = configuration.makeEngine(clock: clock)
        let endings = engine.handOver(to: successor)
        engine.disconnect()
        let oldCatalog = engine.catalog
        self.configuration = configuration
        engine = successor
        contactsStream = engine.registerExternalStream(ContactsStream.name)
        interactionNames = Self.interactionNames(configuration)
        return (endings, oldCatalog)
    }

    /// Every stream a client may subscribe to: the values, `screen.contacts`, the gestures.
    var allStreams: [(name: String, id: StreamID)] {
        let catalog = engine.catalog
        return (engine.valueStreams + [contactsStream] + engine.gestureStreams).map { (catalog.name(of: $0), $0) }
    }

    /// An element as `elements` and `add_element` describe it.
    func describe(_ element: Element) -> JSONValue {
        .object([
            ("id", .string(element.id)), ("position", .point(element.position.value)),
            ("size", .published(.size(element.size.value))), ("rotation", .number(element.rotation.value)),
            ("scale", .number(element.scale.value)), ("z", .integer(Int64(element.zOrder.value))),
            ("state", .string(element.state.value.rawValue)), ("enabled", .bool(element.enabled.value)),
            ("interactions", .array((interactionNames[element.id] ?? []).map { .string($0) })),
        ])
    }

    private static func interactionNames(_ configuration: Configuration) -> [String: [String]] {
        Dictionary(uniqueKeysWithValues: configuration.elements.map { ($0.id, $0.interactions.map(\.name)) })
    }
}
