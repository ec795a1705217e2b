import MotionCore
import MotionConfiguration

/// Keeps the scene in its state file while the daemon runs: a change is written at most
/// ``interval`` seconds after the write before it, by a thread of its own, so that neither
/// a frame nor a client ever waits for the disk; and once more when the daemon stops.
///
/// A write appends only the elements that changed since the last one (``SceneState/changes(from:to:)``),
/// so the bytes written while a finger drags one card do not grow with the cards at rest.
/// The file is written whole again when the changes appended reach the size of the scene
/// written whole (at least ``appendRoom``), so it never grows past twice the scene, and the
/// whole writes cost no more, over time, than the appends.
///
/// A write that fails (a full disk, a read-only file system) is tried again later, changes
/// or not, until one succeeds, each retry waiting twice as long as the one before (from two
/// intervals up to ``longestRetryDelay``); meanwhile ``failure`` says why, for `/healthz`,
/// and the file keeps the last state written whole. A file that is not motiond's to replace
/// (``StateFileError/leavesFileAlone``) is never written at all: ``leftAlone`` says why.
final class SceneKeeper {
    /// The least room for changes appended before the file is written whole again, in bytes:
    /// a small scene is not rewritten every few writes.
    static let appendRoom = 256 << 10
    /// The longest wait before a failed write is tried again, in seconds.
    static let longestRetryDelay = 300.0

    /// The state file.
    let file: StateFile
    /// The longest a change waits before it is written, in seconds.
    let interval: Double
    /// Why the last write failed; nil once one succeeds.
    private(set) var failure: StateFileError?
    /// Why the file is left alone and the scene not kept (not a regular file, not a state
    /// file, not readable, or not the file motiond wrote); nil while the scene is kept.
    private(set) var leftAlone: StateFileError?
    /// What keeps the scene from being kept, for `/healthz` and `saved_scene`.
    var problem: StateFileError? { leftAlone ?? failure }
    /// When the last write succeeded, on the scheduler's clock.
    private(set) var writtenAt: Double?
    /// The state the file holds: the last successful write's, or the state restored at start.
    private(set) var saved: SceneState?
    /// Writes that succeeded and failed, for `saved_scene` and the metrics.
    private(set) var writes = 0
    private(set) var failedWrites = 0
    /// Bytes written to the file by the writes that succeeded, whole and appended.
    private(set) var bytesWritten = 0
    /// Told when a write fails after one that did not, and when one succeeds after a
    /// failure: the log says each once, not every retry.
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
    /// Failed writes since the last that succeeded, for the retries' back-off.
    private var failuresInARow = 0
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

    /// What the state path held at start (or at a reload that read it again): nothing, an
    /// empty file, or a file whose scene was restored. The scene is kept from now on.
    func found(_ reading: StateFileReading?) {
        leftAlone = nil
        saved = reading?.contents?.state
        writer.keep(KeptFile(file: file, found: reading))
        // What changed while the file was left alone is written now that it is kept.
        if changed { scheduleWrite() }
    }

    /// The state path holds something motiond must not replace: nothing is written, and
    /// ``leftAlone`` says why, until ``found(_:)`` (a reload that reads it again).
    func leaveAlone(_ reason: StateFileError) {
        leftAlone = reason
        cancelTimer?()
        cancelTimer = nil
    }

    private func scheduleWrite() {
        guard !stopped, !writing, cancelTimer == nil, leftAlone == nil else { return }
        let at = Swift.max(scheduler.now, lastStart + retryDelay)
        cancelTimer = scheduler.schedule(at: at) { [weak self] in
            guard let self else { return }
            cancelTimer = nil
            startWrite()
        }
    }

    /// The least time between the starts of two writes: the interval, or after failures
    /// twice as long for each failure in a row, up to ``longestRetryDelay`` (or the
    /// interval, if that is longer).
    var retryDelay: Double {
        guard failuresInARow > 0 else { return interval }
        let doubled = interval * Double(1 << Swift.min(failuresInARow, 30))
        return Swift.min(doubled, Swift.max(interval, Self.longestRetryDelay))
    }

    private func startWrite() {
        guard !stopped, leftAlone == nil else { return }
        changed = false
        writing = true
        lastStart = scheduler.now
        let (state, limits) = collect()
        writer.write(state, checkedAgainst: limits) { [weak self] result in
            guard let self else { return }
            writing = false
            finished(state, result)
            if changed { scheduleWrite() }
        }
    }

