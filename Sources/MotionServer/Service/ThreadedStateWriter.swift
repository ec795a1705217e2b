import Dispatch
import MotionCore
import MotionDaemon
import NIOCore
import MotionConfiguration

/// Writes on a serial queue of its own and reports back on the daemon's loop, under the
/// daemon's lock.
final class ThreadedStateWriter: StateWriter, @unchecked Sendable {
    private let queue = DispatchQueue(label: "motiond.state")
    private let loop: EventLoop
    private let lock: DaemonLock
    /// Used on `queue` only.
    private var file: KeptFile?

    init(loop: EventLoop, lock: DaemonLock) {
        self.loop = loop
        self.lock = lock
    }

    func keep(_ file: KeptFile) {
        let file = UncheckedSendable(file)
        queue.async { self.file = file.value }
    }

    func write(_ state: SceneState, checkedAgainst limits: ValueLimits, done: @escaping (Result<StateWritten?, StateFileError>) -> Void) {
        // Called back only under the daemon's lock, as it was called.
        let done = UncheckedSendable(done)
        let (loop, lock) = (self.loop, self.lock)
        queue.async {
            let result = self.perform(state, limits)
            loop.execute { lock.withLock { done.value(result) } }
        }
    }

    func writeAndWait(_ state: SceneState, checkedAgainst limits: ValueLimits) -> Result<StateWritten?, StateFileError> {
        queue.sync { perform(state, limits) }
    }

    private func perform(_ state: SceneState, _ limits: ValueLimits) -> Result<StateWritten?, StateFileError> {
        guard var file else { return .success(nil) }
        defer { self.file = file }
        return file.write(state, checkedAgainst: limits)
    }
}
