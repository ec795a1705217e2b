import MotionCore
import Testing
import TouchInput
@testable import MotionDaemon
import VirtualTouchscreenTestSupport

/// What an app gets, under a compositor that drops touch cancels (Debian 12's), from a touch
/// motiond takes away after it began, with the default `cancel = "withdraw"`: no tap, no
/// fling, nothing left down, and the real tap after it clicks (``AppTouch``, Chromium's rules).
/// The withdrawal's frames come on the daemon's timer, with no panel frame to carry them.
@Suite("Withdrawn touches: what a compositor that drops cancels gives the app")
struct WithdrawnTouchTests {
    typealias Bench = VirtualTouchscreenSinkTests.Bench

    static func contact(_ id: Int32, _ phase: TouchPhase, _ x: Double, _ y: Double) -> TouchContact {
        VirtualTouchscreenSinkTests.contact(id, phase, x, y)
    }

    /// The app's touches since the device was made.
    static func touches(_ device: RecordingVirtualDevice) -> [AppTouch] {
        AppTouch.touches(device.libinput.seen, times: device.seenTimes)
    }

    /// Checks that `touch` was withdrawn: lifted, no tap, no fling, slid out of a tap's slop
    /// when it had not left it, shown still (within a pixel) for 0.15 s before the lift.
    static func expectWithdrawn(_ touch: AppTouch, slid: Bool, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(touch.end == .up && !touch.isTap && !touch.flings, "\(touch)", sourceLocation: sourceLocation)
        let end = touch.endAt ?? 0, last = touch.samples.last
        let still = touch.samples.filter { end - $0.time <= 0.15 + 1e-9 }
        #expect(still.count >= 10 && still.allSatisfy { abs($0.x - (last?.x ?? 0)) <= 1 && abs($0.y - (last?.y ?? 0)) <= 1 },
                "not shown still for 0.15 s before the lift: \(touch.samples.suffix(20))", sourceLocation: sourceLocation)
        if slid { #expect(touch.farthest >= 40, "not slid out of a tap's slop: \(touch)", sourceLocation: sourceLocation) }
    }

    /// A real tap at `time` (100 ms down at (1200, 900)): it must reach the app as a tap.
    static func expectTapWorks(_ bench: Bench, _ device: RecordingVirtualDevice, at time: Double, id: Int32, sourceLocation: SourceLocation = #_sourceLocation) {
        bench.frame(time, contact(id, .began, 1200, 900))
        bench.frame(time + 0.1, contact(id, .ended, 1200, 900))
        let last = touches(device).last
        #expect(last?.isTap == true && last?.downAt == time, "the next tap: \(String(describing: last))", sourceLocation: sourceLocation)
        #expect(device.libinput.problems.isEmpty && !device.libinput.button, "\(device.libinput.problems)", sourceLocation: sourceLocation)
    }

    @Test("a finger the panel turns palm 30 ms after it landed is slid away and lifted, on the timer; the real tap after it is a tap")
    func palm() throws {
        let bench = try Bench()
        let device = try bench.device()
        var panel = try RawPanel(bench)
        panel.send([(AbsoluteAxis.slot, 0), (AbsoluteAxis.trackingID, 31), (AbsoluteAxis.positionX, 500), (AbsoluteAxis.positionY, 300)])
        panel.send([(AbsoluteAxis.positionX, 501)])
        panel.send([(AbsoluteAxis.toolType, ToolType.palm)])
        let taken = panel.time
        #expect(bench.daemon.virtualTouchscreens.devices.values.first?.nextDeadline != nil, "no withdrawal under way")
        bench.scheduler.advance(to: taken + 1)
        let touch = try #require(Self.touches(device).first)
        Self.expectWithdrawn(touch, slid: true)
        let took = try #require(touch.endAt) - taken
        #expect(took < 0.25, "the withdrawal took \(took) s: a long press is near")
        panel.send([(AbsoluteAxis.trackingID, -1)])
        Self.expectTapWorks(bench, device, at: taken + 1.5, id: 40)
    }

    @Test("a panel unplugged with a finger down: the finger is slid away and lifted; nothing stays down")
    func unplug() throws {
        let bench = try Bench()
        let device = try bench.device()
        var panel = try RawPanel(bench)
        panel.send([(AbsoluteAxis.slot, 0), (AbsoluteAxis.trackingID, 32), (AbsoluteAxis.positionX, 200), (AbsoluteAxis.positionY, 300)])
        panel.unplug()
        bench.scheduler.advance(to: panel.time + 1)
        let touch = try #require(Self.touches(device).first)
        Self.expectWithdrawn(touch, slid: true)
        Self.expectTapWorks(bench, device, at: panel.time + 1.5, id: 41)
    }

    @Test("a screen gesture that takes two fingers: both slid away and lifted, in slots of their own; they stay out of the app after")
    func screenGesture() throws {
        let bench = try Bench()
        let device = try bench.device()
        bench.frame(10, Self.contact(1, .began, 1000, 800), Self.contact(2, .began, 1600, 300))
        bench.frame(11.2, Self.contact(1, .moved, 1001, 800), Self.contact(2, .moved, 1601, 300))
        bench.frame(11.5, Self.contact(1, .ended, 1001, 800), Self.contact(2, .ended, 1601, 300))
        let both = Self.touches(device)
        #expect(both.count == 2, "\(both)")
        for touch in both { Self.expectWithdrawn(touch, slid: true) }
        Self.expectTapWorks(bench, device, at: 12, id: 3)
    }

