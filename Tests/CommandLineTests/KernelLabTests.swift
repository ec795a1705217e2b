import Foundation
import Testing

/// The kernel lab (Tests/KernelLab, booted by scripts/kernel-test): motiond against a real
/// kernel's uinput, evdev and udev, in a virtual machine on Debian's own kernel. One boot runs
/// every test of the guest; each test here reports one of them, so the lab shows in the
/// suite's results as the rest does. `MOTIOND_KERNEL_LAB=skip` leaves it out (docs/testing.md).
enum KernelLab {
    static let script = EndToEnd.repository.appendingPathComponent("Tests/KernelLab/lab.py").path

    /// Every test the guest runs, by name, as `lab.py --list` says (no guest needed for that).
    static let names: [String] = {
        guard let run = try? Run("/usr/bin/python3", [script, "--list"], deadline: 60), run.status == 0 else { return [] }
        return run.output.split(separator: "\n").map(String.init)
    }()

    static let enabled = ProcessInfo.processInfo.environment["MOTIOND_KERNEL_LAB"] != "skip"

    /// What the guest reported of one test.
    struct Result: Decodable, Sendable {
        var test: String
        var status: String
        var seconds: Double
        var detail: String
    }

    /// The whole lab's run: each test's result, and what kernel-test printed.
    struct Outcome: Sendable {
        var status: Int32
        var output: String
        var results: [String: Result]
    }

    /// The one run of the lab, begun by the first test that asks for it. The wait for the
    /// machine (minutes) blocks no thread of the test runner's pool.
    static let outcome = Task<Outcome, any Error> { try await runLab() }

    /// The most the boot and every test may take together, beyond kernel-test's own deadline
    /// (25 minutes): a machine that hangs fails the lab's tests with what it printed.
    static let deadline: Double = 1_600

    private static func runLab() async throws -> Outcome {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("motiond-kernel-lab-\(getpid())")
        try? FileManager.default.removeItem(at: out)
        defer { try? FileManager.default.removeItem(at: out) }
        let log = out.appendingPathExtension("log")
        FileManager.default.createFile(atPath: log.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: log) }

        let process = Process()
        process.executableURL = EndToEnd.repository.appendingPathComponent("scripts/kernel-test")
        process.arguments = ["--out", out.path]
        process.environment = ProcessInfo.processInfo.environment.merging(["MOTIOND_BIN_DIR": Run.productsDirectory.path]) { $1 }
        let output = try FileHandle(forWritingTo: log)
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do { try process.run() } catch { continuation.resume(throwing: error) }
            DispatchQueue.global().asyncAfter(deadline: .now() + deadline) { [process] in
                if process.isRunning { process.terminate() }
            }
        }
        try output.close()

        var results: [String: Result] = [:]
        if let lines = try? String(contentsOf: out.appendingPathComponent("results.jsonl"), encoding: .utf8) {
            for line in lines.split(separator: "\n") {
                let result = try JSONDecoder().decode(Result.self, from: Data(line.utf8))
                results[result.test] = result
            }
        }
        return Outcome(status: status, output: (try? String(contentsOf: log, encoding: .utf8)) ?? "", results: results)
    }
}

@Suite("The kernel lab: motiond on a real kernel's uinput, evdev and udev, in a virtual machine",
       .enabled(if: KernelLab.enabled, "MOTIOND_KERNEL_LAB=skip"))
struct KernelLabTests {
    @Test("the guest has tests to run")
    func listed() {
        #expect(KernelLab.names.count > 10, "lab.py --list gave \(KernelLab.names)")
    }

    @Test("in the guest", arguments: KernelLab.names)
    func guest(test name: String) async throws {
        let outcome = try await KernelLab.outcome.value
        let result = try #require(outcome.results[name],
                                  "the guest never reported \(name); scripts/kernel-test exited \(outcome.status) and said:\n\(outcome.output.suffix(4000))")
        #expect(result.status == "passed", "\(result.detail)")
    }
}
