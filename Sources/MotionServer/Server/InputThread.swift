import Dispatch
import FoundationEssentials
import Glibc
import Logging
import MotionConfiguration
import MotionCore
import NIOConcurrencyHelpers
import TouchInput

/// What the input thread tells the event loop.
enum InputMessage: Sendable {
    case frame(TouchFrame, device: Int, node: String)
    case added(node: String, DeviceDescription, grabbed: Bool, DeviceSetup)
    /// A reload changed how a device maps or filters.
    case reconfigured(node: String, DeviceSetup)
    /// A contact filter cancelled a contact.
    case filtered(node: String, ContactFilters.Notice)
    /// A device's filter counts changed.
    case filterCounts(node: String, ContactFilters.Counts)
    case removed(node: String)
    case skipped(node: String, reason: TouchInputHub.SkipReason)
    case skippedRemoved(node: String)
    case dropped(node: String, total: Int)
    case failed(String)
}

/// Where a device's touches land and how its contacts are filtered: what `devices` shows.
struct DeviceSetup: Sendable, Hashable {
    var output: Rect
    var filters: ResolvedContactFilters
    /// Rotation, flips and calibration: what `motionctl calibrate` needs to place targets.
    var mapping: OutputMapping
    /// udev's `ID_PATH`, where the device is plugged in; nil for a replay.
    var path: String?

    init(_ device: TouchDevice) {
        output = device.mapper.outputRect
        filters = device.resolvedFilters
        mapping = device.mapper.mapping
        path = device.path
    }

    init(output: Rect, filters: ResolvedContactFilters, mapping: OutputMapping = OutputMapping(), path: String? = nil) {
        self.output = output
        self.filters = filters
        self.mapping = mapping
        self.path = path
    }
}

/// Reads the touchscreens on a thread of its own, blocked in `poll` until there is input,
/// and hands frames to the event loop. A pipe wakes it for a reload or to stop, so it never
/// polls on a timer.
///
/// Its life: ``init`` returns once the thread watches udev (so readiness means no device
/// plugged in from then on is missed), which takes a moment: call it from outside the
/// event loop. ``stop(timeout:)`` ends the thread, waits for it, and closes the pipe; what
/// it delivers from then on is dropped, since the loop it goes to is stopping.
final class InputThread: @unchecked Sendable {
    private let lock = NIOLock()
    private var configuration: Configuration
    private var reconfigure = false
    private var stopping = false
    /// Whether messages still go out; closed by ``stop(timeout:)``. Under `gate`, so that
    /// once it is closed nothing more goes out.
    private var delivering = true
    private let gate = NIOLock()
    /// The pipe that wakes the thread; nil once closed.
    private(set) var wake: (read: Int32, write: Int32)?
    private var thread: JoinableThread?

    /// What the thread does: given the input thread, what delivers its messages, the wake
    /// pipe's read end, and the semaphore to signal once it is ready.
    typealias Work = @Sendable (InputThread, _ deliver: @escaping @Sendable (InputMessage) -> Void, _ wake: Int32, _ started: DispatchSemaphore) -> Void

    /// Starts the thread and returns once it watches udev and has opened the touchscreens
    /// present. Blocks the caller meanwhile, so never call it on the event loop.
    convenience init(configuration: Configuration, logger: Logger, deliver: @escaping @Sendable (InputMessage) -> Void) throws {
        try self.init(configuration: configuration, deliver: deliver) { thread, deliver, wake, started in
            thread.run(deliver, wake: wake, started: started)
        }
    }

