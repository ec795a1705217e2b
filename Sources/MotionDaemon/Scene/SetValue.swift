import MotionConfiguration
import MotionCore
import MotionWire

/// What `set` takes: a client's JSON read as the kind of value the stream holds.
extension PublishedValue {
    /// A client's JSON as the kind of value a stream holds, or nil if it has another shape.
    static func from(_ input: JSONInput, like current: PublishedValue) -> PublishedValue? {
        switch current {
        case .point:
            guard let x = input["x"]?.number, let y = input["y"]?.number, input.object?.count == 2 else { return nil }
            return .point(Point(x: x, y: y))
        case .size:
            guard let w = input["width"]?.number, let h = input["height"]?.number, input.object?.count == 2 else { return nil }
            return .size(Size(width: w, height: h))
        case .number: return input.number.map { .number($0) }
        case .bool: return input.bool.map { .bool($0) }
        case .text: return input.string.map { .text($0) }
        case .spring(let spring):
            guard let object = input.object, Set(object.keys).isSubset(of: ["tension", "friction", "mass"]) else { return nil }
            return .spring(SpringConfiguration(
                tension: input["tension"]?.number ?? spring.tension, friction: input["friction"]?.number ?? spring.friction,
                mass: input["mass"]?.number ?? spring.mass))
        case .contacts: return nil
        }
    }

    /// The shape `set` expects, for its error message.
    static func shape(of value: PublishedValue) -> String {
        switch value {
        case .point: return "{\"x\": …, \"y\": …}"
        case .size: return "{\"width\": …, \"height\": …}"
        case .number: return "a number"
        case .bool: return "true or false"
        case .text: return "a string"
        case .spring: return "{\"tension\": …, \"friction\": …, \"mass\": …}"
        case .contacts: return "nothing: the fingers are the touchscreens' to set"
        }
    }
}
