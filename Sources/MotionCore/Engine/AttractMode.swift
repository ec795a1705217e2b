/// Attract mode: `screen.idle` turns true once nobody has touched the screen for a while,
/// and elements with a ``Resettable`` go home after theirs. Idle time counts from the last
/// touch anywhere on the screen (or from the start); a touch re-arms everything.
final class AttractMode {
    /// Seconds without a touch before `screen.idle` turns true.
    var idleAfter: Double
    /// `screen.idle`.
    let idle = ReactiveProperty(false)
    /// When the last contact lifted (or the engine started).
    private(set) var lastTouch: Double
    /// The elements that go home, in the order they were added, and whether each went in
    /// this idle period.
    private var resets: [(element: ObjectIdentifier, interaction: Resettable, done: Bool)] = []
    /// Whether an element went home in this idle period: only then does a touch have resets
    /// to re-arm (a frame does not visit every element for nothing).
    private var anyResetDone = false

    init(idleAfter: Double, now: Double) {
        self.idleAfter = idleAfter
        self.lastTouch = now
    }

    /// `element` goes home with `interaction`.
    func add(_ interaction: Resettable, of element: Element) {
        resets.append((ObjectIdentifier(element), interaction, false))
    }

    /// `element` went.
    func remove(_ element: Element) {
        resets.removeAll { $0.element == ObjectIdentifier(element) }
    }

    /// The elements went, together.
    func remove(_ elements: Set<ObjectIdentifier>) {
        resets.removeAll { elements.contains($0.element) }
    }

    /// The idle period starts again at `time`, as after a touch (a reload that keeps the scene).
    func restart(at time: Double) {
        touched(at: time)
    }

    /// When it next has something to do, unless a finger is down (`anyDown`): nil then, or
    /// when nothing is left until the next touch.
    func nextDeadline(anyDown: Bool) -> Double? {
        guard !anyDown else { return nil }
        var next: Double? = idle.value ? nil : lastTouch + idleAfter
        for reset in resets where !reset.done {
            next = Swift.min(next ?? .infinity, lastTouch + reset.interaction.after)
        }
        return next
    }

    /// Does what is due by `time`: turns `screen.idle` true, sends elements home. Whoever
    /// calls it runs it at `time` on the clock (springs start then).
    func advance(to time: Double) {
        if !idle.value && time >= lastTouch + idleAfter { idle.value = true }
        for index in resets.indices where !resets[index].done && time >= lastTouch + resets[index].interaction.after {
            resets[index].done = true
            anyResetDone = true
            resets[index].interaction.reset()
        }
    }

    /// Someone touched the screen: it is not idle, and the idle period starts again.
    func touched(at time: Double) {
        lastTouch = time
        if idle.value { idle.value = false }
        guard anyResetDone else { return }
        anyResetDone = false
        for index in resets.indices { resets[index].done = false }
    }
}
