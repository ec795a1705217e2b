#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Testing

/// The suite's one seed, for every test that draws its cases at random: fixed by default, so
/// each run draws the same cases and a failure can be replayed; `MOTIOND_TEST_SEED=N` draws
/// others, and `MOTIOND_TEST_SEED=random` a new seed, printed. Each test derives its own stream
/// from the seed and its own name, so what one test draws does not depend on which others run.
public enum TestSeed {
    /// The seed when MOTIOND_TEST_SEED is not set.
    public static let standard: UInt64 = 1

    /// This run's seed, printed once when first read.
    public static let value: UInt64 = {
        let setting = getenv("MOTIOND_TEST_SEED").map { String(cString: $0) } ?? ""
        let seed: UInt64
        switch setting {
        case "": seed = standard
        case "random": seed = UInt64.random(in: 0...UInt64.max)
        default:
            guard let number = UInt64(setting) else {
                fatalError("MOTIOND_TEST_SEED=\(setting): it takes a number, or `random` for a new one")
            }
            seed = number
        }
        print("Test seed: MOTIOND_TEST_SEED=\(seed)\(setting == "random" ? " (drawn at random)" : "")")
        return seed
    }()

    /// The running test's generator; `variant` tells a parameterized test's cases apart.
    /// Give the test the ``Testing/Trait/seeded`` trait, so its failures name the seed.
    public static func generator(variant: Int? = nil) -> SplitMix64 {
        generator(for: currentTest + (variant.map { " \($0)" } ?? ""))
    }

    /// The running test as `swift test --filter` names it: `Module.Suite/function`.
    public static var currentTest: String {
        guard let id = Test.current?.id else { return "?" }
        return ([id.moduleName + "." + (id.nameComponents.first ?? "")] + id.nameComponents.dropFirst())
            .joined(separator: "/").split(separator: "(").first.map(String.init) ?? ""
    }

    /// The generator for the test named `name` (its suite and function, as `--filter` names
    /// them): this run's seed mixed with the name, by FNV-1a rather than `Hasher`, whose seed
    /// changes with each process.
    public static func generator(for name: String) -> SplitMix64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in name.utf8 { hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3 }
        return SplitMix64(seed: value ^ hash)
    }

    /// What a failure says, so it can be drawn again: the seed and the command that reruns
    /// the test named `name` with it.
    public static func rerun(_ name: String) -> String {
        "seed \(value); rerun with MOTIOND_TEST_SEED=\(value) swift test --filter \(name)"
    }
}

extension Trait where Self == IssueHandlingTrait {
    /// For a test that draws from ``TestSeed``: each of its failures names the seed and the
    /// command that draws the same cases again.
    public static var seeded: Self {
        .compactMapIssues { issue in
            var issue = issue
            issue.comments.append(Comment(rawValue: TestSeed.rerun(TestSeed.currentTest)))
            return issue
        }
    }
}
