import MotionConfiguration
import MotionCore

/// The scene to and from its ``SceneState``: what the state file keeps, and how a kept
/// scene is put back over the one the configuration makes.
extension DaemonScene {
    /// The scene as the state file keeps it: every element's place now, and the
    /// `add_element` object of each one a client added; and the limits the file will be read
    /// back under. Values beyond what a file may hold (an element flung far off screen, a
    /// rotation wound past a million radians) are kept at the nearest value it may.
    func savedState() -> (state: SceneState, limits: ValueLimits) {
        let limits = configuration.valueLimits
        return (SceneState(elements: engine.scene.elements.map { saved($0, limits: limits) }), limits)
    }

    /// One element as the state file keeps it.
    func saved(_ element: Element, limits: ValueLimits) -> SceneState.Element {
        SceneState.Element(
            id: element.id, added: added[element.id] ?? .none,
            position: Self.clamp(element.position.value, limits),
            rotation: Self.clamp(element.rotation.value, SceneState.rotations, otherwise: 0),
            scale: Self.clamp(element.scale.value, SceneState.scales, otherwise: 1),
            destination: destination(of: element).map { Self.clamp($0, limits) })
    }

    /// Puts `state` back over the scene the configuration made: adds again the elements
    /// clients had added, in their order, then puts every element where it was. What no longer
    /// fits the configuration (an element renamed or removed, an added one whose id the
    /// configuration now uses or whose settings it now refuses) is left out and said, one
    /// line each; everything else is restored.
    func restore(_ state: SceneState) -> [String] {
        let limits = configuration.valueLimits
        var notes: [String] = []
        reserveCapacity(added: state.elements.count { $0.added != nil })
        for saved in state.elements {
            // The element added again, or the configuration's of that id.
            let element: Element?
            if let added = saved.added {
                if engine.scene.element(saved.id) != nil || saved.id == engine.scene.container.id {
                    notes.append("'\(saved.id)', which a client added, is not restored: the configuration now has an element of that name")
                    continue
                }
                do throws(ProtocolError) {
                    element = try add(ElementInput.settings(from: added, limits: limits), object: added)
                } catch {
                    notes.append("'\(saved.id)', which a client added, is not restored: \(error.message)")
                    continue
                }
            } else {
                element = engine.scene.element(saved.id)
            }
            if let note = putBack(saved, on: element, limits: limits) { notes.append(note) }
        }
        return notes
    }

    /// Puts `element`, the one `saved` names (nil when there is none), where it was; what was
    /// not put back, if anything.
    func putBack(_ saved: SceneState.Element, on element: Element?, limits: ValueLimits) -> String? {
        guard let element else {
            return "'\(saved.id)' is not in the configuration any more: its saved place is dropped"
        }
        if let problem = limits.problem(position: saved.position) {
            return "'\(saved.id)' stays where the configuration puts it: its saved position is off this screen (\(problem))"
        }
        element.position.value = saved.position
        element.rotation.value = saved.rotation
        element.scale.value = saved.scale
        // After the position: a spring set going by its destination starts from there,
        // and stays still when the element was at rest.
        if let destination = saved.destination, limits.problem(position: destination) == nil,
           let write = Self.destinationProperty(of: element)?.write {
            _ = write(.point(destination))
        }
        return nil
    }

    /// Where the element's tossable or attach takes it, if it has one.
    private func destination(of element: Element) -> Point? {
        guard case .point(let point) = Self.destinationProperty(of: element)?.read() else { return nil }
        return point
    }

    /// `ID.destination`, which its tossable or attach publishes: found among the element's
    /// own properties, not by name among every stream of the scene.
    private static func destinationProperty(of element: Element) -> PublishedProperty? {
        element.extraProperties.first { $0.name == "destination" }?.property
    }

    private static func clamp(_ point: Point, _ limits: ValueLimits) -> Point {
        Point(x: clamp(point.x, limits.x, otherwise: 0), y: clamp(point.y, limits.y, otherwise: 0))
    }

    /// `value` within `range`; `otherwise` when it is not a number at all (the engine puts
    /// such values right before they are published, so this is only a last guard).
    private static func clamp(_ value: Double, _ range: ClosedRange<Double>, otherwise: Double) -> Double {
        value.isFinite ? Swift.min(Swift.max(value, range.lowerBound), range.upperBound) : otherwise
    }
}
