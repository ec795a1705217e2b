/// The scene as the engine runs it: elements added and removed while it runs, the streams
/// each publishes, and handing the fingers to the engine a reload makes.
extension MotionEngine {
    /// Every stream's name and number.
    public var catalog: StreamCatalog { published.catalog }

    /// Seconds without a touch before `screen.idle` turns true.
    public var idleAfter: Double {
        get { attract.idleAfter }
        set { attract.idleAfter = newValue }
    }

    /// `screen.idle`: false while anyone touches the screen, true once nobody has for
    /// ``idleAfter`` seconds.
    public var isIdle: Bool { attract.idle.value }

    /// `.active` while any element moves.
    public var state: ReadOnlyProperty<MotionState> { activity.state }

    /// The runtime of an element's interactions.
    public func runtime(of id: String) -> MotionRuntime? { scene.element(id).flatMap { entries[ObjectIdentifier($0)] }?.runtime }

    /// Adds an element with its interactions, while running or not.
    public func add(_ element: Element, interactions: [any Interaction<Element>]) {
        scene.add(element)
        attach(element, interactions: interactions)
    }

    /// Makes room for `count` more elements, before adding them one by one (a kept scene
    /// restored, thousands at once): the tables of elements and of streams are then made
    /// once at their size instead of growing, and rehashing every name, as they fill.
    public func reserveCapacity(elements count: Int) {
        scene.reserveCapacity(count)
        elements.reserveCapacity(elements.count + count)
        entries.reserveCapacity(entries.count + count)
        // About ten streams an element: six of its geometry and state, a few of its interactions'.
        published.reserveCapacity(count * 10)
    }

    /// Adds interactions to the container, the screen.
    public func addToContainer(_ interactions: [any Interaction<Element>]) {
        let runtime = elements[0].runtime
        for interaction in interactions { runtime.add(interaction, to: scene.container) }
    }

    /// Reports the fingers on the screen as the stream `name` (``ScreenContacts``), numbered
    /// like the rest and published in the report's values, after the elements' (while
    /// someone follows them, ``followContacts(_:)``).
    public func reportContacts(on name: String = ScreenContacts.name) -> StreamID {
        let stream = published.catalog.id(named: name) ?? published.register(name, kind: .contacts)
        contactsStream = stream
        return stream
    }

    /// Whether anyone follows the fingers: only then are they compared frame by frame and
    /// reported. Unfollowed, they are forgotten, so that a later follower does not get
    /// stale ones.
    public func followContacts(_ followed: Bool) {
        followsContacts = followed
        if !followed { screenContacts.reset() }
    }

    /// A stream's current value: its property's, or the fingers; nil for a stream with no
    /// value (a gesture's) or none at all.
    public func currentValue(_ stream: StreamID) -> PublishedValue? {
        if stream == contactsStream { return .contacts(screenContacts.contacts) }
        return property(stream)?.read()
    }

    /// Removes an element: its gestures are cancelled, its interactions disconnected, and the
    /// fingers on it are ignored until they lift. The cancellations and the streams that went
    /// (``FrameReport/removedStreams``) are in the next report (``tick(at:)``).
    public func remove(_ id: String) {
        guard let found = scene.element(id), found !== scene.container, let element = entries.removeValue(forKey: ObjectIdentifier(found)) else { return }
        startReport(at: clock.now)
        cancelTouches(of: element, at: clock.now)
        element.detach()
        // Comparing references: one walk over the scene, without reading an id. Found apart:
        // an index found in the call would hold the array, and the removal would copy it.
        let index = elements.firstIndex { $0 === element }!
        elements.remove(at: index)
        attract.remove(element.element)
        let gone = element.values.map(\.id) + element.gestureStreams.compactMap { $0 }
        published.remove(gone)
        report.removedStreams += gone
        scene.remove(id)
    }

    /// Removes the elements named `ids` together, as ``remove(_:)`` removes one, walking the
    /// scene once for them all: a reload may remake thousands.
    public func remove(_ ids: Set<String>) {
        let targets = Set(ids.compactMap { scene.element($0) }.filter { $0 !== scene.container }.map(ObjectIdentifier.init))
        // In the scene's order, so that what they report comes in the same order every run.
        let gone = elements.filter { targets.contains(ObjectIdentifier($0.element)) }
        guard !gone.isEmpty else { return }
        startReport(at: clock.now)
        for element in gone {
            entries[ObjectIdentifier(element.element)] = nil
            cancelTouches(of: element, at: clock.now)
            element.detach()
            let streams = element.values.map(\.id) + element.gestureStreams.compactMap { $0 }
            published.remove(streams)
            report.removedStreams += streams
        }
        let goneElements = Set(gone.map { ObjectIdentifier($0) })
        elements.removeAll { goneElements.contains(ObjectIdentifier($0)) }
        attract.remove(targets)
        scene.remove(ids)
    }

