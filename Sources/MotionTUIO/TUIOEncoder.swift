import MotionConfiguration

/// Turns ``TUIOFrame``s into OSC bundles for one target, in TUIO 1.1 or 2.0, each bundle
/// small enough for one UDP datagram. A frame is one bundle unless it does not fit; then it
/// is split as each specification allows:
/// - 1.1: every bundle repeats the profile's `source` and complete `alive` list and ends with
///   the same `fseq`, and carries some of the `set` messages;
/// - 2.0: every bundle starts with the same `frm`; only the last ends with `alv`.
///
/// Keeps its buffer from frame to frame: encoding allocates nothing once it has grown.
struct TUIOEncoder {
    let version: TUIOSettings.Version
    let source: String
    /// The screen in pixels, as TUIO 2.0's `frm` carries it (width in the high 16 bits).
    let dimension: Int32
    /// The most a datagram should carry: what fits in one Ethernet frame, so that nothing is
    /// fragmented on a LAN. A frame whose `alive` lists alone exceed it goes in datagrams as
    /// big as needed, up to ``largestDatagram``.
    let limit: Int
    private var writer = OSCWriter()
    /// 2.0's `alv` list, kept between frames.
    private var alive: [Int32] = []

    /// 1500 bytes of Ethernet MTU less the IPv4 and UDP headers.
    static let safePayload = 1472
    /// The most one UDP datagram over IPv4 can carry.
    static let largestDatagram = 65_507

    init(version: TUIOSettings.Version, source: String, screen: (width: Double, height: Double), limit: Int = TUIOEncoder.safePayload) {
        self.version = version
        self.source = source
        func clamp(_ value: Double) -> UInt32 { UInt32(max(0, min(65_535, value.rounded()))) }
        dimension = Int32(bitPattern: clamp(screen.width) << 16 | clamp(screen.height))
        self.limit = limit
    }

    /// Encodes `frame`, giving each datagram to `send` in order. `time` is the frame's time
    /// tag (2.0's `frm`; 1.1 bundles are stamped "immediately", as the reference server does).
    /// False, sending nothing, when the `alive` lists alone exceed the largest datagram.
    mutating func encode(_ frame: TUIOFrame, time: OSCTimeTag, send: (borrowing [UInt8]) -> Void) -> Bool {
        switch version {
        case .v1_1: return encode11(frame, send: send)
        case .v2_0: return encode20(frame, time: time, send: send)
        }
    }

    // MARK: TUIO 1.1

    private mutating func encode11(_ frame: TUIOFrame, send: (borrowing [UInt8]) -> Void) -> Bool {
        writer.reset()
        writer.beginBundle(.immediately)
        if let cursors = frame.cursors {
            guard profile11("/tuio/2Dcur", cursors, frame.number, send: send, set: { writer, cursor in
                writer.message("/tuio/2Dcur", ",sifffff") {
                    $0.string("set"); $0.int32(cursor.session)
                    $0.float32(cursor.x); $0.float32(cursor.y)
                    $0.float32(cursor.velocityX); $0.float32(cursor.velocityY); $0.float32(cursor.acceleration)
                }
            }) else { return false }
        }
        if let objects = frame.objects {
            guard profile11("/tuio/2Dobj", objects, frame.number, send: send, set: { writer, object in
                writer.message("/tuio/2Dobj", ",siiffffffff") {
                    $0.string("set"); $0.int32(object.session); $0.int32(object.classID)
                    $0.float32(object.x); $0.float32(object.y); $0.float32(object.angle)
                    $0.float32(object.velocityX); $0.float32(object.velocityY); $0.float32(object.rotationSpeed)
                    $0.float32(object.acceleration); $0.float32(object.rotationAcceleration)
                }
            }) else { return false }
        }
        send(writer.bytes)
        return true
    }

