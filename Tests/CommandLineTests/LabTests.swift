import Foundation
import Testing

/// A lab: tests that run somewhere of their own (a virtual machine, a container whose init
/// is systemd), started by one script that writes each test's result to OUT/results.jsonl.
/// One run serves every test; each test here reports one of them, so a lab shows in the
/// suite's results as the rest does.
struct Lab: Sendable {
    /// The script that runs the lab: `SCRIPT --out DIR`.
    var script: String
    /// What lists the lab's tests by name, one a line (run on this machine, no lab needed).
    var list: [String]
    /// The most the whole run may take: a lab that hangs fails its tests with what it printed.
    var deadline: Double

    /// Every test the lab runs, by name.
    func names() -> [String] {
        guard let run = try? Run(list[0], Array(list.dropFirst()), deadline: 60), run.status == 0 else { return [] }
        return run.output.split(separator: "\n").map(String.init)
    }

    /// What the lab reported of one test.
    struct Result: Decodable, Sendable {
        var test: String
        var status: String
        var seconds: Double
        var detail: String
    }

    /// The whole lab's run: each test's result, and what the script printed.
    struct Outcome: Sendable {
        var status: Int32
        var output: String
        var results: [String: Result]

        /// One test's result, or why there is none.
        func result(of name: String, script: String) throws -> Result {
            try #require(results[name], "the lab never reported \(name); \(script) exited \(status) and said:\n\(output.suffix(4000))")
        }
    }

    /// The lab's one run: one already under way when `started` names its folder (scripts/test
    /// boots the kernel lab as soon as the binaries are built, beside the rest of the suite:
    /// it is the suite's longest part), else a run of its own begun now.
    func outcome(started: String?) async throws -> Outcome {
        if let started { return try await awaitRun(in: URL(fileURLWithPath: started)) }
        return try await run()
    }

