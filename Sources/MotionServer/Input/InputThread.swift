import Dispatch
import FoundationEssentials
import Glibc
import Logging
import MotionConfiguration
import MotionCore
import NIOConcurrencyHelpers
import TouchInput

/// Reads the touchscreens on a thread of its own, blocked in `poll` until there is input,
/// and hands what each poll of the hub reports (``TouchInputEvent``s, in the hub's buffer)
/// to its ``InputQueue`` as a batch, which the thread then runs through the daemon itself
/// unless the loop holds the daemon (``DaemonLock``). A pipe wakes it for a reload or to
/// stop, so it never polls on a timer.
///
/// Its life: ``init`` returns once the thread watches udev (so readiness means no device
/// plugged in from then on is missed), which takes a moment: call it from outside the
/// event loop. ``stop(timeout:)`` ends the thread, waits for it, runs what it left in the
/// queue, closes the queue and the pipe; what it delivers from then on is dropped, since the
/// daemon it goes to is stopping.
final class InputThread: @unchecked Sendable {
    private let lock = NIOLock()
    private var configuration: Configuration
    /// The outputs whose virtual touchscreen exists: their panels are grabbed.
    private var virtualOutputs: Set<String>
    private var reconfigure = false
    private var stopping = false
    /// Where the batches go; closed by ``stop(timeout:)``.
    private let queue: InputQueue
    /// The pipe that wakes the thread; nil once closed.
    private(set) var wake: (read: Int32, write: Int32)?
    private var thread: JoinableThread?
    /// Why the thread keeps the process's priority (an `errno`), if it does
    /// (``ReadingPriority``); set by the thread before it starts its work.
    private(set) var priorityRefused: Int32?

    /// What the thread does: given the input thread, the queue its batches go to, the wake
    /// pipe's read end, and the semaphore to signal once it is ready.
    typealias Work = @Sendable (InputThread, _ queue: InputQueue, _ wake: Int32, _ started: DispatchSemaphore) -> Void

    /// Starts the thread and returns once it watches udev and has opened the touchscreens
    /// present. Blocks the caller meanwhile, so never call it on the event loop. Should udev
    /// fail it, the thread says so in `logger` and ends; the daemon goes on without touch.
    convenience init(configuration: Configuration, virtualOutputs: Set<String> = [], logger: Logger, queue: InputQueue) throws(StartupFailure) {
        try self.init(configuration: configuration, virtualOutputs: virtualOutputs, queue: queue) { thread, queue, wake, started in
            thread.run(queue, wake: wake, started: started, logger: logger)
        }
    }

    /// The same, with `work` in place of reading the touchscreens: how a test has the thread
    /// misbehave (stick, deliver late) and sees what ``stop(timeout:)`` does about it.
    init(configuration: Configuration, virtualOutputs: Set<String> = [], queue: InputQueue, work: @escaping Work) throws(StartupFailure) {
        self.configuration = configuration
        self.virtualOutputs = virtualOutputs
        self.queue = queue
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw .wakePipe(errno: errno) }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
        }
        let wake = (read: fds[0], write: fds[1])
        self.wake = wake
        let started = DispatchSemaphore(value: 0)
        do {
            thread = try JoinableThread(name: "motiond input") { [self] in
                priorityRefused = ReadingPriority.raiseThisThread()
                work(self, queue, wake.read, started)
            }
        } catch {
            closePipe()
            throw error
        }
        started.wait()
    }

    /// Applies a new configuration's device settings, and the virtual touchscreens it made.
    func update(_ configuration: Configuration, virtualOutputs: Set<String> = []) {
        lock.withLock {
            self.configuration = configuration
            self.virtualOutputs = virtualOutputs
            reconfigure = true
        }
        poke()
    }

    /// Cancels the contacts down, closes the devices, and ends the thread, waiting for it
    /// at most `timeout` seconds. The cancelled contacts have reached the daemon when it
    /// returns (if the caller holds the daemon's lock, the thread left them in the queue,
    /// and they run here); anything later is dropped (``InputQueue/close()``). Returns false
    /// if the thread did not end in time (a stuck device read): its pipe then stays open,
    /// since the thread may still use it.
    @discardableResult
    func stop(timeout: Double) -> Bool {
        lock.withLock { stopping = true }
        poke()
        let ended = thread?.join(timeout: timeout) ?? true
        queue.closeAndRunWaiting()
        if ended { closePipe() }
        return ended
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

    private func run(_ queue: InputQueue, wake: Int32, started: DispatchSemaphore, logger: Logger) {
        var signalled = false
        func signalStarted() {
            if !signalled { started.signal() }
            signalled = true
        }
        defer { signalStarted() }
        let hub: TouchInputHub
        do {
            hub = try TouchInputHub { [self] device, udevCalibration in
                let (configuration, virtualOutputs) = lock.withLock { (self.configuration, self.virtualOutputs) }
                guard let match = configuration.match(device, udevCalibration: udevCalibration) else {
                    return .failure(.init("no [[device]] entry in the configuration selects \(OutsideText.quoted(device.name))", kind: .notSelected))
                }
                return .success(match.use(virtualOutputs: virtualOutputs))
            }
        } catch {
            logger.error("touch input stopped: \(error.description)")
            return
        }
        hub.wakeDescriptor = wake
        do { queue.deliver(try hub.start()) } catch {
            logger.error("touch input stopped: \(error.description)")
            return
        }
        if let refused = priorityRefused {
            logger.info("the input thread runs at the process's priority: nice \(ReadingPriority.nice) was refused (\(String(cString: strerror(refused))))")
        }
        signalStarted()
        while true {
            let (stop, again) = lock.withLock { () -> (Bool, Bool) in
                defer { reconfigure = false }
                return (stopping, reconfigure)
            }
            if stop {
                queue.deliver(hub.stop())
                return
            }
            if again { queue.deliver(hub.reconfigure()) }
            queue.deliver(hub.poll(timeout: -1))
        }
    }
}
