import Foundation
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
    /// (or at the absolute path given).
    init(_ executable: String, _ arguments: [String], absolute: Bool = false) throws {
        let url = executable.hasPrefix("/") ? URL(fileURLWithPath: executable)
            : absolute ? try Self.onPath(executable) : Self.productsDirectory.appendingPathComponent(executable)
        guard FileManager.default.isExecutableFile(atPath: url.path) else {
            throw Missing(path: url.path)
        }
        let process = Process()
        process.executableURL = url
        process.arguments = arguments
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read both pipes to the end before waiting, so a full pipe cannot block the child.
        let errorData = ThreadedReader(err.fileHandleForReading)
        let outputData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        status = process.terminationStatus
        output = String(decoding: outputData, as: UTF8.self)
        error = String(decoding: errorData.wait(), as: UTF8.self)
    }

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
    private var data = Data()
    private let done = DispatchSemaphore(value: 0)

    init(_ handle: FileHandle) {
        Thread.detachNewThread { [self] in
            data = handle.readDataToEndOfFile()
            done.signal()
        }
    }

    func wait() -> Data {
        done.wait()
        return data
    }
}