    /// Puts the elements in the order of `ids`, each element's id once (the container stays
    /// first): the order hit testing breaks ties in and values are published in. A reload
    /// that keeps the scene puts the configuration's elements first this way, as in a scene
    /// made anew.
    public func arrange(_ ids: [String]) {
        let order = ids.map { scene.element($0)! }
        scene.arrange(order)
        elements = [elements[0]] + order.map { entries[ObjectIdentifier($0)]! }
        for (ordinal, entry) in elements.enumerated() { published.rank(entry, as: ordinal) }
        attached = elements.count
    }

    /// Ends every touch in progress as a reload does, for a reload that keeps this engine and
    /// its scene (the screen, `[gestures]`, prediction and the screen gestures as they were):
    /// the gestures on elements end `cancelled` (in the next report), the fingers down go to
    /// no element until they lift, and each element's recognizers start afresh at its next
    /// touch, as a scene made anew would. The screen's gestures carry on, as they do in a
    /// successor with the same patterns (``handOver(to:)``); the idle period starts again.
    public func letGoOfTouches() {
        let time = clock.now
        startReport(at: time)
        for element in elements {
            cancelTouches(of: element, at: time)
            element.recognizers = nil
        }
        router = router.handedOver
        attract.restart(at: time)
    }

    /// Takes the fingers from an element: its gestures in progress end `cancelled` (its
    /// interactions and its gesture streams hear so), and the fingers go to no element until
    /// they lift.
    func cancelTouches(of element: EngineElement, at time: Double) {
        var ids: [Int32] = []
        router.elementGone(element, into: &ids)
        guard !ids.isEmpty else { return }
        let position = element.element.position.value
        let cancelled = TouchFrame(time: time, contacts: ids.sorted().map { id in
            TouchContact(slot: 0, trackingID: id, phase: .cancelled, deviceX: 0, deviceY: 0, position: position)
        })
        deliver(cancelled, to: element)
    }

    /// Hands the touches in progress over to `successor`, the engine a reload made from the
    /// new configuration, before this one is taken apart (``disconnect()``), so that every
    /// gesture begun ends; returns the report of those endings. The gestures on elements end
    /// `cancelled` here: the successor's elements are new ones, where the configuration puts
    /// them, and the fingers down go to none of them until they lift. The screen's gestures
    /// carry on in the successor where its patterns keep them, and end here where not
    /// (``ScreenGestures/handOver(to:at:into:)``). The successor knows the fingers are down,
    /// so the screen does not go idle under them.
    public func handOver(to successor: MotionEngine) -> FrameReport {
        let time = clock.now
        startReport(at: time)
        for element in elements { cancelTouches(of: element, at: time) }
        if let screenWatch {
            screenWatch.handOver(to: successor.screenWatch, at: time, into: &screenEvents)
            reportScreenGestures()
        }
        successor.router = router.handedOver
        // The fingers down keep their numbers, and a follower does not hear them again.
        successor.screenContacts = screenContacts
        successor.followsContacts = followsContacts
        // A lock goes on across a reload: the screen is still being cleaned. The clients are
        // sent the new scene's values as they subscribe to them again, `screen.locked` true
        // among them: not a change to send once more.
        if let lockedUntil {
            successor.lockedUntil = lockedUntil
            successor.locked.value = true
            if let stream = successor.catalog.id(named: ElementStream(element: successor.scene.container.id, property: "locked").name) {
                successor.published.alreadyPublished(stream, as: .bool(true))
            }
        }
        reportPhase = .handedOut
        return report
    }

    /// Takes the engine apart, for good: every interaction is disconnected (springs in flight
    /// stop and no longer observe the clock), the links that published the elements'
    /// properties are cut, and nothing more is reported. Springs hold themselves alive
    /// through their subscriptions, so an engine that is only dropped keeps its scene in
    /// memory and keeps the clock ticking; a reload calls this on the engine it replaces,
    /// after ``handOver(to:)``. Touches still in progress are forgotten.
    public func disconnect() {
        for element in elements { element.detach() }
        elements = []
        entries = [:]
        router = ContactRouter()
        published.removeAll()
    }

