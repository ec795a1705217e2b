import Glibc
import MotionConfiguration
import MotionCore

/// Sends the fingers and the elements to the configured TUIO receivers (`[[tuio]]`,
/// docs/kiosk.md): one bundle per frame to each target that something it carries changed
/// for, from the frame's publication, so that nothing is sent (and nothing wakes up) at rest.
///
/// Session ids are this output's: one sequence shared by contacts and elements, as TUIO
/// wants (2.0's `alv` lists both). A contact's lasts from landing to lift; an element's as
/// long as the element. Frame numbers only increase, reloads included, since a reference
/// client ignores a frame numbered below the last one it saw.
///
/// Beyond changes, every target gets its full state (every alive item's `set`) in its first
/// frame and then at most once a second while frames go out: a receiver started after
/// motiond learns of elements at rest at the next touch. UDP may lose a bundle; the `alive`
/// list in every bundle is how TUIO recovers from that.
final class TUIOOutput {
    /// One receiver.
    final class Target {
        let settings: TUIOSettings
        let sink: DatagramSink
        var encoder: TUIOEncoder
        /// The element-mask bit of this target.
        let bit: UInt32
        var lastFull = -Double.infinity
        /// What went out, for `stats`.
        var frames = 0, datagrams = 0, failures = 0
        var lastError: String?
        var sent: TUIOSent { TUIOSent(datagrams: datagrams, failures: failures) }
        /// The frame being made, and its profiles' lists, kept between frames.
        var frame = TUIOFrame(number: 0)
        var cursors = TUIOProfile<TUIOCursor>()
        var objects = TUIOProfile<TUIOObject>()

        init(settings: TUIOSettings, sink: DatagramSink, screen: Size, bit: UInt32) {
            self.settings = settings
            self.sink = sink
            self.bit = bit
            encoder = TUIOEncoder(version: settings.version, source: settings.source, screen: (screen.width, screen.height))
        }
    }

    private struct Cursor {
        /// The engine's number for the finger (``ReportedContact/finger``).
        var finger: Int
        var session: Int32
        var slot: Int32
        var motion: TUIOMotion
        var changed = true
    }

    private struct Object {
        var id: String
        /// Which targets send it, one bit each; 0 for none (then it has no session).
        var targets: UInt32
        var session: Int32 = 0
        var classID: Int32
        var position: Point
        var rotation: Double
        var motion: TUIOMotion
        var changed = true
    }

    private(set) var targets: [Target] = []
    private var screen: Size
    private var cursors: [Cursor] = []
    /// The scene's elements, in the scene's order.
    private var objects: [Object] = []
    private var cursorsChanged = false
    private var objectsChanged = true
    private var nextSession: Int32 = 1
    /// The last frame's number.
    private(set) var frameNumber: Int32
    /// Class ids stay with element ids: configured elements in order, then added ones.
    private var classIDs: [String: Int32] = [:]
    private let makeSink: (ListenAddress) -> DatagramSink
    /// The wall clock 2.0's `frm` carries: Unix seconds and nanoseconds.
    private let wallClock: WallClock
    /// Whether elements go out where they are predicted to be (`[[tuio]] predicted`).
    let predicted: Bool

    /// An output to `settings`' targets, through sinks `makeSink` opens (UDP sockets, or a
    /// test's recorder), stamping 2.0's frames with `wallClock` (the system's, or a test's).
    /// `frameNumber` is the last frame an earlier output sent, for numbers that go on.
    /// With `predicted`, elements go out where touch prediction says they will be.
    init(settings: [TUIOSettings], screen: Size, elementIDs: [String], frameNumber: Int32 = 0, predicted: Bool = false,
         makeSink: @escaping (ListenAddress) -> DatagramSink = UDPSender.init, wallClock: @escaping WallClock = TUIOOutput.systemWallClock) {
        self.predicted = predicted
        self.wallClock = wallClock
        self.screen = screen
        self.frameNumber = frameNumber
        self.makeSink = makeSink
        configure(settings, screen: screen, elementIDs: elementIDs)
    }

