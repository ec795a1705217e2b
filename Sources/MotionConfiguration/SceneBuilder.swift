import MotionCore

extension Configuration {
    /// Builds the engine this configuration describes, its springs on `clock`.
    public func makeEngine(clock: FrameClock) -> MotionEngine {
        let engine = MotionEngine(scene: Scene(size: screen), clock: clock, thresholds: gestures, idleAfter: idleAfter, prediction: prediction)
        // Every element first: a spring may pull toward another element's position.
        let built = Dictionary(uniqueKeysWithValues: elements.map { ($0.id, $0.makeElement()) })
        for settings in elements {
            let element = built[settings.id]!
            engine.add(element, interactions: settings.makeInteractions(for: element, in: engine) { built[$0]?.position })
        }
        engine.watch(screenGestures)
        return engine
    }
}

extension ElementSettings {
    /// The element, without its interactions.
    public func makeElement() -> Element {
        let element = Element(id: id, center: center, size: size, rotation: rotation, scale: scale, zOrder: z)
        element.claimsTouches = claimsTouches
        return element
    }

    /// The element's interactions; `position` finds another element's position by id, for
    /// a spring that pulls toward it.
    public func makeInteractions(for element: Element, in engine: MotionEngine, position: (String) -> ReactiveProperty<Point>?) -> [any Interaction<Element>] {
        func destination(_ settings: DestinationSettings) -> ReactiveProperty<Point> {
            switch settings {
            case .point(let point): return ReactiveProperty(point)
            case .element(let id): return position(id) ?? ReactiveProperty(element.position.value)
            }
        }
        var made: [any Interaction<Element>] = []
        var attached: ReactiveProperty<Point>?, tossed: ReactiveProperty<Point>?
        for interaction in interactions {
            switch interaction {
            case let .draggable(bounds, maxLength, spring):
                made.append(Draggable(bounds: bounds, maxLength: maxLength, configuration: spring))
            case let .tossable(target, snapPoints, spring):
                let tossable = Tossable(element: element, destination: target.map(destination) ?? ReactiveProperty(center),
                                        snapPoints: snapPoints, configuration: spring)
                tossed = tossable.destination
                made.append(tossable)
            case let .attach(target, spring):
                let attach = Attach(position: element.position, to: destination(target), configuration: spring)
                attached = attach.destination
                made.append(attach)
            case .rotatable:
                made.append(Rotatable())
            case let .scalable(minimum, maximum, spring):
                made.append(Scalable(minimum: minimum, maximum: maximum, configuration: spring))
            case .directlyManipulable:
                made.append(DirectlyManipulable(minimumSpan: engine.thresholds.minimumSpan.pixels))
            case .changeDirection(let minimumVelocity, let axis):
                made.append(ChangeDirection(minimumVelocity: minimumVelocity, axis: axis))
            case .setPositionOnTap:
                break  // below, once the attach or tossable it may target exists
            }
        }
        for case .setPositionOnTap(let target) in interactions {
            engine.scene.container.needs(.tap)
            let property: ReactiveProperty<Point>? = target == .attach ? attached : target == .tossable ? tossed : nil
            made.append(SetPositionOnTap(taps: engine.scene.container.gestures.tap, target: property))
        }
        if let resetAfter { made.append(Resettable(element: element, after: resetAfter)) }
        return made
    }
}

extension InteractionSettings {
    /// Where the interaction sends its element, for those that have a destination.
    public var destination: DestinationSettings? {
        switch self {
        case .tossable(let destination, _, _): return destination
        case .attach(let destination, _): return destination
        default: return nil
        }
    }
}