    /// Numbers an element's streams and follows its properties.
    func attach(_ element: Element, interactions: [any Interaction<Element>]) {
        let runtime = MotionRuntime(clock: clock)
        let entry = EngineElement(element: element, runtime: runtime)
        elements.append(entry)
        entries[ObjectIdentifier(element)] = entry
        let ordinal = attached
        attached += 1
        for interaction in interactions { runtime.add(interaction, to: element) }
        // Cast as a class, not as an existential: the runtime's cast of one took thousands of
        // instructions an element.
        if let reset = interactions.lazy.compactMap({ ($0 as AnyObject) as? Resettable }).first { attract.add(reset, of: element) }

        let predicted = predictions != nil && element !== scene.container ? PredictedElement(element) : nil
        let predictedStreams = predicted?.streams ?? []
        // Filled here and handed to the entry whole: each change to an array an object holds
        // is checked at run time for another access at once.
        let count = 6 + predictedStreams.count + element.extraProperties.count + (element === scene.container ? 2 : 0)
        var values: [(id: StreamID, property: PublishedProperty)] = []
        var links: [Subscription] = []
        values.reserveCapacity(count)
        links.reserveCapacity(count + 1)
        /// Numbers the stream `name` of `property`, next in the element's order, and follows it
        /// (with `follow`, given the stream's number, if not as every property is).
        func publish(_ name: String, _ property: PublishedProperty, follow: ((Int) -> Subscription)? = nil) {
            let rank = PublishedStreams.Rank(element: ordinal, place: values.count)
            let stream = published.register(ElementStream(element: element.id, property: name).name, kind: .value, property: property, publishedAs: (entry: entry, rank: rank))
            values.append((stream, property))
            // Later writes only: what the property holds now is what registering read.
            links.append(follow?(stream.index) ?? property.follow(writes, stream.index))
        }
        publish("position", .writablePoint(element.position))
        publish("size", .size(element.size))
        publish("rotation", .number(element.rotation, writable: -1e6...1e6))
        publish("scale", .number(element.scale, writable: 1e-6...1e6))
        publish("state", .text(element.state) { $0.rawValue })
        // One link that also lets go of the fingers when the element is turned off.
        publish("enabled", .flag(element.enabled)) { element.enabled.follow(values: self.writes, tag: $0) }
        if let predicted {
            element.predicted = predicted
            for (name, property) in predictedStreams { publish(name, property) }
        }
        for extra in element.extraProperties { publish(extra.name, extra.property) }
        if element === scene.container {
            publish("idle", .flag(attract.idle.readOnly))
            publish("locked", .flag(locked.readOnly))
        }
        entry.values = values
        nameGestureStreams(of: entry)
        entry.activityLink = activity.follow(element.state)
        if !element.enabled.value { disabled(entry) }
        entry.links = links
    }

    /// Numbers the streams of the gestures `entry`'s interactions asked for, in the order of
    /// ``GestureKind/allCases``.
    private func nameGestureStreams(of entry: EngineElement) {
        // The kinds as bits by their place in `allCases`, from one walk over the set: asking
        // the set for each kind hashed seven times an element.
        var kinds = 0
        for kind in entry.element.recognizers { kinds |= 1 << kind.allCasesIndex }
        entry.gestureStreams = GestureKind.allCases.map { kind in
            kinds & (1 << kind.allCasesIndex) != 0 ? published.register(ElementStream(element: entry.element.id, property: kind.rawValue).name, kind: .gesture) : nil
        }
    }

    /// An element turned off lets go of the fingers holding it, as UIKit cancels a disabled
    /// recognizer's gesture: its gestures in progress end `cancelled`, so a drag does not
    /// carry on, nor a toss at the lift override a destination set meanwhile; the fingers
    /// move nothing until they lift. The cancellations are in the next report.
    func disabled(_ element: EngineElement) {
        startReport(at: clock.now)
        cancelTouches(of: element, at: clock.now)
    }

    /// Every stream the engine publishes values on, with its current value, in publication
    /// order (elements as added, each element's properties in a fixed order).
    public var streams: [(stream: String, value: PublishedValue)] {
        elements.flatMap { entry in entry.values.map { (catalog.name(of: $0.id), $0.property.read()) } }
    }

    /// The value streams' numbers, in publication order.
    public var valueStreams: [StreamID] { elements.flatMap { $0.values.map(\.id) } }

    /// The value streams' numbers, in publication order, made as they are read: for whoever
    /// wants only the first few of a large scene's.
    public var valueStreamsInOrder: some Sequence<StreamID> { elements.lazy.flatMap { $0.values.lazy.map(\.id) } }

    /// One element's streams: its values in publication order, then its gestures.
    public func streams(of element: Element) -> [StreamID] {
        guard let entry = entries[ObjectIdentifier(element)] else { return [] }
        return entry.values.map(\.id) + entry.gestureStreams.compactMap { $0 }
    }

    /// Every element's gesture streams, in the order of elements (the container first) and
    /// then of ``GestureKind/allCases``.
    public var gestureStreams: [StreamID] {
        elements.flatMap { $0.gestureStreams.compactMap { $0 } } + (screenWatch.map { [$0.stream] } ?? [])
    }

    /// A published stream by name, to read or (if it allows) write.
    public func property(_ stream: String) -> PublishedProperty? {
        catalog.id(named: stream).flatMap { property($0) }
    }

    /// A published stream by number.
    public func property(_ stream: StreamID) -> PublishedProperty? { published.property(stream) }

    /// The last value published on `stream`, or nil when there is no such stream.
    public func lastValue(_ stream: String) -> PublishedValue? {
        catalog.id(named: stream).flatMap { published.lastValue($0) }
    }
}
