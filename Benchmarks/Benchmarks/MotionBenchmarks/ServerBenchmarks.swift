import Benchmark
import Foundation
import MotionCore
import MotionConfiguration
import MotionServer
import MotionTUIO
import TouchInput
import MotionDaemon

/// The touchscreen the benchmarks' frames come from.
private let panel = DeviceIdentity(number: 0, node: "/dev/input/event5")

/// A client that reads everything at once: what the daemon's own work costs, with the
/// socket's taken out (the kernel's write is measured by scripts/measure against the floor).
private final class DiscardingOutput: ClientOutput {
    var bytes = 0
    var coalesced: Int { 0 }
    var isKeepingUp: Bool { true }
    func send(_ line: ArraySlice<UInt8>, coalescing stream: StreamID?) { bytes += line.count }
    func sendNow(_ lines: ArraySlice<UInt8>) { bytes += lines.count }
    func flush() {}
    func close(saying line: ArraySlice<UInt8>?) {}
}

/// One element under one finger, DirectlyManipulable: each frame moves it.
private let scene = """
    [[element]]
    id = "card"
    center = [960, 540]
    size = [800, 600]
    [element.directly_manipulable]
    """

/// Measures frames of one finger circling on the card, after it passed the drag's slop.
/// Each frame is processed half a millisecond after its timestamp on `clock`, as a live
/// one is: so the publish latency is observed as in the daemon.
private func measureFrames(through daemon: Daemon, clock: ManualFrameClock, _ benchmark: Benchmark) {
    func frame(_ index: Int, _ phase: TouchPhase) -> TouchFrame {
        let t = Double(index) / 120
        return TouchFrame(time: t, contacts: [TouchContact(slot: 0, trackingID: 1, phase: phase, deviceX: 0, deviceY: 0,
                                                           position: Point(x: 960 + 200 * sin(t), y: 540 + 200 * cos(t)))])
    }
    daemon.process(frame(0, .began), from: panel)
    let frames = (1..<4096).map { frame($0, .moved) }
    for index in 0..<64 {
        clock.now = frames[index].time + 0.0005
        daemon.process(frames[index], from: panel)
    }
    var index = 64
    benchmark.startMeasurement()
    for _ in benchmark.scaledIterations {
        clock.now = frames[index].time + 0.0005
        daemon.process(frames[index], from: panel)
        index = (index + 1) % frames.count
    }
    benchmark.stopMeasurement()
}

/// The publish path: a frame through the daemon (engine, `seq`, encoding, fan-out) to N
/// clients subscribed to `"*"`; and a request decoded and answered.
func serverBenchmarks() {
    for sessions in [1, 100, 1000] {
        Benchmark("Daemon frame published to \(sessions) subscriber\(sessions == 1 ? "" : "s") of *", configuration: .init(scalingFactor: .kilo)) { benchmark in
            let clock = ManualFrameClock(now: 0)
            let daemon = Daemon(configuration: try Configuration.parse(scene, file: "bench.toml"), clock: clock, controlPolicy: { _ in true })
            var outputs: [DiscardingOutput] = []
            for _ in 0..<sessions {
                let output = DiscardingOutput()
                let session = daemon.connect(output, credentials: nil)
                daemon.receive(#"{"id":1,"op":"subscribe","streams":["*"]}"#, from: session)
                outputs.append(output)
            }
            measureFrames(through: daemon, clock: clock, benchmark)
            blackHole(outputs.reduce(0) { $0 + $1.bytes })
        }
    }

    // What a TUIO target adds to a frame: the difference from the first. The datagrams go to a
    // loopback port nobody listens on, so the kernel's send is in the figures.
    let receiver = "127.0.0.1:9"
    for (name, table) in [
        ("no TUIO", ""),
        ("TUIO 1.1", "[[tuio]]\ntarget = \"\(receiver)\"\nelements = \"*\"\n"),
        ("TUIO 2.0", "[[tuio]]\ntarget = \"\(receiver)\"\nversion = \"2.0\"\nelements = \"*\"\n"),
    ] {
        Benchmark("Daemon frame, no subscriber, \(name)", configuration: .init(scalingFactor: .kilo)) { benchmark in
            let clock = ManualFrameClock(now: 0)
            let daemon = Daemon(configuration: try Configuration.parse(scene + "\n" + table, file: "bench.toml"), clock: clock, tuio: TUIOTargets(), controlPolicy: { _ in true })
            measureFrames(through: daemon, clock: clock, benchmark)
        }
    }

    // A Prometheus scrape: collecting the gauges, /proc/self, and writing the text.
    Benchmark("Metrics scrape: GET /metrics's body, one touchscreen, 10 clients") { benchmark in
        let clock = ManualFrameClock(now: 0)
        let daemon = Daemon(configuration: try Configuration.parse(scene, file: "bench.toml"), clock: clock, controlPolicy: { _ in true })
        for _ in 0..<10 { _ = daemon.connect(DiscardingOutput(), credentials: nil) }
        for index in 0..<64 {
            let time = Double(index) / 120
            clock.now = time
            daemon.process(TouchFrame(time: time, contacts: [TouchContact(slot: 0, trackingID: 1, phase: index == 0 ? .began : .moved, deviceX: 0, deviceY: 0,
                                                                          position: Point(x: 960 + Double(index), y: 540))]), from: panel)
        }
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { blackHole(daemon.metricsExposition()) }
        benchmark.stopMeasurement()
    }

    Benchmark("Request decoded and answered: get card.position", configuration: .init(scalingFactor: .kilo)) { benchmark in
        let daemon = Daemon(configuration: try Configuration.parse(scene, file: "bench.toml"), clock: ManualFrameClock(now: 0), controlPolicy: { _ in true })
        let output = DiscardingOutput()
        let session = daemon.connect(output, credentials: nil)
        let line = Array(#"{"id":7,"op":"get","stream":"card.position"}"#.utf8)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations { daemon.receive(utf8: line, from: session) }
        benchmark.stopMeasurement()
        blackHole(output.bytes)
    }
}
