import Glibc
import TouchModel

/// A touchscreen motiond makes through uinput, showing the apps the fingers of the panels it
/// carries as motiond sees them (``VirtualTouchEncoder``): calibrated, mapped, filtered.
///
/// It is one object because it is one kernel device (``UinputDevice``): made once, written
/// to, and destroyed, which removes it from every reader. What it writes goes through a
/// ``VirtualDeviceWriter``, which a test replaces with a recording.
public final class VirtualTouchscreen {
    /// The ids every motiond virtual touchscreen has, on the virtual bus: what a udev rule or
    /// a compositor's configuration can match, and how motiond knows its own devices when
    /// udev announces them.
    public static let vendor: UInt16 = 0x6d6f
    public static let product: UInt16 = 0x7464
    /// Names start so: the kernel keeps 80 bytes of a name.
    public static let namePrefix = "motiond virtual touchscreen"

    /// Whether a device is one motiond made.
    public static func isVirtual(vendor: UInt16, product: UInt16, name: String) -> Bool {
        vendor == Self.vendor && product == Self.product && name.hasPrefix(namePrefix)
    }

    /// The device's name, `motiond virtual touchscreen OUTPUT`.
    public let name: String
    public let geometry: VirtualTouchscreenGeometry
    private var encoder: VirtualTouchEncoder
    private let writer: any VirtualDeviceWriter
    /// Until ``destroy()``.
    private var isOpen = true
    /// A frame's events, kept between frames so that writing one allocates nothing.
    private var events: [InputEvent] = []

    /// Frames written, and writes the kernel refused (the last one's errno).
    public private(set) var framesWritten = 0
    public private(set) var writeFailures = 0
    public private(set) var lastWriteErrno: Int32 = 0
    /// Whether the last write was refused: the apps see nothing of the fingers until one
    /// goes through again.
    public private(set) var isFailing = false
    /// motiond's own part of the latency to the apps, for the panel frames written.
    public private(set) var latency = StageLatency()

    /// Makes the device for `output` (a connector's name such as `HDMI-A-1`, which names it),
    /// covering `geometry`. Fails with the reason: no uinput, no permission, a kernel too old
    /// to give the device its resolution.
    public convenience init(output: String, geometry: VirtualTouchscreenGeometry, slotCount: Int = VirtualTouchEncoder.defaultSlotCount,
                            uinputPath: String = "/dev/uinput") throws(VirtualTouchscreenError) {
        let name = Self.name(output: output)
        let device = try UinputDevice(name: name, phys: Self.phys(output: output), geometry: geometry, slotCount: slotCount, uinputPath: uinputPath)
        self.init(name: name, geometry: geometry, slotCount: slotCount, writer: device)
    }

    /// A device for `output` whose frames go to `writer`: a test's recording.
    package convenience init(output: String, geometry: VirtualTouchscreenGeometry, slotCount: Int = VirtualTouchEncoder.defaultSlotCount,
                             writer: any VirtualDeviceWriter) {
        self.init(name: Self.name(output: output), geometry: geometry, slotCount: slotCount, writer: writer)
    }

    /// A device whose frames go to `descriptor` (a pipe's end, which it closes when destroyed)
    /// as the kernel's structs, for a test to read the bytes uinput would be written.
    package convenience init(output: String, geometry: VirtualTouchscreenGeometry, slotCount: Int = VirtualTouchEncoder.defaultSlotCount,
                             writingTo descriptor: Int32) {
        self.init(output: output, geometry: geometry, slotCount: slotCount, writer: UinputDevice(writingTo: descriptor))
    }

    private init(name: String, geometry: VirtualTouchscreenGeometry, slotCount: Int, writer: any VirtualDeviceWriter) {
        self.name = name
        self.geometry = geometry
        self.writer = writer
        self.encoder = VirtualTouchEncoder(geometry: geometry, slotCount: slotCount)
        events.reserveCapacity(16 * slotCount)
    }

    deinit { destroy() }

    /// Its event node, `/dev/input/eventN`, and its place in sysfs.
    public var node: String { writer.node }
    public var syspath: String { writer.syspath }

