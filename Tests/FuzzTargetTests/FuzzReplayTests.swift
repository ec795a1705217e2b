import Foundation
import FuzzTargets
import Glibc
import SeededRandom
import Testing

/// Every fuzz target (Sources/FuzzTargets) on its committed corpus, then on mutations of it
/// drawn from the suite's seed: a parser that breaks an invariant on one fails here, with the
/// input saved; one that traps stops the test process, with the input it was fed on disk.
/// libFuzzer's long, coverage-guided runs are `scripts/fuzz`, for contributors.
///
/// Serialized: the glob and web targets share a daemon between inputs, as under libFuzzer.
@Suite("Fuzz targets on their corpora and seeded mutations", .serialized)
struct FuzzReplayTests {
    /// Mutations per target: about a second each in a debug build on two loaded cores (an
    /// input's cost ranges from 15 µs, a JSON line, to 5 ms, an evemu recording replayed).
    static let mutations: [FuzzTarget: Int] = [
        .json: 60_000, .requests: 1000, .glob: 1000, .config: 2500, .dropin: 3500, .evemu: 200,
        .libinput: 800, .assembler: 16_000, .http: 4000, .websocket: 1500, .state: 30_000, .numbers: 30_000,
    ]

    @Test func json() throws { try replay(.json) }
    @Test func requests() throws { try replay(.requests) }
    @Test func glob() throws { try replay(.glob) }
    @Test func config() throws { try replay(.config) }
    @Test func dropin() throws { try replay(.dropin) }
    @Test func evemu() throws { try replay(.evemu) }
    @Test func libinput() throws { try replay(.libinput) }
    @Test func assembler() throws { try replay(.assembler) }
    @Test func http() throws { try replay(.http) }
    @Test func websocket() throws { try replay(.websocket) }
    @Test func state() throws { try replay(.state) }
    @Test func numbers() throws { try replay(.numbers) }

    /// Where inputs go: the one being run (read it after a crash) and those that failed.
    static let scratch = FuzzSetup.repository.appendingPathComponent(".build/fuzz-replay")

    /// The corpus, then the mutations; or only the file MOTIOND_FUZZ_INPUT names, to rerun one.
    func replay(_ target: FuzzTarget) throws {
        let test = TestSeed.currentTest
        let setup = try FuzzSetup(target)
        try FileManager.default.createDirectory(at: Self.scratch, withIntermediateDirectories: true)
        let current = try InputFile(Self.scratch.appendingPathComponent("\(target.rawValue).current").path)
        if let file = ProcessInfo.processInfo.environment["MOTIOND_FUZZ_INPUT"] {
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: file)))
            do { try target.run(bytes) } catch { Issue.record("\(target.rawValue) on \(file): \(error)") }
            return
        }
        let count = try #require(Self.mutations[target])
        let mutator = Mutator(corpus: setup.corpus.map(\.bytes), tokens: setup.tokens, maximumLength: setup.maximumLength)
        var random = TestSeed.generator(for: test)
        print("Fuzz replay \(target.rawValue): \(setup.corpus.count) corpus files, then \(count) mutations (\(TestSeed.rerun(test))); a crash's input is in \(current.path)")
        let start = ContinuousClock.now
        for index in 0..<(setup.corpus.count + count) {
            let (input, what) = index < setup.corpus.count
                ? (setup.corpus[index].bytes, "the corpus file Fuzz/Corpus/\(target.rawValue)/\(setup.corpus[index].name)")
                : (mutator.input(&random), "mutation \(index - setup.corpus.count + 1) of \(count)")
            current.hold(input)
            do {
                try target.run(input)
            } catch {
                let saved = Self.scratch.appendingPathComponent("\(target.rawValue)-seed-\(TestSeed.value)-input-\(index)")
                try Data(input).write(to: saved)
                Issue.record("""
                    The fuzz target \(target.rawValue) broke an invariant on \(what) (\(TestSeed.rerun(test))): \(error)
                    The input is \(saved.path); rerun it alone with
                        MOTIOND_FUZZ_INPUT=\(saved.path) swift test --filter \(test)
                        Fuzz/.build/release/fuzz-\(target.rawValue) \(saved.path)   (built by scripts/fuzz \(target.rawValue) 1)
                    """)
                return
            }
        }
        let elapsed = start.duration(to: .now).components
        let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
        print("Fuzz replay \(target.rawValue): \(setup.corpus.count + count) inputs in \(String(format: "%.2f", seconds)) s")
    }
}

/// A file that always holds the input being run, so that a crash, which ends the process
/// before anything can be saved, leaves it behind. Rewritten in place, two system calls an
/// input.
final class InputFile {
    let path: String
    private let descriptor: Int32

    init(_ path: String) throws {
        self.path = path
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw FuzzSetup.Problem(description: "cannot write \(path): errno \(errno)") }
    }

    deinit { close(descriptor) }

    func hold(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        _ = ftruncate(descriptor, off_t(bytes.count))
    }
}
