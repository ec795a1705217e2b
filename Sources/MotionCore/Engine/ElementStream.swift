/// A stream of one element's: its id and the property or gesture it carries, which the
/// protocol names `id.property` (`card.position`, `card.drag`, `screen.idle`).
///
/// Names are made here and read back here, so that the rule (an id has no dot, the part
/// after the first dot is the property) is written once.
public struct ElementStream: Hashable, Sendable {
    /// The element's id.
    public var element: String
    /// What the stream carries: a property (`position`) or a gesture (`drag`).
    public var property: String

    public init(element: String, property: String) {
        self.element = element
        self.property = property
    }

    /// The stream named `name`, or nil for a name that is not an element's and a property's.
    public init?(name: String) {
        guard let dot = name.utf8.firstIndex(of: UInt8(ascii: ".")), dot != name.startIndex,
              name.utf8.index(after: dot) != name.endIndex else { return nil }
        self.init(element: String(name[..<dot]), property: String(name[name.index(after: dot)...]))
    }

    /// The stream's name on the wire, made in one piece: a scene makes a dozen an element,
    /// and `+` made the string, then grew it.
    public var name: String {
        let count = element.utf8.count + 1 + property.utf8.count
        return String(unsafeUninitializedCapacity: count) { buffer in
            var end = buffer.initialize(from: element.utf8).1
            buffer[end] = UInt8(ascii: ".")
            end += 1
            return end + UnsafeMutableBufferPointer(rebasing: buffer[end...]).initialize(from: property.utf8).1
        }
    }
}