    /// `result`: what was written (nil: the file held `state` already), or why not.
    private func finished(_ state: SceneState, _ result: Result<StateWritten?, StateFileError>) {
        let wasFailing = failure != nil
        switch result {
        case .failure(let error):
            failedWrites += 1
            if error.leavesFileAlone {
                failure = nil
                return leaveAlone(error)
            }
            failure = error
            failuresInARow += 1
            // Tried again later, whether or not anything changes meanwhile.
            changed = true
            if !wasFailing { onFailureChanged(error) }
        case .success(let written):
            if let written {
                writes += 1
                bytesWritten += written.bytes
            }
            failure = nil
            failuresInARow = 0
            writtenAt = scheduler.now
            saved = state
            if wasFailing { onFailureChanged(nil) }
        }
    }

    /// Writes the scene as it is now and waits until it is on disk: the last thing a daemon
    /// that stops does (SIGTERM). A write still on the writer's thread finishes first, so the
    /// file ends with this state. Nothing is written after it, nor at all when the file is
    /// left alone (the reason is returned).
    @discardableResult
    func writeFinally() -> StateFileError? {
        stopped = true
        cancelTimer?()
        cancelTimer = nil
        if let leftAlone { return leftAlone }
        let (state, limits) = collect()
        finished(state, writer.writeAndWait(state, checkedAgainst: limits))
        return problem
    }
}

/// What a write put in the file.
package struct StateWritten: Equatable {
    /// The bytes written.
    var bytes: Int
    /// Whether the scene was written whole (else its changes were appended).
    var whole: Bool
}

/// The state file as its writer knows it: which file it is, how its bytes divide, and the
/// scene it holds, so that a write can append only what changed. Only the writer's thread
/// uses it, one write after another, so what it knows is always what the file is.
package struct KeptFile {
    let file: StateFile
    /// The file motiond read or wrote last (nil: there was none, so none may be replaced).
    private var identity: FileIdentity?
    /// How the file's bytes divide; nil when the next write must be whole (a format 1 file,
    /// a write cut short, nothing written yet).
    private var shape: StateFileShape?
    /// The scene the file holds.
    private var saved: SceneState?

    /// The file as a start found it: nothing, an empty file, or one holding a scene.
    init(file: StateFile, found reading: StateFileReading?) {
        self.file = file
        identity = reading?.identity
        saved = reading?.contents?.state
        // Appending goes on only after a complete write of this format; anything else is
        // written whole first.
        if let reading, let contents = reading.contents, contents.format == SceneState.version, contents.cutShortBytes == 0 {
            shape = reading.shape
        }
    }

    /// Writes `state`: the changes since the file's scene, appended, while they fit beside
    /// it; else the scene whole. Nil when the file holds it already.
    package mutating func write(_ state: SceneState, checkedAgainst limits: ValueLimits) -> Result<StateWritten?, StateFileError> {
        let before = shape.map { $0.wholeBytes + $0.appendedBytes } ?? 0
        do throws(StateFileError) {
            if let saved, let shape, let changes = SceneState.changes(from: saved, to: state) {
                if changes.isEmpty { return .success(nil) }
                let bytes = SceneState.encode(changes, leaving: state.elements.count).count
                let room = Swift.max(shape.wholeBytes, SceneKeeper.appendRoom)
                if shape.appendedBytes + bytes <= room, shape.wholeBytes + shape.appendedBytes + bytes <= SceneState.maximumBytes {
                    let new: StateFileShape
                    do { new = try file.append(changes, from: saved, to: state, checkedAgainst: limits, onto: shape) } catch {
                        // The next try writes the scene whole: smaller than the file with its
                        // changes, it may fit where another append does not (a size limit).
                        self.shape = nil
                        throw error
                    }
                    identity = new.identity
                    self.shape = new
                    self.saved = state
                    // An append that found the file changed writes it whole instead.
                    let whole = new.appendedBytes == 0
                    return .success(StateWritten(bytes: whole ? new.wholeBytes : new.wholeBytes + new.appendedBytes - before, whole: whole))
                }
            }
            let new = try file.replace(with: state, checkedAgainst: limits, over: identity)
            identity = new.identity
            shape = new
            saved = state
            return .success(StateWritten(bytes: new.wholeBytes, whole: true))
        } catch {
            return .failure(error)
        }
    }
}

/// Writes state files off the event loop: the daemon's own thread in motiond, the caller's
/// thread in tests. It holds the ``KeptFile``, so that writes, which it performs one after
/// another in the order asked, each start from what the one before left.
package protocol StateWriter: AnyObject {
    /// From now on, writes go to `file`.
    func keep(_ file: KeptFile)
    /// Writes `state` after every write asked before, then calls `done` on the daemon's
    /// loop with what was written, or the error.
    func write(_ state: SceneState, checkedAgainst limits: ValueLimits, done: @escaping (Result<StateWritten?, StateFileError>) -> Void)
    /// Writes `state` after every write asked before, and returns when it is done.
    func writeAndWait(_ state: SceneState, checkedAgainst limits: ValueLimits) -> Result<StateWritten?, StateFileError>
}
