import MotionCore

extension Configuration {
    /// Builds the engine this configuration describes, its springs on `clock`.
    public func makeEngine(clock: FrameClock) -> MotionEngine {
        let engine = MotionEngine(scene: Scene(size: screen), clock: clock, thresholds: gestures)
        // Every element first: a spring may pull toward another element's position.
        let built = Dictionary(uniqueKeysWithValues: elements.map { settings in
            (settings.id, Element(id: settings.id, center: settings.center, size: settings.size,
                                  rotation: settings.rotation, scale: settings.scale, zOrder: settings.z))
        })
        func destination(_ settings: DestinationSettings) -> ReactiveProperty<Point> {
            switch settings {
            case .point(let point): return ReactiveProperty(point)
            case .element(let id): return built[id]!.position
            }
        }
        for settings in elements {
            let element = built[settings.id]!
            var interactions: [any Interaction<Element>] = []
            var attached: ReactiveProperty<Point>?, tossed: ReactiveProperty<Point>?
            for interaction in settings.interactions {
                switch interaction {
                case let .draggable(bounds, maxLength, spring):
                    interactions.append(Draggable(bounds: bounds, maxLength: maxLength, configuration: spring))
                case let .tossable(target, snapPoints, spring):
                    let tossable = Tossable(element: element, destination: target.map(destination) ?? ReactiveProperty(settings.center),
                                            snapPoints: snapPoints, configuration: spring)
                    tossed = tossable.destination
                    interactions.append(tossable)
                case let .attach(target, spring):
                    let attach = Attach(position: element.position, to: destination(target), configuration: spring)
                    attached = attach.destination
                    interactions.append(attach)
                case .rotatable:
                    interactions.append(Rotatable())
                case let .scalable(minimum, maximum, spring):
                    interactions.append(Scalable(minimum: minimum, maximum: maximum, configuration: spring))
                case .directlyManipulable:
                    interactions.append(DirectlyManipulable(minimumSpan: gestures.minimumSpanPixels))
                case .changeDirection(let minimumVelocity, let axis):
                    interactions.append(ChangeDirection(minimumVelocity: minimumVelocity, axis: axis))
                case .setPositionOnTap:
                    break  // below, once the attach or tossable it may target exists
                }
            }
            for case .setPositionOnTap(let target) in settings.interactions {
                engine.scene.container.needs(.tap)
                let property: ReactiveProperty<Point>? = target == .attach ? attached : target == .tossable ? tossed : nil
                interactions.append(SetPositionOnTap(taps: engine.scene.container.gestures.tap, target: property))
            }
            engine.add(element, interactions: interactions)
        }
        return engine
    }
}
