/// Which of the engine's streams changed since they were last published, and what each
/// last published: the engine marks a stream when its property changes and, at the end of a
/// frame, collects what changed into the frame's report, each stream once.
///
/// Streams are numbered (``StreamID``): per frame this touches arrays, not dictionaries keyed
/// by names.
struct PublishedStreams {
    /// Every stream's name and number.
    private(set) var catalog = StreamCatalog()
    /// Per stream: the property, the value last published, whether it changed since.
    private var properties: [PublishedProperty?] = []
    private var lastPublished: [PublishedValue?] = []
    private var isDirty: [Bool] = []
    private var dirtyCount = 0

    /// Whether anything changed since the last collection.
    var hasChanges: Bool { dirtyCount > 0 }

    /// Numbers a stream, with its property if it has one (a value stream).
    mutating func register(_ name: String, kind: StreamKind, property: PublishedProperty? = nil) -> StreamID {
        let id = catalog.register(name, kind: kind)
        if id.index == properties.count {
            properties.append(nil)
            lastPublished.append(nil)
            isDirty.append(false)
        }
        properties[id.index] = property
        lastPublished[id.index] = property?.read()
        return id
    }

    /// The stream changed.
    mutating func markChanged(_ stream: StreamID) {
        guard !isDirty[stream.index] else { return }
        isDirty[stream.index] = true
        dirtyCount += 1
    }

    /// Forgets that `stream` changed: what it holds is already known (subscribing delivered
    /// it), or it goes.
    mutating func unmark(_ stream: StreamID) {
        guard isDirty[stream.index] else { return }
        isDirty[stream.index] = false
        dirtyCount -= 1
    }

    /// Removes streams that went with an element: their numbers will name other streams.
    mutating func remove(_ streams: [StreamID]) {
        for stream in streams {
            unmark(stream)
            properties[stream.index] = nil
            lastPublished[stream.index] = nil
            catalog.remove(stream)
        }
    }

    /// Forgets every stream's property (the engine is taken apart).
    mutating func removeAll() {
        properties = []
        lastPublished = []
        isDirty = []
        dirtyCount = 0
    }

    /// A stream's property.
    func property(_ stream: StreamID) -> PublishedProperty? {
        stream.index < properties.count ? properties[stream.index] : nil
    }

    /// The value last published on a stream.
    func lastValue(_ stream: StreamID) -> PublishedValue? {
        stream.index < lastPublished.count ? lastPublished[stream.index] : nil
    }

    /// Collects the values that changed into `report`, in the order of `elements` and of
    /// each one's properties, at `time`. A value that is not finite is never published: its
    /// element is put in `broken`, once, for the engine to put it back.
    mutating func collect(_ elements: [EngineElement], at time: Double, into report: inout FrameReport, broken: inout [EngineElement]) {
        guard dirtyCount > 0 else { return }
        for entry in elements {
            for (stream, property) in entry.values where isDirty[stream.index] {
                isDirty[stream.index] = false
                let value = property.read()
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
        dirtyCount = 0
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
