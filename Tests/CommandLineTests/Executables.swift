import Foundation
import Glibc
import Testing

/// Runs one of the package's executables, as a user would, and captures what it says.
struct Run {
    var status: Int32
    var output: String
    var error: String

    /// The directory holding the built products: the test bundle sits beside them.
    static let productsDirectory: URL = {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    }()

    /// Runs one of the package's products, or with `absolute`, a program found on the PATH
    /// (or at the absolute path given). A program still running after `deadline` seconds is
    /// killed, and the test fails with what it had said, instead of hanging the run. Its
    /// standard input is `input`, or empty; its environment `environment`, or the test's.
    init(_ executable: String, _ arguments: [String], absolute: Bool = false, deadline: Double = 120,
         input: FileHandle = .nullDevice, environment: [String: String]? = nil) throws {
        let url = executable.hasPrefix("/") ? URL(fileURLWithPath: executable)
            : absolute ? try Self.onPath(executable) : Self.productsDirectory.appendingPathComponent(executable)
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw Missing(path: url.path)
        }
        let process = Process()
        process.executableURL = url
        process.arguments = arguments
        if let environment { process.environment = environment }
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        let exited = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        // Read both pipes on threads, so a full pipe cannot block the child.
        let errorData = ThreadedReader(err.fileHandleForReading)
        let outputData = ThreadedReader(out.fileHandleForReading)
        let timedOut = exited.wait(timeout: .now() + deadline) == .timedOut
        var reaped = true
        if timedOut {
            kill(process.processIdentifier, SIGKILL)
            // Bounded too: Foundation was once seen never to report a child's end.
            reaped = exited.wait(timeout: .now() + 10) == .success
        }
        status = reaped ? process.terminationStatus : -SIGKILL
        // A grandchild may hold the pipes open after the child ends: wait a little, not forever.
        output = String(decoding: outputData.wait(seconds: 10), as: UTF8.self)
        error = String(decoding: errorData.wait(seconds: 10), as: UTF8.self)
        if timedOut {
            throw Timeout(description: "\(url.lastPathComponent) \(arguments.joined(separator: " ")) did not finish within \(Int(deadline)) s and was killed; it said:\n\(error)\n\(output.suffix(2000))")
        }
    }

    /// A program that ran past its deadline.
    struct Timeout: Error, CustomStringConvertible { var description: String }

    struct Missing: Error, CustomStringConvertible {
        var path: String
        var description: String { "\(path) is not there; scripts/test builds the products and installs umockdev" }
    }

    /// A program on the PATH (umockdev-run, umockdev-wrapper).
    static func onPath(_ name: String) throws -> URL {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let url = URL(fileURLWithPath: String(directory)).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        throw Missing(path: name)
    }

    var lines: [String] { output.split(separator: "\n").map(String.init) }

    /// Each output line parsed as a JSON object.
    func jsonLines() throws -> [[String: Any]] {
        try lines.map { line in
            let object = try JSONSerialization.jsonObject(with: Data(line.utf8))
            return try #require(object as? [String: Any], "not a JSON object: \(line)")
        }
    }
}

/// Reads a file handle to its end on another thread.
final class ThreadedReader: @unchecked Sendable {
    private let changed = NSCondition()
    private var data = Data()
    private var ended = false

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            // Piece by piece, so that a deadline still returns what came before it.
            while case let chunk = handle.availableData, !chunk.isEmpty {
                changed.withLock { data.append(chunk) }
                changed.broadcast()
            }
            changed.withLock { ended = true }
            changed.broadcast()
        }
    }

    /// What was read, once the writer closed its end or after `seconds`, whichever is first;
    /// a writer that never closes (a stuck process) costs the deadline, not the run.
    func wait(seconds: Double = 30) -> Data {
        waitUntil(seconds: seconds) { _ in false }
    }

    /// What was read, as soon as it satisfies `enough`, or the writer closed its end, or
    /// `seconds` passed.
    func waitUntil(seconds: Double, _ enough: (Data) -> Bool) -> Data {
        let deadline = Date().addingTimeInterval(seconds)
        changed.lock()
        defer { changed.unlock() }
        while !ended && !enough(data) && changed.wait(until: deadline) {}
        return data
    }
}
