import TouchModel
/// Turns a recording into the ``TouchFrame``s a live device would give, through the same
/// ``TouchFrameAssembler``.
public struct RecordingReplay: Sendable {
    /// The recording.
    public let recording: EvemuRecording
    /// The recorded device.
    public let device: DeviceDescription
    /// How its units map to the screen.
    public let mapping: OutputMapping
    /// The contact filters, as a live device would have them.
    public let filters: ContactFilterSettings

    /// Prepares a replay.
    ///
    /// - Throws: ``ReplayError`` when the recording has no device header, the device is
    ///   not a touchscreen, or its description is invalid (a recording built in code rather
    ///   than parsed, or parsed without validation).
    public init(_ recording: EvemuRecording, mapping: OutputMapping = OutputMapping(), filters: ContactFilterSettings = ContactFilterSettings()) throws(ReplayError) {
        guard let device = recording.device else { throw .noDeviceHeader }
        guard device.kind.isTouchscreen else {
            if case .refused(let reason) = device.kind { throw .notATouchscreen(device.name, reason) }
            throw .noDeviceHeader
        }
        do { try device.validate() } catch { throw .invalidDevice(device.name, error) }
        self.recording = recording
        self.device = device
        self.mapping = mapping
        self.filters = filters
    }

    /// The filters as they apply to the recorded device, as a live device's assembler
    /// resolves them: thresholds in its units, and why any is off.
    public var resolvedFilters: ResolvedContactFilters {
        TouchFrameAssembler(description: device, mapping: mapping, filters: filters).resolvedFilters
    }

    /// Every frame, as fast as possible, with times relative to the first event plus `offset`
    /// (pass the monotonic time the replay starts at to get times like a live device's).
    ///
    /// A contact that stays put is cancelled at its deadline, between the recording's events,
    /// as a live device's reader wakes for it.
    public func frames(startingAt offset: Double = 0) -> [TouchFrame] {
        replayedFrames(startingAt: offset).compactMap(\.frame)
    }

    /// A moment of the replay: a frame, or what the contact filters decided, or both.
    public struct ReplayedFrame: Sendable {
        /// When, on the frames' clock.
        public var time: Double
        /// The frame; nil when the filters swallowed it whole (a palm ignored from landing),
        /// yet decided something there that is counted and logged at this time.
        public var frame: TouchFrame?
        /// The filters' counts after this moment, since the replay began.
        public var counts: ContactFilters.Counts
        /// What the filters did at this moment, for the log.
        public var notices: [ContactFilters.Notice]
    }

    /// Every frame as ``frames(startingAt:)`` gives them, each with the filters' counts and
    /// notices, and a moment without a frame wherever the filters decided something in a
    /// frame they swallowed: what the daemon reports of a replayed device as of a live one,
    /// at the time it happened. The last moment's counts are the whole recording's.
    public func replayedFrames(startingAt offset: Double = 0) -> [ReplayedFrame] {
        let player = RecordingPlayer(self, startingAt: offset)
        var moments: [ReplayedFrame] = []
        player.play(until: .infinity, into: &moments)
        return moments
    }
}

/// A recording played through a live device's assembler as its time comes: what
/// ``RecordingReplay/replayedFrames(startingAt:)`` gives all at once, a moment at a time, for
/// a replay that goes at the recording's pace (`motiond --replay`) and so runs the assembler
/// and the filters when a panel's would run, not ahead of them.
///
/// A class: a play moves on as it plays, and its holder (the replay's driver, in another
/// module) asks it what is next due every moment. As a struct held in a class, each such
/// question copied the whole player, its assembler's slots included, and retained what they
/// hold.
public final class RecordingPlayer {
    private var assembler: TouchFrameAssembler
    private let events: [InputEvent]
    private var next = 0
    private let start: Double
    private let offset: Double

    /// A play of `replay` whose times are the recording's since its first event, plus `offset`.
    public init(_ replay: RecordingReplay, startingAt offset: Double = 0) {
        assembler = TouchFrameAssembler(description: replay.device, mapping: replay.mapping, filters: replay.filters)
        events = replay.recording.events
        start = replay.recording.startTime
        self.offset = offset
    }

    /// When something is next due: the next event, or a filter's deadline before it (a
    /// contact stuck in place, a palm's verdict); nil once every event was played.
    public var nextTime: Double? {
        guard next < events.count else { return nil }
        let event = time(of: events[next])
        return assembler.nextDeadline.map { Swift.min($0, event) } ?? event
    }

    /// The filters' counts since the play began.
    public var counts: ContactFilters.Counts { assembler.filterCounts }

    /// Appends to `moments` what is due by `time`: each frame, and what the filters decided
    /// where they swallowed a frame, as a live device's would come.
    public func play(until time: Double, into moments: inout [RecordingReplay.ReplayedFrame]) {
        while next < events.count {
            var event = events[next]
            event.time = self.time(of: event)
            // Each deadline decides what it was for (a stuck contact, a palm's verdict), so
            // the next one is later.
            while let (frame, deadline) = assembler.expireDue(before: event.time, notAfter: time) {
                add(frame, at: deadline, to: &moments)
            }
            guard event.time <= time else { return }
            next += 1
            let frame = assembler.consume(event)
            if frame != nil || event.type == EventType.synchronization { add(frame, at: event.time, to: &moments) }
        }
    }

    private func time(of event: InputEvent) -> Double { event.time - start + offset }

    /// A frame is always a moment; a time without one only when the filters acted.
    private func add(_ frame: TouchFrame?, at time: Double, to moments: inout [RecordingReplay.ReplayedFrame]) {
        let report = assembler.takeFilterReport()
        guard frame != nil || report.counts != nil || !report.notices.isEmpty else { return }
        moments.append(RecordingReplay.ReplayedFrame(time: time, frame: frame, counts: assembler.filterCounts, notices: report.notices))
    }
}

/// Why a recording cannot be replayed as a touchscreen.
public enum ReplayError: Error, Equatable, CustomStringConvertible {
    case noDeviceHeader
    case notATouchscreen(String, String)
    case invalidDevice(String, InvalidDeviceDescription)

    public var description: String {
        switch self {
        case .noDeviceHeader:
            return "the recording has no device header (N:, I:, P:, B:, A: lines); record it with evemu-record"
        case .notATouchscreen(let name, let reason):
            return "the recorded device \(OutsideText.quoted(name)) is not a touchscreen: it is \(reason)"
        case .invalidDevice(let name, let error):
            return "the recorded device \(OutsideText.quoted(name)) cannot be replayed: \(error)"
        }
    }
}