    /// Takes a new configuration (a reload): new targets and a new scene. Contacts down stay
    /// down, with their sessions; the elements are the new scene's, under new sessions, and
    /// frame numbers go on.
    func configure(_ settings: [TUIOSettings], screen: Size, elementIDs: [String]) {
        for target in targets { target.sink.close() }
        self.screen = screen
        targets = settings.prefix(32).enumerated().map { index, settings in
            Target(settings: settings, sink: makeSink(settings.target), screen: screen, bit: 1 << UInt32(index))
        }
        objects = []
        classIDs = Dictionary(uniqueKeysWithValues: elementIDs.enumerated().map { ($1, Int32($0)) })
        cursorsChanged = true
    }

    // MARK: Taking in

    /// Takes an input frame's contacts, as its report numbers them, at the frame's `time`:
    /// their sessions begin, move and end.
    func take(_ contacts: [ReportedContact], time: Double) {
        for reported in contacts {
            let contact = reported.contact
            let index = cursors.firstIndex { $0.finger == reported.finger }
            let x = contact.position.x / screen.width, y = contact.position.y / screen.height
            if !contact.phase.isActive {
                if let index { cursors.remove(at: index); cursorsChanged = true }
            } else if let index {
                guard cursors[index].motion.x != x || cursors[index].motion.y != y else { continue }
                cursors[index].motion.move(x: x, y: y, time: time)
                cursors[index].changed = true
                cursorsChanged = true
            } else {
                cursors.append(Cursor(finger: reported.finger, session: newSession(), slot: Int32(truncatingIfNeeded: contact.slot),
                                      motion: TUIOMotion(x: x, y: y, time: time)))
                cursorsChanged = true
            }
        }
    }

    /// Ends the sessions of `fingers` (a lock took them): the next frame's alive list is
    /// without them. The engine reports them no more, not even as they lift.
    func cancel(fingers: [Int]) {
        let before = cursors.count
        cursors.removeAll { fingers.contains($0.finger) }
        if cursors.count != before { cursorsChanged = true }
    }

    /// Reads the elements: those that moved or turned since the last frame change.
    private func read(_ elements: [Element], time: Double) {
        var index = 0
        for element in elements {
            // The scene only appends and removes: an object not matching is one that went.
            while index < objects.count && objects[index].id != element.id {
                objects.remove(at: index)
                objectsChanged = true
            }
            let pose = predicted ? element.predictedPose : nil
            let position = pose?.position ?? element.position.value, rotation = pose?.rotation ?? element.rotation.value
            if index == objects.count {
                objects.append(newObject(element.id, position: position, rotation: rotation, time: time))
                objectsChanged = true
            } else if objects[index].targets != 0 && (objects[index].position != position || objects[index].rotation != rotation) {
                objects[index].position = position
                objects[index].rotation = rotation
                objects[index].motion.move(x: position.x / screen.width, y: position.y / screen.height, angle: rotation, time: time)
                objects[index].changed = true
            }
            index += 1
        }
        if index < objects.count {
            objects.removeSubrange(index...)
            objectsChanged = true
        }
    }


    private func newObject(_ id: String, position: Point, rotation: Double, time: Double) -> Object {
        let classID = classIDs[id] ?? {
            let next = Int32(classIDs.count)
            classIDs[id] = next
            return next
        }()
        var mask: UInt32 = 0
        for target in targets where target.settings.elements.includes(id) { mask |= target.bit }
        var object = Object(id: id, targets: mask, classID: classID, position: position, rotation: rotation,
                            motion: TUIOMotion(x: position.x / screen.width, y: position.y / screen.height, angle: rotation, time: time))
        if mask != 0 { object.session = newSession() }
        return object
    }

    private func newSession() -> Int32 {
        defer { nextSession = nextSession == .max ? 1 : nextSession + 1 }
        return nextSession
    }

    // MARK: Sending

