import FoundationEssentials
import MotionCore
import TOMLKit
import TouchInput

/// One `[[element]]`: its place, size and interactions, as the configuration file gives it
/// and as `add_element` gives it in a client's JSON, read by the same rules.
extension Configuration {
    static func readElement(_ table: inout TableReader) throws(ConfigurationError) -> ElementSettings {
        guard let id = try table.string("id") else { throw table.error(nil, "an element needs an id") }
        if let problem = ElementSettings.idProblem(id) { throw table.error("id", problem) }
        guard let center = try table.point("center") else { throw table.error(nil, "element '\(id)' needs a center, like center = [960, 540]") }
        guard let size = try table.size("size") else { throw table.error(nil, "element '\(id)' needs a size, like size = [400, 300]") }
        var element = ElementSettings(id: id, center: center, size: size)
        element.rotation = try table.number("rotation") ?? 0
        element.scale = try table.number("scale", in: 0.000_001...1_000_000) ?? 1
        element.z = try table.int("z") ?? 0
        element.resetAfter = try table.number("reset_after", in: Self.idleSeconds)
        element.claimsTouches = try table.bool("claim_touches") ?? true
        try readMovingInteractions(&table, into: &element)
        try readOtherInteractions(&table, into: &element)
        // Asked of the interactions themselves: a list of their names would be an
        // allocation per element read, for checks that seldom fail.
        let interactions = element.interactions
        if interactions.contains(where: { $0.name == "directly_manipulable" }),
           let other = interactions.first(where: { ["draggable", "tossable", "rotatable", "scalable"].contains($0.name) })?.name {
            throw table.error("directly_manipulable", "directly_manipulable already drags, rotates and scales; it cannot be combined with \(other)")
        }
        if interactions.contains(where: { $0.name == "draggable" }) && interactions.contains(where: { $0.name == "tossable" }) {
            throw table.error("tossable", "tossable already drags; remove draggable")
        }
        try table.finish()
        return element
    }

    /// An element's draggable, tossable and attach, which move it.
    private static func readMovingInteractions(_ table: inout TableReader, into element: inout ElementSettings) throws(ConfigurationError) {
        let id = element.id
        if var draggable = try table.table("draggable") {
            element.interactions.append(.draggable(
                bounds: try draggable.rect("bounds"), maxLength: try draggable.number("max_length", in: 0...10_000) ?? 48,
                spring: try draggable.spring("spring")))
            try draggable.finish()
        }
        if var tossable = try table.table("tossable") {
            let destination = try tossable.destination("destination")
            let snaps = try tossable.points("snap_points") ?? [:]
            if destination == nil && snaps.isEmpty {
                throw tossable.error(nil, "a tossable needs a destination (a point or an element id) or snap_points")
            }
            if destination != nil && !snaps.isEmpty {
                throw tossable.error("snap_points", "give a destination or snap_points, not both: snap points choose the destination")
            }
            element.interactions.append(.tossable(destination: destination, snapPoints: snaps, spring: try tossable.spring("spring")))
            try tossable.finish()
        }
        if var attach = try table.table("attach") {
            if element.interactions.contains(where: { $0.name == "tossable" }) {
                // Both publish ID.destination and ID.spring, and both spring the position.
                throw attach.error(nil, "element '\(id)' has tossable and attach: both spring the element to a destination (and both publish \(id).destination); keep one")
            }
            guard let destination = try attach.destination("destination") else {
                throw attach.error(nil, "attach needs a destination: a point like [960, 540] or an element id")
            }
            element.interactions.append(.attach(destination: destination, spring: try attach.spring("spring")))
            try attach.finish()
        }
    }

    /// An element's other interactions: rotatable, scalable, directly_manipulable,
    /// set_position_on_tap and change_direction.
    private static func readOtherInteractions(_ table: inout TableReader, into element: inout ElementSettings) throws(ConfigurationError) {
        if let rotatable = try table.table("rotatable") {
            element.interactions.append(.rotatable)
            try rotatable.finish()
        }
        if var scalable = try table.table("scalable") {
            let minimum = try scalable.number("minimum", in: 0.000_001...1_000_000)
            let maximum = try scalable.number("maximum", in: 0.000_001...1_000_000)
            if let minimum, let maximum, minimum > maximum {
                throw scalable.error("maximum", "maximum (\(compactNumber(maximum))) is below minimum (\(compactNumber(minimum)))")
            }
            element.interactions.append(.scalable(minimum: minimum, maximum: maximum, spring: try scalable.spring("spring")))
            try scalable.finish()
        }
        if let direct = try table.table("directly_manipulable") {
            element.interactions.append(.directlyManipulable)
            try direct.finish()
        }
        if var tap = try table.table("set_position_on_tap") {
            let name = try tap.string("target") ?? "position"
            guard let target = InteractionSettings.TapTarget(rawValue: name) else {
                throw tap.error("target", "target is \"position\", \"attach\" or \"tossable\", not \"\(name)\"")
            }
            element.interactions.append(.setPositionOnTap(target: target))
            try tap.finish()
        }
        if var direction = try table.table("change_direction") {
            let axisName = try direction.string("axis") ?? "vertical"
            guard let axis = ChangeDirection.Axis(rawValue: axisName) else {
                throw direction.error("axis", "axis is \"vertical\" or \"horizontal\", not \"\(axisName)\"")
            }
            element.interactions.append(.changeDirection(minimumVelocity: try direction.number("minimum_velocity", in: 0...100_000) ?? 100, axis: axis))
            try direction.finish()
        }
    }
}

extension ElementSettings {
    /// Reads one element as the configuration file's `[[element]]` gives it, from a table
    /// of another origin (what `add_element` reads from the client's JSON). Errors have no
    /// line.
    package static func read(_ table: SettingsTable, source: String, limits: ValueLimits) throws(ConfigurationError) -> ElementSettings {
        // No text, so no lines to find: an empty locator, not one made from "".
        var reader = TableReader(table, path: ["element"], context: ReadContext(file: source, locator: TOMLLocator()))
        reader.limits = limits
        return try Configuration.readElement(&reader)
    }

    /// What is wrong with the element's references to other elements, given the ids of
    /// every element (its own included); nil when nothing is. The configuration file and
    /// `add_element` both ask this, so they agree.
    package func referenceProblem(among ids: Set<String>) -> (keys: [String], message: String)? {
        referenceProblem(isElement: ids.contains, elements: { Array(ids) })
    }

    /// The same, asking `isElement` whether an id names an element, and `elements` for them
    /// all only to say which there are: a running scene answers the first at once, and need
    /// not gather thousands of ids for an element that refers to none.
    package func referenceProblem(isElement: (String) -> Bool, elements: () -> [String]) -> (keys: [String], message: String)? {
        for interaction in interactions {
            if case .element(let other)? = interaction.destination, !isElement(other) || other == id {
                return ([interaction.name, "destination"],
                        other == id ? "an element cannot be its own destination" : "no element is called '\(other)' (the elements are: \(Set(elements()).sorted().joined(separator: ", ")))")
            }
            if case .setPositionOnTap(let target) = interaction, target != .position,
               !interactions.contains(where: { $0.name == target.rawValue }) {
                return (["set_position_on_tap", "target"], "target = \"\(target.rawValue)\" needs the element to have \(target.rawValue) too")
            }
        }
        return nil
    }
}
