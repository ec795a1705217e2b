import MotionConfiguration
import MotionCore
import TouchInput
import MotionWire

/// The scene across restarts: the state file read at start and kept as the scene changes
/// (docs/operations.md), through the ``SceneKeeper`` sink.
extension Daemon {
    /// What became of the state file at start, or at a reload that read it again.
    public enum Restoration {
        /// There was no file, or an empty one: a first start, or one after `motionctl state
        /// clear` of a stopped daemon.
        case nothingSaved
        /// The file was put back; `notes` say what of it no longer fits the configuration;
        /// `cutShort` counts the bytes of a last write a crash cut short, which were ignored.
        case restored(elements: Int, added: Int, notes: [String], cutShort: Int)
        /// The file was refused (damaged, hostile); it was set aside for an operator to look
        /// at. When it could not be set aside (`setAside` says why), it is left alone and the
        /// scene is not kept.
        case refused(StateFileError, setAside: StateFileError?)
        /// The file is not motiond's to read or replace (not readable, not a regular file, not
        /// a state file): it is left alone, and the scene is not kept, until a reload finds it
        /// readable.
        case leftAlone(StateFileError)
    }

    /// Restores the scene from `file`, then keeps it there: every change written at most
    /// `interval` seconds of `scheduler`'s clock after the write before, through `writer`.
    /// Called once, before the first client and the first frame. A file that cannot be used
    /// leaves the scene as the configuration made it: it never stops the daemon starting.
    /// Another motiond keeping its scene in the same file does: it throws
    /// ``StateFileError/Cause/inUse``, naming it.
    package func keepScene(in file: StateFile, interval: Double, scheduler: FrameScheduler, writer: StateWriter) throws(StateFileError) -> Restoration {
        stateLock = try file.lock()
        let keeper = SceneKeeper(file: file, interval: interval, scheduler: scheduler, writer: writer) { [unowned self] in scene.savedState() }
        self.keeper = keeper
        keeper.onFailureChanged = { [unowned self] in onEvent(.sceneKeeping(failure: $0)) }
        sinks.append(keeper)
        file.removeLeftovers()
        let restoration = takeUpStateFile(readStateFile())
        // The restored values are the scene's from the start: nothing is published for them
        // but as current values, and the engine starts from them.
        _ = engine.tick(at: clock.now)
        scheduleTimer()
        return restoration
    }

    func readStateFile() -> Result<StateFileReading?, StateFileError> {
        guard let keeper else { return .success(nil) }
        return Result { () throws(StateFileError) in try keeper.file.read(limits: configuration.valueLimits) }
    }

    /// Puts what the state path held into the scene and tells the keeper what the file is.
    func takeUpStateFile(_ reading: Result<StateFileReading?, StateFileError>) -> Restoration {
        guard let keeper else { return .nothingSaved }
        switch reading {
        case .success(let found):
            keeper.found(found)
            guard let contents = found?.contents else { return .nothingSaved }
            let notes = scene.restore(contents.state)
            return .restored(elements: contents.state.elements.count - notes.count, added: scene.added.count, notes: notes,
                             cutShort: contents.cutShortBytes)
        case .failure(let refusal) where refusal.cause == .refused:
            do { try keeper.file.setAside() } catch {
                keeper.leaveAlone(error)
                return .refused(refusal, setAside: error)
            }
            keeper.found(nil)
            return .refused(refusal, setAside: nil)
        case .failure(let error):
            keeper.leaveAlone(error)
            return .leftAlone(error)
        }
    }

    /// Writes the scene as it is now, and waits until it is on disk (SIGTERM), then lets go of
    /// the file for another motiond; nil when it was written or nothing is kept, else why not.
    func keepSceneFinally() -> StateFileError? {
        defer { stateLock = nil }
        return keeper?.writeFinally()
    }

    /// What `saved_scene` answers: the file, the last write, and the scene as the file holds it.
    var savedSceneJSON: JSONValue {
        guard let keeper else {
            return .object([("file", .null), ("interval", .null), ("written", .null), ("error", .null), ("writes", 0), ("failed_writes", 0), ("elements", .null)])
        }
        return .object([
            ("file", .string(keeper.file.path)),
            ("interval", .number(keeper.interval)),
            ("written", keeper.writtenAt.map { .number(((clock.now - $0) * 1000).rounded() / 1000) } ?? .null),
            ("error", keeper.problem.map { .string($0.description) } ?? .null),
            ("writes", .integer(Int64(keeper.writes))),
            ("failed_writes", .integer(Int64(keeper.failedWrites))),
            ("elements", keeper.saved.map { .array($0.elements.map(SceneState.json)) } ?? .null),
        ])
    }
}
