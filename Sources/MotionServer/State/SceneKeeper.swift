import Dispatch
import MotionCore
import NIOCore

/// Keeps the scene in its state file while the daemon runs: a change is written at most
/// ``interval`` seconds after the write before it, by a thread of its own, so that neither
/// a frame nor a client ever waits for the disk; and once more, whole, when the daemon stops.
///
/// A write that fails (a full disk, a read-only file system) is tried again an interval
/// later, changes or not, until one succeeds; meanwhile ``failure`` says why, for
/// `/healthz`, and the file keeps the last state written whole.
final class SceneKeeper {
    /// The state file.
    let file: StateFile
    /// The longest a change waits before it is written, in seconds.
    let interval: Double
    /// Why the last write failed; nil once one succeeds.
    private(set) var failure: StateFileError?
    /// When the last write succeeded, on the scheduler's clock.
    private(set) var writtenAt: Double?
    /// The state the last successful write held, or the state restored at start.
    private(set) var saved: SceneState?
    /// Writes that succeeded and failed, for `saved_scene` and the metrics.
    private(set) var writes = 0
    private(set) var failedWrites = 0
    /// Told when a write fails after one that did not, and when one succeeds after a
    /// failure: the log says each once, not every interval.
    var onFailureChanged: (StateFileError?) -> Void = { _ in }

    private let scheduler: FrameScheduler
    private let writer: StateWriter
    /// The scene as it is now, and the limits a file is read back under: called on the loop
    /// when a write starts.
    private let collect: () -> (state: SceneState, limits: ValueLimits)
    /// Whether something changed since the last write started.
    private var changed = false
    /// Whether a write is on the writer's thread.
    private var writing = false
    private var cancelTimer: (() -> Void)?
    private var lastStart = -Double.infinity
    private var stopped = false

    /// A keeper of `file`, writing what `collect` gives through `writer` at most every
    /// `interval` seconds of `scheduler`'s clock.
    init(file: StateFile, interval: Double, scheduler: FrameScheduler, writer: StateWriter, collect: @escaping () -> (state: SceneState, limits: ValueLimits)) {
        self.file = file
        self.interval = interval
        self.scheduler = scheduler
        self.writer = writer
        self.collect = collect
    }

    /// Something in the scene changed. Cheap enough for every frame: after the first
    /// change, it only sets a flag until the write it scheduled has started.
    func sceneChanged() {
        guard !changed else { return }
        changed = true
        scheduleWrite()
    }

    /// The scene changed in a way an operator expects to last at once (`reset_scene`): it is
    /// written now, not an interval later.
    func writeSoon() {
        changed = true
        cancelTimer?()
        cancelTimer = nil
        lastStart = -Double.infinity
        scheduleWrite()
    }

    /// The state was restored from the file at start: it is what the file holds.
    func restored(_ state: SceneState) {
        saved = state
    }

    private func scheduleWrite() {
        guard !stopped, !writing, cancelTimer == nil else { return }
        let at = Swift.max(scheduler.now, lastStart + interval)
        cancelTimer = scheduler.schedule(at: at) { [weak self] in
            guard let self else { return }
            cancelTimer = nil
            startWrite()
        }
    }

    private func startWrite() {
        guard !stopped else { return }
        changed = false
        writing = true
        lastStart = scheduler.now
        let (state, limits) = collect()
        writer.write(state, checkedAgainst: limits, to: file) { [weak self] error in
            guard let self else { return }
            writing = false
            finished(state, error)
            if changed { scheduleWrite() }
        }
    }

    private func finished(_ state: SceneState, _ error: StateFileError?) {
        let wasFailing = failure != nil
        failure = error
        if let error {
            failedWrites += 1
            // Tried again an interval later, whether or not anything changes meanwhile.
            changed = true
            if !wasFailing { onFailureChanged(error) }
        } else {
            writes += 1
            writtenAt = scheduler.now
            saved = state
            if wasFailing { onFailureChanged(nil) }
        }
    }

    /// Writes the scene as it is now and waits until it is on disk: the last thing a daemon
    /// that stops does (SIGTERM). A write still on the writer's thread finishes first, so the
    /// file ends with this state. Nothing is written after it.
    @discardableResult
    func writeFinally() -> StateFileError? {
        stopped = true
        cancelTimer?()
        cancelTimer = nil
        let (state, limits) = collect()
        let error = writer.writeAndWait(state, checkedAgainst: limits, to: file)
        finished(state, error)
        return error
    }
}

/// Writes state files off the event loop: the daemon's own thread in motiond, the caller's
/// thread in tests.
protocol StateWriter {
    /// Writes `state` to `file` (``StateFile/write(_:checkedAgainst:)``) in order after every
    /// write asked before, then calls `done` on the daemon's loop with the error, if any.
    func write(_ state: SceneState, checkedAgainst limits: ValueLimits, to file: StateFile, done: @escaping (StateFileError?) -> Void)
    /// Writes `state` to `file` after every write asked before, and returns when it is done.
    func writeAndWait(_ state: SceneState, checkedAgainst limits: ValueLimits, to file: StateFile) -> StateFileError?
}

/// Writes on a serial queue of its own and reports back on the daemon's loop.
final class ThreadedStateWriter: StateWriter {
    private let queue = DispatchQueue(label: "motiond.state")
    private let loop: EventLoop

    init(loop: EventLoop) {
        self.loop = loop
    }

    func write(_ state: SceneState, checkedAgainst limits: ValueLimits, to file: StateFile, done: @escaping (StateFileError?) -> Void) {
        let done = NIOLoopBound(done, eventLoop: loop)
        let loop = self.loop
        queue.async {
            let error = Self.write(state, limits, to: file)
            loop.execute { done.value(error) }
        }
    }

    func writeAndWait(_ state: SceneState, checkedAgainst limits: ValueLimits, to file: StateFile) -> StateFileError? {
        queue.sync { Self.write(state, limits, to: file) }
    }

    static func write(_ state: SceneState, _ limits: ValueLimits, to file: StateFile) -> StateFileError? {
        do { try file.write(state, checkedAgainst: limits) } catch { return error }
        return nil
    }
}