    /// The same, with `work` in place of reading the touchscreens: how a test has the thread
    /// misbehave (stick, deliver late) and sees what ``stop(timeout:)`` does about it.
    init(configuration: Configuration, deliver: @escaping @Sendable (InputMessage) -> Void, work: @escaping Work) throws {
        self.configuration = configuration
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw SocketError(description: "cannot make a pipe: \(String(cString: strerror(errno)))") }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
        }
        let wake = (read: fds[0], write: fds[1])
        self.wake = wake
        let started = DispatchSemaphore(value: 0)
        do {
            thread = try JoinableThread(name: "motiond input") { [self] in
                work(self, { [self] message in gated(deliver, message) }, wake.read, started)
            }
        } catch {
            closePipe()
            throw error
        }
        started.wait()
    }

    /// Applies a new configuration's device settings.
    func update(_ configuration: Configuration) {
        lock.withLock {
            self.configuration = configuration
            reconfigure = true
        }
        poke()
    }

    /// Cancels the contacts down, closes the devices, and ends the thread, waiting for it
    /// at most `timeout` seconds. The cancelled contacts have been delivered when it
    /// returns; anything later is dropped. Returns false if the thread did not end in time
    /// (a stuck device read): its pipe then stays open, since the thread may still use it.
    @discardableResult
    func stop(timeout: Double) -> Bool {
        lock.withLock { stopping = true }
        poke()
        let ended = thread?.join(timeout: timeout) ?? true
        gate.withLock { delivering = false }
        if ended { closePipe() }
        return ended
    }

    private func gated(_ deliver: @Sendable (InputMessage) -> Void, _ message: InputMessage) {
        gate.withLock { if delivering { deliver(message) } }
    }

    private func poke() {
        guard let wake else { return }
        var byte: UInt8 = 1
        _ = Glibc.write(wake.write, &byte, 1)
    }

    private func closePipe() {
        guard let wake else { return }
        Glibc.close(wake.read)
        Glibc.close(wake.write)
        self.wake = nil
    }

    private func run(_ deliver: @escaping @Sendable (InputMessage) -> Void, wake: Int32, started: DispatchSemaphore) {
        var signalled = false
        func signalStarted() {
            if !signalled { started.signal() }
            signalled = true
        }
        defer { signalStarted() }
        var numbers: [String: Int] = [:]
        func number(_ node: String) -> Int {
            if let number = numbers[node] { return number }
            numbers[node] = numbers.count
            return numbers[node]!
        }
        let hub: TouchInputHub
        do {
            hub = try TouchInputHub { [self] node, device in
                let configuration = lock.withLock { self.configuration }
                guard let settings = configuration.deviceSettings(node: node.node, path: node.path, device: device) else {
                    return .failure(.init("no [[device]] entry in the configuration selects \(OutsideText.quoted(device.name))", kind: .notSelected))
                }
                return .success(TouchInputHub.DeviceUse(mapping: configuration.mapping(for: settings, udevCalibration: node.calibration),
                                                        grab: settings.grab, filters: configuration.filters(for: settings)))
            }
        } catch {
            deliver(.failed(error.description))
            return
        }
        hub.wakeDescriptor = wake
        let handle: (TouchInputHub.Event) -> Void = { event in
            switch event {
            case .deviceAdded(let device): deliver(.added(node: device.node, device.description, grabbed: device.isGrabbed, DeviceSetup(device)))
            case .deviceReconfigured(let device): deliver(.reconfigured(node: device.node, DeviceSetup(device)))
            case let .filtered(node, notice): deliver(.filtered(node: node, notice))
            case let .filterCounts(node, counts): deliver(.filterCounts(node: node, counts))
            case .deviceRemoved(let node): deliver(.removed(node: node))
            case let .deviceSkipped(node, reason): deliver(.skipped(node: node, reason: reason))
            case .skippedDeviceRemoved(let node): deliver(.skippedRemoved(node: node))
            case let .frame(node, frame): deliver(.frame(frame, device: number(node), node: node))
            case let .eventsDropped(node, total): deliver(.dropped(node: node, total: total))
            }
        }
        do { try hub.start(handle) } catch {
            deliver(.failed(error.description))
            return
        }
        signalStarted()
        while true {
            let (stop, again) = lock.withLock { () -> (Bool, Bool) in
                defer { reconfigure = false }
                return (stopping, reconfigure)
            }
            if stop {
                hub.stop(handle)
                return
            }
            if again { hub.reconfigure(handle) }
            hub.poll(timeout: -1, handle)
        }
    }
}
