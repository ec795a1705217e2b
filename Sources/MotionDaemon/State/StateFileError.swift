import Glibc
import MotionConfiguration

/// Why the state file could not be read or written: the path, and what went wrong there (a
/// step the system refused, with its reason such as "No space left on device", or the file's
/// refusal), each problem carrying only what it has.
public struct StateFileError: Error, Sendable, CustomStringConvertible {
    /// A step of reading or writing the file, as a log line names it ("cannot sync …").
    public enum Step: String, Sendable {
        case create = "create", write = "write", sync = "sync", rename = "rename over the state file"
        case syncDirectory = "sync the directory", read = "read", setAside = "set aside"
    }

    /// What went wrong.
    public enum Problem: Sendable, Equatable {
        /// The system refused a step, with its error number.
        case failed(Step, errno: CInt)
        /// The scene would make a file this motiond could not read back (too large, say), so
        /// it was not written.
        case unreadable(SceneStateError)
        /// The file was read but its contents are refused.
        case refused(SceneStateError)
        /// The file is not a state file at all (it does not begin as one): left alone.
        case foreign(SceneStateError)
        /// The path is not a regular file (a FIFO, a device, a directory, a link): left alone.
        case notRegular(found: String)
        /// Something other than the file motiond wrote is at the path now: left alone.
        case replaced(found: String)
        /// Another motiond keeps its scene in the file; its process when the kernel says.
        case inUse(holder: Int32?)
    }

    /// The problem's kind, for code that only asks which it was.
    public enum Cause: Sendable, Equatable {
        case create, write, sync, rename, syncDirectory, read, setAside
        case unreadable, refused, foreign, notRegular, replaced, inUse
    }

    /// The file or directory the problem was on.
    public var path: String
    public var problem: Problem

    init(_ path: String, _ problem: Problem) {
        self.path = path
        self.problem = problem
    }

    /// A ``TrustedFile``'s failure, said as the state file's.
    init(_ error: TrustedFileError) {
        switch error.problem {
        case .failed(let step, let errno):
            let steps: [TrustedFileError.Step: Step] = [.create: .create, .write: .write, .sync: .sync, .rename: .rename, .syncDirectory: .syncDirectory, .read: .read]
            self.init(error.path, .failed(steps[step] ?? .write, errno: errno))
        case .refused(let found): self.init(error.path, .replaced(found: found))
        case .changedMeanwhile(.appeared(nil)): self.init(error.path, .replaced(found: "something was put there while motiond wrote"))
        case .changedMeanwhile(.appeared(let kind?)): self.init(error.path, .replaced(found: "\(kind) was put there, which motiond did not write"))
        case .changedMeanwhile(.replaced(let kind)): self.init(error.path, .replaced(found: "\(kind) was put in place of the file motiond wrote"))
        }
    }

    public var cause: Cause {
        switch problem {
        case .failed(let step, _):
            switch step {
            case .create: .create
            case .write: .write
            case .sync: .sync
            case .rename: .rename
            case .syncDirectory: .syncDirectory
            case .read: .read
            case .setAside: .setAside
            }
        case .unreadable: .unreadable
        case .refused: .refused
        case .foreign: .foreign
        case .notRegular: .notRegular
        case .replaced: .replaced
        case .inUse: .inUse
        }
    }

    /// Why the contents were refused, for the problems that are a refusal of them.
    public var refusal: SceneStateError? {
        switch problem {
        case .unreadable(let refusal), .refused(let refusal), .foreign(let refusal): refusal
        default: nil
        }
    }

    /// Whether the file is not motiond's to replace: not a regular file, not a state file,
    /// not readable, or not the file motiond wrote. The scene is then not kept at all, so
    /// that what the file holds is never lost to a scene that did not come from it.
    public var leavesFileAlone: Bool {
        switch problem {
        case .foreign, .notRegular, .replaced, .failed(.read, _): true
        default: false
        }
    }

    /// What failed and why, in words, as a log line says it.
    public var description: String {
        switch problem {
        case .unreadable(let refusal): "cannot keep the scene in \(path): it would not be read back: \(refusal)"
        case .refused(let refusal): "the state file \(path) is refused: \(refusal)"
        case .foreign(let refusal): "\(path) is not a state file (\(refusal.message)): motiond leaves it alone"
        case .notRegular(let found): "\(path) is \(found), not a regular file: motiond leaves it alone"
        case .replaced(let found): "\(path): \(found): motiond leaves it alone"
        case .inUse(let holder):
            "the state file \(path) is in use by another motiond" + (holder.map { " (pid \($0))" } ?? "") + ": two daemons cannot keep one scene"
        case .failed(.read, let errno): "cannot read \(path): \(String(cString: strerror(errno))): motiond leaves it alone"
        case .failed(let step, let errno): "cannot \(step.rawValue) \(path): \(String(cString: strerror(errno)))"
        }
    }
}
