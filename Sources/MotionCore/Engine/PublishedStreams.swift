/// Which of the engine's streams changed since they were last published, and what each
/// last published: the engine marks a stream when its property changes and, at the end of a
/// frame, collects what changed into the frame's report, each stream once.
///
/// Streams are numbered (``StreamID``): per frame this touches arrays, not dictionaries keyed
/// by names. A frame visits only the streams that changed (kept in a list as they change,
/// then put in publication order), never the whole scene, which may hold thousands of
/// elements while a finger moves one.
struct PublishedStreams {
    /// Where a value stream comes in publication order: its element's place among those
    /// ever attached, then its place among the element's properties.
    struct Rank: Comparable {
        var element: Int
        var place: Int

        static func < (lhs: Rank, rhs: Rank) -> Bool { (lhs.element, lhs.place) < (rhs.element, rhs.place) }
    }

    /// Every stream's name and number.
    private(set) var catalog = StreamCatalog()
    /// Per stream: the value last published, whether it changed since, the element
    /// publishing it and its rank (apart, so that sorting by rank touches no reference
    /// count). A value stream's property is its publisher's, at the stream's place among its
    /// values (``property(_:)``): a table of them here held a second copy of each, closures
    /// that took a kilobyte an element.
    private var lastPublished: [PublishedValue?] = []
    private var isDirty: [Bool] = []
    private var publishers: [EngineElement?] = []
    private var ranks: [Rank] = []
    private var dirtyCount = 0
    /// The streams marked since the last collection, in the order they were marked; a
    /// stream unmarked meanwhile stays listed (unless it was listed last), and is skipped
    /// because it is not dirty.
    private var marked: [StreamID] = []

    /// Whether anything changed since the last collection.
    var hasChanges: Bool { dirtyCount > 0 }

    /// Numbers a stream, with the property it publishes if it has one (a value stream), read
    /// now for the value last published, and the element that publishes it, where: the
    /// element's entry holds the property among its values at the rank's place.
    mutating func register(_ name: String, kind: StreamKind, property: PublishedProperty? = nil,
                           publishedAs publisher: (entry: EngineElement, rank: Rank)? = nil) -> StreamID {
        let id = catalog.register(name, kind: kind)
        if id.index == lastPublished.count {
            lastPublished.append(nil)
            isDirty.append(false)
            publishers.append(nil)
            ranks.append(Rank(element: 0, place: 0))
        }
        lastPublished[id.index] = property?.read()
        publishers[id.index] = publisher?.entry
        ranks[id.index] = publisher?.rank ?? Rank(element: 0, place: 0)
        return id
    }

    /// Makes room for `count` more streams (``StreamCatalog/reserveCapacity(_:)``).
    mutating func reserveCapacity(_ count: Int) {
        catalog.reserveCapacity(count)
        let total = lastPublished.count + count
        lastPublished.reserveCapacity(total)
        isDirty.reserveCapacity(total)
        publishers.reserveCapacity(total)
        ranks.reserveCapacity(total)
    }

    /// Gives `entry`'s value streams, in their order, the element's new place in publication
    /// order (``MotionEngine/arrange(_:)``).
    mutating func rank(_ entry: EngineElement, as element: Int) {
        for (place, value) in entry.values.enumerated() { ranks[value.id.index] = Rank(element: element, place: place) }
    }

    /// The stream changed.
    mutating func markChanged(_ stream: StreamID) {
        guard !isDirty[stream.index] else { return }
        isDirty[stream.index] = true
        dirtyCount += 1
        marked.append(stream)
    }

    /// Forgets that `stream` changed: what it holds is already known (subscribing delivered
    /// it), or it goes.
    mutating func unmark(_ stream: StreamID) {
        guard isDirty[stream.index] else { return }
        isDirty[stream.index] = false
        dirtyCount -= 1
        // Marked just now (an element added, whose subscriptions deliver the current values):
        // its listing goes too, and the list holds only streams that changed.
        if marked.last == stream { marked.removeLast() }
    }

    /// `stream` holds `value`, which its followers have already: not a change to publish,
    /// and the value a later change is compared with.
    mutating func alreadyPublished(_ stream: StreamID, as value: PublishedValue) {
        unmark(stream)
        lastPublished[stream.index] = value
    }

    /// Removes streams that went with an element: their numbers will name other streams.
    mutating func remove(_ streams: [StreamID]) {
        for stream in streams {
            unmark(stream)
            lastPublished[stream.index] = nil
            publishers[stream.index] = nil
            catalog.remove(stream)
        }
    }