    /// Sends what changed since the last call (the contacts taken, the elements of `elements`
    /// as they are now) to each target it concerns, as the frame at `time`.
    func publish(_ elements: [Element], time: Double) {
        read(elements, time: time)
        var numbered = false
        var frameTime: OSCTimeTag?  // read once a frame, only for 2.0
        for target in targets {
            let full = time - target.lastFull >= 1
            let takesObjects = !target.settings.elements.isEmpty
            let cursorsDue = target.settings.contacts && (cursorsChanged || full)
            let objectsDue = takesObjects && (objectsChanged || full || objects.contains { $0.changed && $0.targets & target.bit != 0 })
            // 2.0 has one alv for everything: a frame lists every session alive, changed or not.
            let one = target.settings.version == .v2_0 && (cursorsDue || objectsDue)
            if cursorsDue || (one && target.settings.contacts) {
                target.cursors.alive.removeAll(keepingCapacity: true)
                target.cursors.changed.removeAll(keepingCapacity: true)
                for cursor in cursors {
                    target.cursors.alive.append(cursor.session)
                    if cursor.changed || full { target.cursors.changed.append(Self.tuio(cursor)) }
                }
                target.frame.cursors = target.cursors
            }
            if objectsDue || (one && takesObjects) {
                target.objects.alive.removeAll(keepingCapacity: true)
                target.objects.changed.removeAll(keepingCapacity: true)
                for object in objects where object.targets & target.bit != 0 {
                    target.objects.alive.append(object.session)
                    if object.changed || full { target.objects.changed.append(Self.tuio(object)) }
                }
                target.frame.objects = target.objects
            }
            guard target.frame.cursors != nil || target.frame.objects != nil else { continue }
            if !numbered {
                frameNumber = frameNumber == .max ? 1 : frameNumber + 1
                numbered = true
            }
            if full { target.lastFull = time }
            target.frame.number = frameNumber
            var time = OSCTimeTag.immediately  // 1.1 has no frame time
            if target.settings.version == .v2_0 {
                time = frameTime ?? now()
                frameTime = time
            }
            send(target, time: time)
            // The lists are the target's again, to fill next time without allocating.
            target.frame.cursors = nil
            target.frame.objects = nil
        }
        for index in cursors.indices { cursors[index].changed = false }
        for index in objects.indices { objects[index].changed = false }
        cursorsChanged = false
        objectsChanged = false
    }

    /// Tells every target that nothing is alive any more (motiond stops, or the last target
    /// went in a reload), so that receivers do not keep fingers or objects that are gone.
    func finish() {
        cursors = []
        objects = []
        frameNumber = frameNumber == .max ? 1 : frameNumber + 1
        for target in targets {
            target.frame = TUIOFrame(number: frameNumber, cursors: target.settings.contacts ? TUIOProfile() : nil,
                                     objects: target.settings.elements.isEmpty ? nil : TUIOProfile())
            send(target, time: now())
            target.sink.close()
        }
        targets = []
    }

    private func send(_ target: Target, time: OSCTimeTag) {
        let sink = target.sink
        var failures = 0
        var error: Int32 = 0
        let encoded = target.encoder.encode(target.frame, time: time) { datagram in
            if let failed = sink.send(datagram) { failures += 1; error = failed } else { target.datagrams += 1 }
        }
        guard encoded else {
            target.failures += 1
            target.lastError = "the alive list does not fit in one UDP datagram (\(TUIOEncoder.largestDatagram) bytes): too many elements"
            return
        }
        target.frames += 1
        if failures > 0 {
            target.failures += failures
            target.lastError = String(cString: strerror(error))
        }
    }

    /// The wall clock, as 2.0's `frm` carries it.
    private func now() -> OSCTimeTag {
        let (seconds, nanoseconds) = wallClock()
        return OSCTimeTag(unixSeconds: seconds, nanoseconds: nanoseconds)
    }

    /// The system's wall clock (`CLOCK_REALTIME`).
    package static func systemWallClock() -> (seconds: Int, nanoseconds: Int) {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return (spec.tv_sec, spec.tv_nsec)
    }

    private static func tuio(_ cursor: Cursor) -> TUIOCursor {
        let m = cursor.motion
        return TUIOCursor(session: cursor.session, component: cursor.slot, x: Float(m.x), y: Float(m.y),
                          velocityX: Float(m.velocityX), velocityY: Float(m.velocityY), acceleration: Float(m.acceleration))
    }

    private static func tuio(_ object: Object) -> TUIOObject {
        let m = object.motion
        return TUIOObject(session: object.session, classID: object.classID, x: Float(m.x), y: Float(m.y), angle: Float(m.angle),
                          velocityX: Float(m.velocityX), velocityY: Float(m.velocityY), rotationSpeed: Float(m.rotationSpeed),
                          acceleration: Float(m.acceleration), rotationAcceleration: Float(m.rotationAcceleration))
    }

    /// Each target and what went to it, for `stats`.
    var statistics: [TUIOTargetStatistics] {
        targets.map { target in
            TUIOTargetStatistics(target: target.settings.target.description, version: target.settings.version.rawValue,
                                 frames: target.frames, datagrams: target.datagrams, failures: target.failures, lastError: target.lastError)
        }
    }
}