    @Test("`lock` with a finger dragging: it is held still where it is and lifted, not slid; a still one beside it is slid; the tap after the lock works")
    func lockWhileDragging() throws {
        let bench = try Bench()
        let device = try bench.device()
        bench.frame(10, Self.contact(1, .began, 1000, 800), Self.contact(2, .began, 1400, 800))
        for step in 1...10 { bench.frame(10 + Double(step) * 0.01, Self.contact(1, .moved, 1000 + Double(step) * 20, 800), Self.contact(2, .stationary, 1400, 800)) }
        bench.clock.now = 10.1
        _ = try bench.request(#"{"id": 1, "op": "lock", "for": 1}"#)
        bench.scheduler.advance(to: 10.6)
        let (dragging, still) = try { () throws -> (AppTouch, AppTouch) in
            let all = Self.touches(device)
            return (try #require(all.first { $0.slot == 0 }), try #require(all.first { $0.slot == 1 }))
        }()
        Self.expectWithdrawn(dragging, slid: false)
        #expect(abs(dragging.farthest - 200) < 1, "the drag moved on: \(dragging)")
        Self.expectWithdrawn(still, slid: true)
        bench.frame(11.2, Self.contact(1, .ended, 1200, 800), Self.contact(2, .ended, 1400, 800))
        Self.expectTapWorks(bench, device, at: 11.5, id: 5)
    }

    @Test("a jump: the part before it is withdrawn, and the part after lands once that lifted, where the finger is then: the app never has the two at once")
    func jump() throws {
        let bench = try Bench()
        let device = try bench.device()
        bench.frame(10, Self.contact(1, .began, 700, 700))
        bench.frame(10.01, Self.contact(1, .moved, 702, 700))
        // What the jump filter makes of a contact that moved 600 px in one frame: its first
        // part cancelled, a new contact where it is now.
        bench.frame(10.02, Self.contact(1, .cancelled, 702, 700), Self.contact(2, .began, 1302, 700))
        for step in 1...30 { bench.frame(10.02 + Double(step) * 0.01, Self.contact(2, .moved, 1302 + Double(step), 700)) }
        let touches = Self.touches(device)
        #expect(touches.count == 2, "\(touches)")
        Self.expectWithdrawn(touches[0], slid: true)
        let after = try #require(touches.last)
        let firstLifted = try #require(touches[0].endAt)
        #expect(after.downAt >= firstLifted, "the two at once: \(touches)")
        #expect(after.down.x >= 4 * 1302 && after.staysDown, "the new part lands where the finger is when it lands, and is down: \(after)")
        bench.frame(10.4, Self.contact(2, .ended, 1332, 700))
        #expect(Self.touches(device).last?.end == .up && device.libinput.problems.isEmpty, "\(device.libinput.problems)")
    }

    @Test("a palm found beside a finger down slides across the line between them: their span changes by under 2%, so no app pinches")
    func besideAnotherFinger() throws {
        let bench = try Bench()
        let device = try bench.device()
        bench.frame(10, Self.contact(1, .began, 700, 500), Self.contact(2, .began, 1000, 500))
        bench.frame(10.01, Self.contact(1, .stationary, 700, 500), Self.contact(2, .cancelled, 1000, 500))
        bench.scheduler.advance(to: 10.5)
        var spans: [Double] = []
        var at: [Int: (Int32, Int32)] = [:]
        for seen in device.libinput.seen {
            switch seen {
            case .down(let slot, let x, let y), .motion(let slot, let x, let y): at[slot] = (x, y)
            case .up(let slot), .cancel(let slot): at[slot] = nil
            }
            if let a = at[0], let b = at[1] { spans.append(Double((a.0 - b.0) * (a.0 - b.0) + (a.1 - b.1) * (a.1 - b.1)).squareRoot() / 4) }
        }
        let withdrawn = try #require(Self.touches(device).first { $0.slot == 1 })
        Self.expectWithdrawn(withdrawn, slid: true)
        #expect(spans.count > 5 && spans.allSatisfy { abs($0 / 300 - 1) < 0.02 }, "\(spans)")
    }

    @Test("a tap that lands and lifts while a withdrawal is under way reaches the app whole, once the withdrawal lifted; a finger that moved and lifted meanwhile not at all (it would be a tap where it ended)")
    func tapDuringWithdrawal() throws {
        let bench = try Bench()
        let device = try bench.device()
        bench.frame(10, Self.contact(1, .began, 700, 700))
        bench.frame(10.01, Self.contact(1, .cancelled, 700, 700))
        bench.frame(10.05, Self.contact(2, .began, 1500, 800), Self.contact(3, .began, 1200, 300))
        bench.frame(10.08, Self.contact(2, .stationary, 1500, 800), Self.contact(3, .moved, 1260, 300))
        bench.frame(10.12, Self.contact(2, .ended, 1500, 800), Self.contact(3, .ended, 1260, 300))
        bench.scheduler.advance(to: 10.5)
        let touches = Self.touches(device)
        try #require(touches.count == 2, "\(touches)")
        let firstLifted = try #require(touches[0].endAt)
        #expect(touches[1].isTap && touches[1].downAt >= firstLifted, "\(touches)")
        #expect(device.libinput.problems.isEmpty && !device.libinput.button, "\(device.libinput.problems)")
    }
}