    /// `motiond virtual touchscreen OUTPUT`, within the 80 bytes the kernel keeps of a name.
    static func name(output: String) -> String {
        String(String("\(namePrefix) \(output)").utf8.prefix(79)) ?? namePrefix
    }

    /// The device's phys, `motiond/OUTPUT`: where udev rules and `libinput list-devices` say it
    /// is plugged in. The kernel keeps 1,024 bytes of it.
    static func phys(output: String) -> String {
        String("motiond/\(output)".utf8.prefix(1023)) ?? "motiond"
    }

    /// How a finger the apps saw begin ends when motiond takes it away (a configuration's
    /// `cancel`; a reload changes it without making the device anew).
    public var ending: CancelledTouchEnding {
        get { encoder.ending }
        set { encoder.ending = newValue }
    }

    /// Shows one frame's fingers at `time` (the engine's clock, which withdrawals are timed
    /// on): nothing is written when the frame changes nothing shown.
    ///
    /// `stamp` is the frame's time on the monotonic clock (for a live panel, the kernel's
    /// stamp of its events), which the events carry to the apps where the kernel keeps it.
    /// `readAt`, when the input thread read the panel's event that completed the frame (the
    /// monotonic clock), times motiond's own stage: returns the seconds from then to the
    /// write's return, also counted in ``latency``; nil when nothing was written or the frame
    /// was read from no panel.
    @discardableResult
    public func show(_ contacts: [VirtualContact], at time: Double, stamp: Double? = nil, readAt: Double? = nil) -> Double? {
        events.removeAll(keepingCapacity: true)
        encoder.encode(contacts, at: time, into: &events)
        guard write(stamped: stamp), let readAt else { return nil }
        // Taken after the write returned: what the kernel's uinput itself costs is motiond's.
        let seconds = monotonicNow() - readAt
        latency.record(seconds)
        return seconds
    }

    /// Ends the fingers among `fingers` that are shown (a gesture took them).
    public func cancel(fingers: [Int], at time: Double) {
        events.removeAll(keepingCapacity: true)
        encoder.cancel(fingers: fingers, at: time, into: &events)
        write()
    }

    /// Ends every finger shown (a lock): the apps see no tap.
    public func cancelAll(at time: Double) {
        events.removeAll(keepingCapacity: true)
        encoder.cancelAll(at: time, into: &events)
        write()
    }

    /// When a withdrawal has its next frame due (``advance(to:)``); nil when none is under way.
    public var nextDeadline: Double? { encoder.nextDeadline }

    /// Writes what withdrawals have due by `time`.
    public func advance(to time: Double) {
        events.removeAll(keepingCapacity: true)
        encoder.advance(to: time, into: &events)
        write()
    }

    /// Whether a finger is shown.
    public var isTouching: Bool { encoder.isTouching }
    /// Fingers not shown because every slot was taken; fingers shown and cancelled.
    public var fingersDropped: Int { encoder.fingersDropped }
    public var fingersCancelled: Int { encoder.fingersCancelled }

    /// What the device did since it was made, for `devices`, `stats`, health and the metrics.
    public var counts: VirtualTouchscreenCounts {
        VirtualTouchscreenCounts(framesWritten: framesWritten, writeFailures: writeFailures, fingersDropped: fingersDropped,
                                 fingersCancelled: fingersCancelled, lastWriteErrno: writeFailures > 0 ? lastWriteErrno : nil, isFailing: isFailing,
                                 latency: latency)
    }

    /// Cancels what is shown and removes the device from every reader. There is no waiting
    /// for a withdrawal here: the device is going, and what a compositor does with its
    /// touches then is its own.
    public func destroy() {
        guard isOpen else { return }
        events.removeAll(keepingCapacity: true)
        encoder.cancelAll(at: 0, as: .cancel, into: &events)
        write()
        writer.close()
        isOpen = false
    }

    /// The frame's events, counted: a refused write is a frame the apps never saw. Whether
    /// they were written.
    /// A cancel has no panel frame to be stamped from (nil): the kernel stamps it.
    @discardableResult
    private func write(stamped time: Double? = nil) -> Bool {
        guard isOpen, !events.isEmpty else { return false }
        if let refusal = writer.write(events, stamped: time) {
            writeFailures += 1
            lastWriteErrno = refusal
            isFailing = true
            return false
        }
        framesWritten += events.count { $0.type == EventType.synchronization }
        isFailing = false
        return true
    }
}

