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
    /// The `add_element` object of each element a client added, as it was sent: what the
    /// state file keeps to add it again after a restart.
    private(set) var added: [String: JSONValue] = [:]
    /// What the elements take of a state file's limits, at most: kept up to date as they come
    /// and go, so that `add_element` can refuse an element the file could not hold.
    private(set) var stateCost = SceneState.Cost()
    /// `screen.contacts`, which the daemon (not the engine) feeds.
    private(set) var contactsStream: StreamID
    private let clock: FrameClock

    init(_ configuration: Configuration, clock: FrameClock) {
        self.clock = clock
        self.configuration = configuration
        self.engine = configuration.makeEngine(clock: clock)
        self.contactsStream = engine.registerExternalStream(ContactsStream.name)
        interactionNames = Self.interactionNames(configuration)
        stateCost = Self.stateCost(configuration)
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
        stateCost = Self.stateCost(configuration)
        added = [:]
        return (endings, oldCatalog)
    }

    /// Adds the element `settings` describe, as `add_element` does; `object` is the request's
    /// element, kept for the state file. Refuses an id in use, and references (an attach to
    /// an element) that name no element.
    @discardableResult
    func add(_ settings: ElementSettings, object: JSONValue) throws(ProtocolError) -> Element {
        // Every scene a client can make can also be kept in the state file and read back.
        let cost = SceneState.Cost(id: settings.id, added: object)
        if let problem = SceneState.problem(elements: engine.scene.elements.count + 1, cost: stateCost + cost, largestLine: cost.bytes) {
            throw ProtocolError(.badValue, "'\(settings.id)' is not added, so that the scene can still be saved: \(problem)")
        }
        guard engine.scene.element(settings.id) == nil, settings.id != engine.scene.container.id else {
            throw ProtocolError(.exists, "an element is already called '\(settings.id)'")
        }
        // The configuration file's own checks, against the elements there are now.
        let scene = engine.scene
        if let problem = settings.referenceProblem(isElement: { $0 == settings.id || ($0 != scene.container.id && scene.element($0) != nil) },
                                                   elements: { scene.elements.map(\.id) + [settings.id] }) {
            throw ProtocolError(.badValue, problem.message)
        }
        let element = settings.makeElement()
        engine.add(element, interactions: settings.makeInteractions(for: element, in: engine) { [engine] in engine.scene.element($0)?.position })
        interactionNames[settings.id] = settings.interactions.map(\.name)
        added[settings.id] = object
        stateCost += cost
        return element
    }

    /// Makes room for `count` elements about to be added (a kept scene restored).
    func reserveCapacity(added count: Int) {
        engine.reserveCapacity(elements: count)
        interactionNames.reserveCapacity(interactionNames.count + count)
        added.reserveCapacity(added.count + count)
    }

    /// Removes an element, as `remove_element` does.
    func remove(_ id: String) throws(ProtocolError) {
        guard engine.scene.element(id) != nil, id != engine.scene.container.id else {
            throw ProtocolError(.unknownElement, "no element is called '\(id)'")
        }
        engine.remove(id)
        interactionNames[id] = nil
        stateCost -= SceneState.Cost(id: id, added: added[id])
        added[id] = nil
    }

    /// Every stream a client may subscribe to: the values, `screen.contacts`, the gestures.
    var allStreams: [(name: String, id: StreamID)] {
        let catalog = engine.catalog
        return (engine.valueStreams + [contactsStream] + engine.gestureStreams).map { (catalog.name(of: $0), $0) }
    }

    /// How many streams ``allStreams`` holds, without making it.
    var streamCount: Int { engine.catalog.count }

    /// The names of the first `limit` of ``allStreams``, without making the rest: the hello's.
    func firstStreams(_ limit: Int) -> [String] {
        var ids = Array(engine.valueStreamsInOrder.prefix(limit))
        if ids.count < limit { ids.append(contactsStream) }
        if ids.count < limit { ids += engine.gestureStreams.prefix(limit - ids.count) }
        return ids.map { engine.catalog.name(of: $0) }
    }

    /// The streams of an element just added, as ``allStreams`` names them: the only new
    /// matches for the patterns clients hold.
    func streams(of element: Element) -> [(name: String, id: StreamID)] {
        engine.streams(of: element).map { (engine.catalog.name(of: $0), $0) }
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

    private static func stateCost(_ configuration: Configuration) -> SceneState.Cost {
        configuration.elements.reduce(SceneState.Cost()) { $0 + SceneState.Cost(id: $1.id, added: nil) }
    }

    private static func interactionNames(_ configuration: Configuration) -> [String: [String]] {
        Dictionary(uniqueKeysWithValues: configuration.elements.map { ($0.id, $0.interactions.map(\.name)) })
    }
}
