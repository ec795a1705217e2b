import MotionConfiguration
import MotionCore
import MotionWire

/// The scene the daemon runs and what it was made from: the engine, the configuration in
/// force, and the settings each element was made with. A reload replaces all three together
/// (or, when it keeps the scene, only what it changes: ``reloadKeepingScene(_:)``); the daemon, its
/// clients and its request dispatcher share this one object, so none of them can hold an
/// engine the others have dropped.
final class DaemonScene {
    /// The engine running the configured scene.
    private(set) var engine: MotionEngine
    /// The configuration in force.
    private(set) var configuration: Configuration
    /// The settings each element was made with: from the configuration, or read from the
    /// `add_element` object of one a client added.
    var settings: [String: ElementSettings] = [:]
    /// The `add_element` object of each element a client added, as it was sent: what the
    /// state file keeps to add it again after a restart.
    private(set) var added: [String: JSONValue] = [:]
    /// What the elements take of a state file's limits, at most: kept up to date as they come
    /// and go, so that `add_element` can refuse an element the file could not hold.
    private(set) var stateCost = SceneState.Cost()
    /// `screen.contacts`, which the engine reports while someone follows it.
    private(set) var contactsStream: StreamID
    private let clock: FrameClock

    init(_ configuration: Configuration, clock: FrameClock) {
        self.clock = clock
        self.configuration = configuration
        self.engine = configuration.makeEngine(clock: clock)
        self.contactsStream = engine.reportContacts()
        settings = Self.settings(configuration)
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
        contactsStream = engine.reportContacts()
        settings = Self.settings(configuration)
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
        self.settings[settings.id] = settings
        added[settings.id] = object
        stateCost += cost
        return element
    }

    /// Makes room for `count` elements about to be added (a kept scene restored).
    func reserveCapacity(added count: Int) {
        engine.reserveCapacity(elements: count)
        settings.reserveCapacity(settings.count + count)
        added.reserveCapacity(added.count + count)
    }

    /// Removes an element, as `remove_element` does.
    func remove(_ id: String) throws(ProtocolError) {
        guard engine.scene.element(id) != nil, id != engine.scene.container.id else {
            throw ProtocolError(.unknownElement, "no element is called '\(id)'")
        }
        engine.remove(id)
        forget(id)
    }

    /// Forgets what was kept of an element that went.
    func forget(_ id: String) {
        settings[id] = nil
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
            ("interactions", .array((settings[element.id]?.interactions ?? []).map { .string($0.name) })),
        ])
    }

    // MARK: A reload that keeps the scene

    /// A reload that keeps the scene (``reloadKeepingScene(_:)``): what it takes out to make
    /// again, where each of those was, and the elements clients added, in order.
    struct Reload {
        /// The configuration reloaded.
        let configuration: Configuration
        /// The elements it takes out: the configuration's that it changes or drops, the added
        /// ones whose id it now gives a configured element, and every element that follows
        /// one of those (a spring toward an element holds that element's position).
        let remade: Set<String>
        /// Where each of those was, in the scene's order, as the state file would keep it.
        let places: [SceneState.Element]
        /// The ids of the elements clients added, in the scene's order.
        let added: [String]
        /// Whether the elements change at all.
        let changesElements: Bool
    }

    /// How a reload to `configuration` can keep the scene, or nil when it cannot. The screen,
    /// `[gestures]`, prediction and the screen gestures shape every element: a reload that
    /// changes one of them makes the scene anew (``replace(with:)``). Otherwise it makes anew
    /// only the elements it changes (``Reload/remade``) and keeps the rest as they are, where
    /// they are, moving as they move: at ten thousand elements, remaking them all took seconds.
    func reloadKeepingScene(_ configuration: Configuration) -> Reload? {
        let old = self.configuration
        guard configuration.screen == old.screen, configuration.gestures == old.gestures,
              configuration.prediction == old.prediction, configuration.screenGestures == old.screenGestures else { return nil }
        let before = Dictionary(uniqueKeysWithValues: old.elements.map { ($0.id, $0) })
        let after = Dictionary(uniqueKeysWithValues: configuration.elements.map { ($0.id, $0) })
        // The configuration's elements changed or dropped, and its new ones (which may take an
        // added element's id)...
        var changed = Set(old.elements.filter { after[$0.id] != $0 }.map(\.id))
        changed.formUnion(configuration.elements.filter { before[$0.id] == nil }.map(\.id))
        // ...and the elements following one of them, and those following those.
        var followers: [String: [String]] = [:]
        for (id, settings) in settings {
            for case .element(let followed)? in settings.interactions.map(\.destination) { followers[followed, default: []].append(id) }
        }
        var unvisited = Array(changed)
        while let id = unvisited.popLast() {
            for follower in followers[id] ?? [] where changed.insert(follower).inserted { unvisited.append(follower) }
        }
        let limits = configuration.valueLimits
        let elements = engine.scene.elements
        let remade = elements.filter { changed.contains($0.id) }
        return Reload(configuration: configuration, remade: Set(remade.map(\.id)), places: remade.map { saved($0, limits: limits) },
                      added: elements.map(\.id).filter { added[$0] != nil }, changesElements: !changed.isEmpty)
    }

    /// The first half of `reload`: every touch ends (``MotionEngine/letGoOfTouches()``) and the
    /// elements to make again go. What they reported (gestures cancelled, streams gone) is to
    /// reach the clients before ``complete(_:)`` gives their streams' numbers to new ones.
    func takeApart(for reload: Reload) {
        engine.letGoOfTouches()
        engine.remove(reload.remade)
        for id in reload.remade { forget(id) }
    }

    /// The second half of `reload`: the configuration's missing elements are made, the added
    /// ones taken out are added again, each goes back where it was (as a restore puts a kept
    /// scene back, saying what it cannot put back), and the scene is put in order: the
    /// configuration's elements first, as in a scene made anew. The notes, and the new streams.
    func complete(_ reload: Reload) -> (notes: [String], streams: [(name: String, id: StreamID)]) {
        configuration = reload.configuration
        engine.idleAfter = configuration.idleAfter
        let kept = Set(engine.scene.elements.map(ObjectIdentifier.init))
        // Every element before any interaction, as at a start: a spring may follow an element
        // made after it.
        let missing = configuration.elements.filter { engine.scene.element($0.id) == nil }
        let made = Dictionary(uniqueKeysWithValues: missing.map { ($0.id, $0.makeElement()) })
        for settings in missing {
            let element = made[settings.id]!
            engine.add(element, interactions: settings.makeInteractions(for: element, in: engine) { [engine] in
                made[$0]?.position ?? engine.scene.element($0)?.position
            })
            self.settings[settings.id] = settings
            stateCost += SceneState.Cost(id: settings.id, added: nil)
        }
        let notes = restore(SceneState(elements: reload.places))
        engine.arrange(configuration.elements.map(\.id) + reload.added.filter { added[$0] != nil })
        let new = engine.scene.elements.filter { !kept.contains(ObjectIdentifier($0)) }
        return (notes, new.flatMap(streams(of:)))
    }

    private static func stateCost(_ configuration: Configuration) -> SceneState.Cost {
        configuration.elements.reduce(SceneState.Cost()) { $0 + SceneState.Cost(id: $1.id, added: nil) }
    }

    private static func settings(_ configuration: Configuration) -> [String: ElementSettings] {
        Dictionary(uniqueKeysWithValues: configuration.elements.map { ($0.id, $0) })
    }
}