    /// Waits for the run scripts/test started in `folder` to end (it writes `folder.status`
    /// then), as long as the lab's deadline; its results, or a failure with its log.
    func awaitRun(in folder: URL) async throws -> Outcome {
        let status = folder.appendingPathExtension("status"), log = folder.appendingPathExtension("log")
        let deadline = Date().addingTimeInterval(deadline)
        while !FileManager.default.fileExists(atPath: status.path) {
            guard Date() < deadline else {
                return Outcome(status: -1, output: "the run in \(folder.path) did not end within \(self.deadline) s:\n"
                               + ((try? String(contentsOf: log, encoding: .utf8)) ?? ""), results: [:])
            }
            try await Task.sleep(for: .seconds(1))
        }
        let code = Int32((try? String(contentsOf: status, encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? -1
        return Outcome(status: code, output: (try? String(contentsOf: log, encoding: .utf8)) ?? "",
                       results: try Self.results(in: folder))
    }

    /// Each test's result in a run's folder (and in its guests' folders, one a compositor), by name.
    static func results(in folder: URL) throws -> [String: Result] {
        var results: [String: Result] = [:]
        let guests = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        for file in [folder] + guests.sorted().map({ folder.appendingPathComponent($0) }) {
            guard let lines = try? String(contentsOf: file.appendingPathComponent("results.jsonl"), encoding: .utf8) else { continue }
            for line in lines.split(separator: "\n") {
                let result = try JSONDecoder().decode(Result.self, from: Data(line.utf8))
                results[result.test] = result
            }
        }
        return results
    }

    /// Runs the lab once. The wait (minutes, for a virtual machine) blocks no thread of the
    /// test runner's pool.
    func run() async throws -> Outcome {
        let name = URL(fileURLWithPath: script).lastPathComponent
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("motiond-\(name)-\(getpid())")
        try? FileManager.default.removeItem(at: out)
        defer { try? FileManager.default.removeItem(at: out) }
        let log = out.appendingPathExtension("log")
        FileManager.default.createFile(atPath: log.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: log) }

        let process = Process()
        process.executableURL = EndToEnd.repository.appendingPathComponent(script)
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
        return Outcome(status: status, output: (try? String(contentsOf: log, encoding: .utf8)) ?? "", results: try Self.results(in: out))
    }
}

/// The kernel lab (Tests/KernelLab, booted by scripts/kernel-test): motiond against a real
/// kernel's uinput, evdev and udev, in a virtual machine on Debian's own kernel.
/// `MOTIOND_KERNEL_LAB=skip` leaves it out (docs/testing.md).
enum KernelLab {
    /// Beyond kernel-test's own deadline for the machine (40 minutes).
    static let lab = Lab(script: "scripts/kernel-test",
                         list: ["/usr/bin/python3", EndToEnd.repository.appendingPathComponent("Tests/KernelLab/lab.py").path, "--list"],
                         deadline: 2_500)
    static let names = lab.names()
    static let enabled = ProcessInfo.processInfo.environment["MOTIOND_KERNEL_LAB"] != "skip"
    /// The one run of the lab: the one scripts/test began (MOTIOND_LAB_RUN, its folder), or
    /// one begun by the first test that asks for it.
    static let outcome = Task<Lab.Outcome, any Error> {
        try await lab.outcome(started: ProcessInfo.processInfo.environment["MOTIOND_LAB_RUN"])
    }
}

/// The compositor lab (Tests/CompositorLab, booted by scripts/compositor-test): the touch from
/// a panel through motiond's virtual touchscreen to weston 10 and sway 1.7 on a virtual GPU,
/// and on to a Wayland client and a page in Chromium. `MOTIOND_COMPOSITOR_LAB=skip` leaves it
/// out (docs/testing.md).
enum CompositorLab {
    /// Beyond compositor-test's own deadline for a guest (20 minutes).
    static let lab = Lab(script: "scripts/compositor-test",
                         list: ["/usr/bin/python3", EndToEnd.repository.appendingPathComponent("Tests/CompositorLab/complab.py").path, "--list"],
                         deadline: 1_500)
    static let names = lab.names()
    static let enabled = ProcessInfo.processInfo.environment["MOTIOND_COMPOSITOR_LAB"] != "skip"
    static let outcome = Task<Lab.Outcome, any Error> {
        try await lab.outcome(started: ProcessInfo.processInfo.environment["MOTIOND_COMPOSITOR_RUN"])
    }
}

/// The systemd lab (Tests/SystemdLab, booted by scripts/systemd-test): the units as
/// `make install-built` installs them, under systemd as init in a container. It needs root;
/// `MOTIOND_SYSTEMD_LAB=skip` leaves it out (docs/testing.md).
enum SystemdLab {
    static let lab = Lab(script: "scripts/systemd-test",
                         list: ["/usr/bin/python3", EndToEnd.repository.appendingPathComponent("Tests/SystemdLab/inside.py").path, "--list"],
                         deadline: 400)
    static let names = lab.names()
    static let enabled = ProcessInfo.processInfo.environment["MOTIOND_SYSTEMD_LAB"] != "skip" && getuid() == 0
    static let outcome = Task<Lab.Outcome, any Error> { try await lab.outcome(started: nil) }
}

@Suite("The kernel lab: motiond on a real kernel's uinput, evdev and udev, in a virtual machine",
       .enabled(if: KernelLab.enabled, "MOTIOND_KERNEL_LAB=skip"))
struct KernelLabTests {
    @Test("the guest has tests to run")
    func listed() {
        #expect(KernelLab.names.count > 10, "lab.py --list gave \(KernelLab.names)")
    }

    /// kernel-test's own last lines (how many passed, in how long), in the suite's output.
    @Test("the lab's run ends, every test reported")
    func run() async throws {
        let outcome = try await KernelLab.outcome.value
        print(outcome.output.split(separator: "\n").suffix(1).joined(separator: "\n"))
        #expect(outcome.status == 0, "\(KernelLab.lab.script) exited \(outcome.status):\n\(outcome.output.suffix(4000))")
    }

    @Test("in the guest", arguments: KernelLab.names)
    func guest(test name: String) async throws {
        let result = try await KernelLab.outcome.value.result(of: name, script: KernelLab.lab.script)
        #expect(result.status == "passed", "\(result.detail)")
    }
}

@Suite("The compositor lab: the touch through weston 10 and sway 1.7 to a Wayland client and Chromium",
       .enabled(if: CompositorLab.enabled, "MOTIOND_COMPOSITOR_LAB=skip"))
struct CompositorLabTests {
    @Test("each compositor has tests to run")
    func listed() {
        #expect(CompositorLab.names.filter { $0.hasPrefix("weston ") }.count >= 5 && CompositorLab.names.filter { $0.hasPrefix("sway ") }.count >= 5,
                "complab.py --list gave \(CompositorLab.names)")
    }

    /// compositor-test's own last line (how many passed, in how long), in the suite's output.
    @Test("the lab's run ends, every test reported")
    func run() async throws {
        let outcome = try await CompositorLab.outcome.value
        print(outcome.output.split(separator: "\n").suffix(1).joined(separator: "\n"))
        #expect(outcome.status == 0, "\(CompositorLab.lab.script) exited \(outcome.status):\n\(outcome.output.suffix(4000))")
    }

    @Test("in the compositor's guest", arguments: CompositorLab.names)
    func guest(test name: String) async throws {
        let result = try await CompositorLab.outcome.value.result(of: name, script: CompositorLab.lab.script)
        #expect(result.status == "passed", "\(result.detail)")
    }
}

@Suite("The systemd lab: motiond's units as installed, under systemd as init in a container",
       .enabled(if: SystemdLab.enabled, "needs root; MOTIOND_SYSTEMD_LAB=skip skips it"))
struct SystemdLabTests {
    @Test("the container has tests to run")
    func listed() {
        #expect(SystemdLab.names.count >= 5, "inside.py --list gave \(SystemdLab.names)")
    }

    @Test("in the container", arguments: SystemdLab.names)
    func container(test name: String) async throws {
        let result = try await SystemdLab.outcome.value.result(of: name, script: SystemdLab.lab.script)
        #expect(result.status == "passed", "\(result.detail)")
    }
}

@Suite("scripts/kernel-test's own refusals")
struct KernelTestScriptTests {
    /// A machine without Debian's kernel package: the lab cannot boot, and must say why
    /// rather than end with a bare status (as `ls` of no match under pipefail once made it).
    @Test("a /boot with no kernel is named, with what to install")
    func noKernel() throws {
        let boot = FileManager.default.temporaryDirectory.appendingPathComponent("motiond-no-kernel-\(getpid())")
        try FileManager.default.createDirectory(at: boot, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: boot) }
        var environment = ProcessInfo.processInfo.environment
        environment["MOTIOND_LAB_BOOT"] = boot.path
        environment["MOTIOND_BIN_DIR"] = Run.productsDirectory.path
        let run = try Run(EndToEnd.repository.appendingPathComponent("scripts/kernel-test").path, ["--out", boot.appendingPathComponent("out").path],
                          deadline: 120, environment: environment)
        #expect(run.status == 2, "kernel-test exited \(run.status): \(run.error)")
        #expect(run.error.contains("no kernel in \(boot.path)"), "kernel-test said: \(run.error)")
        #expect(run.error.contains("linux-image-amd64"), "kernel-test said: \(run.error)")
    }
}