    /// Forgets every stream's property (the engine is taken apart).
    mutating func removeAll() {
        lastPublished = []
        isDirty = []
        publishers = []
        ranks = []
        dirtyCount = 0
        marked = []
    }

    /// The element that publishes a stream.
    func publisher(of stream: StreamID) -> EngineElement? {
        stream.index < publishers.count ? publishers[stream.index] : nil
    }

    /// A stream's property.
    func property(_ stream: StreamID) -> PublishedProperty? {
        guard stream.index < publishers.count, let entry = publishers[stream.index] else { return nil }
        return entry.values[ranks[stream.index].place].property
    }

    /// The value last published on a stream.
    func lastValue(_ stream: StreamID) -> PublishedValue? {
        stream.index < lastPublished.count ? lastPublished[stream.index] : nil
    }

    /// Collects the values that changed into `report` at `time`, in publication order: the
    /// elements in the order they were added, each one's properties in their order. A value
    /// that is not finite is never published: its element is put in `broken`, once, for the
    /// engine to put it back.
    mutating func collect(at time: Double, into report: inout FrameReport, broken: inout [EngineElement]) {
        // The list is taken out while it is sorted and walked, and given back empty, keeping
        // its room for the next frame.
        var changed: [StreamID] = []
        swap(&changed, &marked)
        defer {
            changed.removeAll(keepingCapacity: true)
            marked = changed
            dirtyCount = 0
        }
        guard dirtyCount > 0 else { return }
        // Those unmarked since (a stream that went, whose number may be another's now) are
        // left out; a stream marked twice is collected at its first listing.
        changed.removeAll { !isDirty[$0.index] }
        let ranks = self.ranks
        changed.sortWithoutAllocating { ranks[$0.index] < ranks[$1.index] }
        for stream in changed where isDirty[stream.index] {
            isDirty[stream.index] = false
            let entry = publishers[stream.index]!
            let value = entry.values[ranks[stream.index].place].property.read()
            guard value.isFinite else {
                if broken.last !== entry { broken.append(entry) }
                continue
            }
            if entry.nonFiniteReported && broken.last !== entry { entry.nonFiniteReported = false }
            if lastPublished[stream.index] != value {
                lastPublished[stream.index] = value
                report.values.append(PublishedUpdate(id: stream, stream: catalog.name(of: stream), value: value, time: time))
            }
        }
    }

    /// Defence in depth: each of `entry`'s values that is not finite is written back to the
    /// last one published (its position, its spring's destination and constants…), which
    /// restarts what drives it from there. The names of the streams that were not finite.
    func restoreFiniteValues(_ entry: EngineElement) -> [String] {
        var names: [String] = []
        for (stream, property) in entry.values where !property.read().isFinite {
            names.append(catalog.name(of: stream))
            if let last = lastPublished[stream.index], let write = property.write { _ = write(last) }
        }
        return names
    }
}

extension Array {
    /// Sorts in place, allocating nothing: the standard library's sort takes a buffer for
    /// more than a few dozen elements, and a frame that moves many elements at once must not
    /// allocate. A heapsort: O(n log n) whatever the order, not stable; linear when nearly in
    /// order, as a restore's streams are (each element's marked in turn, one or two out of place).
    mutating func sortWithoutAllocating(by less: (Element, Element) -> Bool) {
        // An insertion sort first, which gives up once it has moved elements as many places
        // as there are: then the heapsort below sorts what it left.
        var moves = 0
        insertion: for index in indices.dropFirst() {
            var place = index
            while place > 0 && less(self[place], self[place - 1]) {
                guard moves < count else { break insertion }
                swapAt(place, place - 1)
                place -= 1
                moves += 1
            }
        }
        guard moves >= count else { return }
        /// Lets the element at `root` sink until the heap within `end` is in order again.
        func sink(_ root: Int, within end: Int) {
            var parent = root
            while 2 * parent + 1 < end {
                var child = 2 * parent + 1
                if child + 1 < end && less(self[child], self[child + 1]) { child += 1 }
                guard less(self[parent], self[child]) else { return }
                swapAt(parent, child)
                parent = child
            }
        }
        for root in stride(from: count / 2 - 1, through: 0, by: -1) { sink(root, within: count) }
        for end in stride(from: count - 1, to: 0, by: -1) {
            swapAt(0, end)
            sink(0, within: end)
        }
    }
}
