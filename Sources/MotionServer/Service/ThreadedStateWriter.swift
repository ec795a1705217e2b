import Dispatch
import MotionCore
import MotionDaemon
import NIOCore
import MotionConfiguration

/// Writes on a serial queue of its own and reports back on the daemon's loop.
final class ThreadedStateWriter: StateWriter, @unchecked Sendable {
    private let queue = DispatchQueue(label: "motiond.state")
    private let loop: EventLoop
    /// Used on `queue` only.
    private var file: KeptFile?

    init(loop: EventLoop) {
        self.loop = loop
    }

    func keep(_ file: KeptFile) {
        let file = UncheckedSendable(file)
        queue.async { self.file = file.value }
    }

    func write(_ state: SceneState, checkedAgainst limits: ValueLimits, done: @escaping (Result<StateWritten?, StateFileError>) -> Void) {
        let done = NIOLoopBound(done, eventLoop: loop)
        let loop = self.loop
        queue.async {
            let result = self.perform(state, limits)
            loop.execute { done.value(result) }
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

/// A value handed to the writer's queue once and never shared.
private struct UncheckedSendable<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