/// What a virtual touchscreen did: frames the apps were shown, writes uinput refused (a
/// finger the apps then never see, or never see lift), fingers left out for want of a slot,
/// and fingers shown and then cancelled (a gesture took them, a lock, a reload).
public struct VirtualTouchscreenCounts: Sendable, Equatable {
    public var framesWritten = 0
    public var writeFailures = 0
    public var fingersDropped = 0
    public var fingersCancelled = 0
    /// The last refused write's errno (0: written short); nil when none was refused.
    public var lastWriteErrno: Int32?
    /// Whether the last write was refused.
    public var isFailing = false
    /// motiond's own part of the latency to the apps (``VirtualTouchscreen/latency``).
    public var latency = StageLatency()

    public init(framesWritten: Int = 0, writeFailures: Int = 0, fingersDropped: Int = 0, fingersCancelled: Int = 0,
                lastWriteErrno: Int32? = nil, isFailing: Bool = false, latency: StageLatency = StageLatency()) {
        self.framesWritten = framesWritten
        self.writeFailures = writeFailures
        self.fingersDropped = fingersDropped
        self.fingersCancelled = fingersCancelled
        self.lastWriteErrno = lastWriteErrno
        self.isFailing = isFailing
        self.latency = latency
    }

    /// The counts of a device that was made anew (a reload changed its area) added to those of
    /// the one before: the counts of an output since motiond started, as counters are.
    public func adding(_ newer: VirtualTouchscreenCounts) -> VirtualTouchscreenCounts {
        VirtualTouchscreenCounts(framesWritten: framesWritten + newer.framesWritten, writeFailures: writeFailures + newer.writeFailures,
                                 fingersDropped: fingersDropped + newer.fingersDropped, fingersCancelled: fingersCancelled + newer.fingersCancelled,
                                 lastWriteErrno: newer.lastWriteErrno ?? lastWriteErrno, isFailing: newer.isFailing,
                                 latency: latency.adding(newer.latency))
    }

    /// Why the last refused write was refused, in words; nil when none was.
    public var lastWriteError: String? {
        lastWriteErrno.map { $0 == 0 ? "written short" : String(cString: strerror($0)) }
    }
}

/// Why a virtual touchscreen could not be made: said in the log and in health, while the
/// panel stays ungrabbed and everything else goes on.
public enum VirtualTouchscreenError: Error, CustomStringConvertible, Sendable, Equatable {
    case cannotOpen(path: String, errno: Int32)
    case notUinput(path: String, errno: Int32)
    case tooOld(version: Int)
    case cannotCreate(errno: Int32)

    public var description: String {
        switch self {
        case .cannotOpen(let path, let code) where code == ENOENT || code == ENODEV:
            return "\(path) does not exist: load the uinput module (modprobe uinput; /etc/modules-load.d/motiond.conf)"
        case .cannotOpen(let path, let code) where code == EACCES || code == EPERM:
            return "no permission to open \(path): motiond's user needs it (the motiond package's udev rule gives its group rw)"
        case .cannotOpen(let path, let code):
            return "cannot open \(path): \(String(cString: strerror(code)))"
        case .notUinput(let path, let code):
            return "\(path) is not uinput (\(String(cString: strerror(code))))"
        case .tooOld(let version):
            return "the kernel's uinput is version \(version); a virtual touchscreen needs 5 (Linux 4.5) to carry its size"
        case .cannotCreate(let code):
            return "uinput refused the device: \(String(cString: strerror(code)))"
        }
    }

    /// A short name for a metric's or health's label.
    public var kind: String {
        switch self {
        case .cannotOpen(_, let code) where code == ENOENT || code == ENODEV: return "no_uinput"
        case .cannotOpen(_, let code) where code == EACCES || code == EPERM: return "permission_denied"
        case .cannotOpen, .notUinput: return "cannot_open"
        case .tooOld: return "uinput_too_old"
        case .cannotCreate: return "cannot_create"
        }
    }
}
