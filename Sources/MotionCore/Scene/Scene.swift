/// The elements on screen, and the screen itself (the container).
///
/// Hit testing takes the topmost enabled element (highest z-order, then the one added last)
/// whose bounds, rotated and scaled as drawn, contain the point; a point on no element goes to
/// the container, which can carry interactions too (tap to move something there).
public final class Scene {
    /// The screen, as an element: its size is the output's.
    public let container: Element
    /// The elements, in the order they were added.
    public private(set) var elements: [Element] = []
    /// The same elements by id: a scene may hold thousands, and every request names one.
    private var byID: [String: Element] = [:]

    /// Creates an empty scene on a screen of `size` pixels.
    public init(size: Size) {
        container = Element(id: "screen", center: Point(x: size.width / 2, y: size.height / 2), size: size, zOrder: Int.min)
        container.claimsTouches = false
    }

    /// The element named `id`, or the container for "screen".
    public func element(_ id: String) -> Element? {
        id == container.id ? container : byID[id]
    }

    /// Adds an element. An id already used is a programming error; callers check first.
    public func add(_ element: Element) {
        // One lookup that both checks and inserts: a restore adds thousands.
        let taken = element.id == container.id ? container : byID.updateValue(element, forKey: element.id)
        precondition(taken == nil, "an element named \(element.id) exists")
        elements.append(element)
    }

    /// Makes room for `count` more elements.
    public func reserveCapacity(_ count: Int) {
        elements.reserveCapacity(elements.count + count)
        byID.reserveCapacity(byID.count + count)
    }

    /// Removes the element named `id`; returns it, or nil if there was none.
    @discardableResult
    public func remove(_ id: String) -> Element? {
        guard let element = byID.removeValue(forKey: id) else { return nil }
        // Comparing references, not ids: cheap enough to walk the scene once. Found apart:
        // an index found in the call would hold the array, and the removal would copy it.
        let index = elements.firstIndex { $0 === element }!
        elements.remove(at: index)
        return element
    }

    /// Removes the elements named `ids`, walking the scene once for them all.
    public func remove(_ ids: Set<String>) {
        var gone = Set<ObjectIdentifier>()
        for id in ids {
            if let element = byID.removeValue(forKey: id) { gone.insert(ObjectIdentifier(element)) }
        }
        elements.removeAll { gone.contains(ObjectIdentifier($0)) }
    }

    /// Puts the elements in `order`: the same elements, each once.
    public func arrange(_ order: [Element]) {
        precondition(order.count == elements.count && Set(order.map(ObjectIdentifier.init)) == Set(elements.map(ObjectIdentifier.init)),
                     "an arrangement holds the scene's elements, each once")
        elements = order
    }

    /// The topmost element under `point`, or the container.
    public func hitTest(_ point: Point) -> Element {
        var best: (element: Element, z: Int, order: Int)?
        for (order, element) in elements.enumerated() where element.enabled.value && element.contains(point) {
            let z = element.zOrder.value
            if best == nil || z > best!.z || (z == best!.z && order > best!.order) {
                best = (element, z, order)
            }
        }
        return best?.element ?? container
    }
}