    /// Writes one profile's messages after what the bundle already holds, sending full
    /// bundles on the way; the last one stays in the writer.
    private mutating func profile11<Item>(_ address: String, _ profile: TUIOProfile<Item>, _ number: Int32,
                                          send: (borrowing [UInt8]) -> Void, set: (inout OSCWriter, Item) -> Void) -> Bool {
        let fseqSize = 4 + OSCWriter.size(of: address) + 4 + 8 + 4
        let bundleHeader = 16
        var start = writer.count
        header11(address, profile.alive)
        let headerSize = writer.count - start
        let limit = max(self.limit, bundleHeader + headerSize + fseqSize + 128)
        guard limit <= Self.largestDatagram else { return false }
        if writer.count + fseqSize > limit && start > bundleHeader {
            // The previous profile filled this bundle: this one starts the next.
            writer.truncate(to: start)
            send(writer.bytes)
            restart11()
            start = writer.count
            header11(address, profile.alive)
        }
        for item in profile.changed {
            let mark = writer.count
            set(&writer, item)
            if writer.count + fseqSize > limit && mark > start + headerSize {
                writer.truncate(to: mark)
                fseq11(address, number)
                send(writer.bytes)
                restart11()
                start = writer.count
                header11(address, profile.alive)
                set(&writer, item)
            }
        }
        fseq11(address, number)
        return true
    }

    private mutating func restart11() {
        writer.reset()
        writer.beginBundle(.immediately)
    }

    private mutating func header11(_ address: String, _ alive: [Int32]) {
        writer.message(address, ",ss") { $0.string("source"); $0.string(source) }
        writer.message(address, ",s", repeating: UInt8(ascii: "i"), times: alive.count) {
            $0.string("alive")
            for session in alive { $0.int32(session) }
        }
    }

    private mutating func fseq11(_ address: String, _ number: Int32) {
        writer.message(address, ",si") { $0.string("fseq"); $0.int32(number) }
    }

    // MARK: TUIO 2.0

    private mutating func encode20(_ frame: TUIOFrame, time: OSCTimeTag, send: (borrowing [UInt8]) -> Void) -> Bool {
        alive.removeAll(keepingCapacity: true)
        alive += frame.cursors?.alive ?? []
        alive += frame.objects?.alive ?? []
        let aliveSize = 4 + 12 + ((2 + alive.count) + 3) / 4 * 4 + 4 * alive.count
        restart20(frame.number, time)
        let headerSize = writer.count
        let limit = max(self.limit, headerSize + aliveSize + 128)
        guard limit <= Self.largestDatagram else { return false }
        func add(_ write: (inout OSCWriter) -> Void) {
            let mark = writer.count
            write(&writer)
            if writer.count + aliveSize > limit && mark > headerSize {
                writer.truncate(to: mark)
                send(writer.bytes)  // without alv: the frame goes on in the next bundle
                restart20(frame.number, time)
                write(&writer)
            }
        }
        for cursor in frame.cursors?.changed ?? [] {
            add { writer in
                writer.message("/tuio2/ptr", ",iiifffffffffff") {
                    $0.int32(cursor.session); $0.int32(0); $0.int32(cursor.component)
                    $0.float32(cursor.x); $0.float32(cursor.y)
                    $0.float32(0); $0.float32(0); $0.float32(0); $0.float32(0)  // angle, shear, radius, pressure: unknown
                    $0.float32(cursor.velocityX); $0.float32(cursor.velocityY); $0.float32(0)
                    $0.float32(cursor.acceleration); $0.float32(0)
                }
            }
        }
        for object in frame.objects?.changed ?? [] {
            add { writer in
                writer.message("/tuio2/tok", ",iiiffffffff") {
                    $0.int32(object.session); $0.int32(0); $0.int32(object.classID)
                    $0.float32(object.x); $0.float32(object.y); $0.float32(object.angle)
                    $0.float32(object.velocityX); $0.float32(object.velocityY); $0.float32(object.rotationSpeed)
                    $0.float32(object.acceleration); $0.float32(object.rotationAcceleration)
                }
            }
        }
        writer.message("/tuio2/alv", ",", repeating: UInt8(ascii: "i"), times: alive.count) { [alive] writer in
            for session in alive { writer.int32(session) }
        }
        send(writer.bytes)
        return true
    }

    private mutating func restart20(_ number: Int32, _ time: OSCTimeTag) {
        writer.reset()
        // The bundle is for now; the frame's own time is in frm. (A receiver such as liblo
        // holds a bundle stamped in the future until then, and clocks differ.)
        writer.beginBundle(.immediately)
        writer.message("/tuio2/frm", ",itis") {
            $0.int32(number); $0.timeTag(time); $0.int32(dimension); $0.string(source)
        }
    }
}
