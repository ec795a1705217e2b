#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The parsers and state machines that read what outside sources send, each fed any bytes
/// with cheap invariants checked on what it makes of them. Two harnesses run the same bodies:
/// libFuzzer's executables in Fuzz/ (`scripts/fuzz`), for long runs guided by coverage, and
/// the test suite (FuzzTargetTests), which replays each target's committed corpus and seeded
/// mutations of it on every run, without a build of its own.
public enum FuzzTarget: String, CaseIterable, Sendable {
    case json, requests, glob, config, dropin, evemu, libinput, assembler, http, websocket, state, numbers

    /// Feeds `bytes` to the target; throws the first invariant that does not hold (a
    /// ``BrokenInvariant``). A parser
    /// that traps stops the process, as it would stop the daemon.
    public func run(_ bytes: [UInt8]) throws {
        switch self {
        case .json: try fuzzJSON(bytes)
        case .requests: try fuzzRequests(bytes)
        case .glob: try fuzzGlob(bytes)
        case .config: try fuzzConfig(bytes)
        case .dropin: try fuzzDropIn(bytes)
        case .evemu: try fuzzEvemu(bytes)
        case .libinput: try fuzzLibinput(bytes)
        case .assembler: try fuzzAssembler(bytes)
        case .http: try fuzzHTTP(bytes)
        case .websocket: try fuzzWebSocket(bytes)
        case .state: try fuzzState(bytes)
        case .numbers: try fuzzNumbers(bytes)
        }
    }

    /// The body of a libFuzzer executable's `LLVMFuzzerTestOneInput`: a broken invariant is
    /// written to standard error and aborts, which libFuzzer reports as a crash and saves the
    /// input that caused it.
    public func libFuzzerInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
        let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
        do {
            try run(bytes)
        } catch {
            let text = Array("fuzz invariant broken: \(error)\n".utf8)
            _ = text.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
            abort()
        }
        return 0
    }
}

/// An invariant a target found broken, in its own words.
public struct BrokenInvariant: Error, CustomStringConvertible {
    public let message: String
    public var description: String { message }
}

/// Stops the input's run when an invariant does not hold. Thrown rather than aborting here,
/// so that the test suite can name the input and go on to the next target.
func fuzzCheck(_ condition: @autoclosure () -> Bool, _ message: @autoclosure () -> String) throws(BrokenInvariant) {
    guard !condition() else { return }
    throw BrokenInvariant(message: message())
}
