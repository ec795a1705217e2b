import Foundation
import Glibc
import Logging
import MotionCore
import NIOConcurrencyHelpers
import TouchInput

/// What the input thread tells the event loop.
enum InputMessage: Sendable {
    case frame(TouchFrame, device: Int)
    case added(node: String, DeviceDescription)
    case removed(node: String)
    case skipped(node: String, reason: String)
    case skippedRemoved(node: String)
    case dropped(node: String, total: Int)
    case failed(String)
}

/// Reads the touchscreens on a thread of its own, blocked in `poll` until there is input,
/// and hands frames to the event loop. A pipe wakes it for a reload or to stop, so it never
/// polls on a timer.
final class InputThread: @unchecked Sendable {
    private let lock = NIOLock()
    private var configuration: Configuration
    private var reconfigure = false
    private var stopping = false
    private let wake: (read: Int32, write: Int32)

    init(configuration: Configuration, logger: Logger, deliver: @escaping @Sendable (InputMessage) -> Void) throws {
        self.configuration = configuration
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw SocketError(description: "cannot make a pipe: \(String(cString: strerror(errno)))") }
        for fd in fds {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
        }
        wake = (fds[0], fds[1])
        // Return once the thread watches udev and has opened the touchscreens present, so
        // that readiness (READY=1) means no device plugged in from then on is missed.
        let started = DispatchSemaphore(value: 0)
        let thread = Thread { [self] in run(deliver, started: started) }
        thread.name = "motiond input"
        thread.start()
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

    /// Cancels the contacts down, closes the devices, and ends the thread.
    func stop() {
        lock.withLock { stopping = true }
        poke()
    }

    private func poke() {
        var byte: UInt8 = 1
        _ = Glibc.write(wake.write, &byte, 1)
    }

    private func run(_ deliver: @escaping @Sendable (InputMessage) -> Void, started: DispatchSemaphore) {
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
                guard let settings = configuration.deviceSettings(node: node.node, device: device) else {
                    return .failure(.init("no [[device]] entry in the configuration selects '\(device.name)'"))
                }
                return .success(configuration.mapping(for: settings, udevCalibration: node.calibration))
            }
        } catch {
            deliver(.failed(error.description))
            return
        }
        hub.wakeDescriptor = wake.read
        let handle: (TouchInputHub.Event) -> Void = { event in
            switch event {
            case .deviceAdded(let device): deliver(.added(node: device.node, device.description))
            case .deviceRemoved(let node): deliver(.removed(node: node))
            case let .deviceSkipped(node, reason): deliver(.skipped(node: node, reason: reason))
            case .skippedDeviceRemoved(let node): deliver(.skippedRemoved(node: node))
            case let .frame(node, frame): deliver(.frame(frame, device: number(node)))
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
