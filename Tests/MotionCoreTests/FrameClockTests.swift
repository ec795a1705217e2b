import Testing
@testable import MotionCore

@Suite("Frame clocks")
struct FrameClockTests {
    @Test("a timed clock makes zero wake-ups while every spring is at rest")
    func noWakeUpsAtRest() throws {
        let scheduler = ManualScheduler()
        let clock = TimedFrameClock(rate: 120, scheduler: scheduler)
        let position = ReactiveProperty(Point(x: 0, y: 0))
        let destination = ReactiveProperty(Point(x: 0, y: 0))
        let spring = Spring(to: destination, initialValue: position, threshold: 0.5)
        let subscription = springSource(spring, clock: clock).subscribe(next: { position.value = $0 })

        // At rest from the start: ten seconds pass without a single wake-up.
        scheduler.advance(to: 10)
        #expect(clock.wakeUps == 0)
        #expect(scheduler.scheduledCount == 0)

        // A new destination: frames at 120 Hz until the spring rests, then none.
        destination.value = Point(x: 300, y: -200)
        scheduler.advance(to: 12)
        let wakeUpsToRest = clock.wakeUps
        #expect(position.value == destination.value)
        #expect(wakeUpsToRest > 40 && wakeUpsToRest < 120, "about half a second at 120 Hz, got \(wakeUpsToRest)")
        #expect(!clock.isRunning)
        #expect(scheduler.pendingCount == 0)
        scheduler.advance(to: 100)
        #expect(clock.wakeUps == wakeUpsToRest)
        subscription.unsubscribe()
    }

    @Test("frames follow a fixed grid at the rate and carry the time they ran")
    func gridAndLateness() {
        let scheduler = ManualScheduler(now: 5)
        let clock = TimedFrameClock(rate: 100, scheduler: scheduler)
        var times: [Double] = []
        let subscription = clock.observeFrames { times.append($0) }
        scheduler.advance(to: 5.05)
        #expect(times.count == 5)
        for (index, time) in times.enumerated() {
            #expect(Swift.abs(time - (5 + Double(index + 1) / 100)) < 1e-9)
        }
        // Frames that run 3 ms late are stamped with their real time; the grid does not drift.
        times = []
        scheduler.advance(to: 5.1, lateness: 0.003)
        #expect(times.count == 5)
        #expect(Swift.abs(times[0] - 5.063) < 1e-9)
        #expect(Swift.abs(times[4] - 5.103) < 1e-9)
        subscription.unsubscribe()
        #expect(!clock.isRunning)
    }

    @Test("frames missed while busy are skipped, not replayed")
    func skipsMissedFrames() {
        let scheduler = ManualScheduler()
        let clock = TimedFrameClock(rate: 100, scheduler: scheduler)
        var times: [Double] = []
        let subscription = clock.observeFrames { times.append($0) }
        scheduler.advance(to: 0.01, lateness: 0.5)  // the first frame runs half a second late
        scheduler.advance(to: 0.6)
        #expect(times.count == 10, "one late frame, then the grid resumes after it: \(times)")
        #expect(times.dropFirst().allSatisfy { $0 > 0.51 })
        subscription.unsubscribe()
    }

    @Test("catching up runs the frame owed by an input frame's time, at that time; never one not yet due, ahead of the clock, or within a frame")
    func catchUp() {
        let scheduler = ManualScheduler()
        let clock = TimedFrameClock(rate: 100, scheduler: scheduler)
        var times: [Double] = []
        let subscription = clock.observeFrames { time in
            times.append(time)
            clock.catchUp(to: time)  // within a frame: nothing more
        }
        clock.catchUp(to: 0.005)
        #expect(times.isEmpty, "the first frame is due at 0.01")
        scheduler.busy(until: 0.2)
        clock.catchUp(to: 0.3)
        #expect(times.isEmpty, "0.3 is ahead of the clock's 0.2")
        clock.catchUp(to: 0.137)
        #expect(times == [0.137], "owed since 0.01 and run at the input's time")
        clock.catchUp(to: 0.139)
        #expect(times == [0.137], "the next frame is due on the grid at 0.14")
        scheduler.advance(to: 0.25)
        #expect(times.count == 7 && times.dropFirst().first.map { abs($0 - 0.2) < 1e-9 } == true,
                "the grid resumes after the caught-up frame, at the loop's time: \(times)")
        #expect(clock.wakeUps == 6, "0.2 to 0.25: a caught-up frame is no wake-up")
        subscription.unsubscribe()
    }

    @Test("a manual clock only delivers frames while observed")
    func manualClock() {
        let clock = ManualFrameClock()
        clock.tick(at: 1)
        #expect(clock.deliveredFrames == 0)
        var count = 0
        let subscription = clock.observeFrames { _ in count += 1 }
        clock.tick(at: 2)
        subscription.unsubscribe()
        clock.tick(at: 3)
        #expect(count == 1)
        #expect(clock.deliveredFrames == 1)
        #expect(clock.now == 3)
    }

    @Test("a clock with a frame runner runs each frame through it, and the engine returns the frame's report: the values its springs moved, at its time")
    func clockFrameReturnsReport() throws {
        let scheduler = ManualScheduler()
        let clock = TimedFrameClock(rate: 100, scheduler: scheduler)
        let engine = MotionEngine(scene: Scene(size: Size(width: 1920, height: 1080)), clock: clock)
        let element = Element(id: "card", center: Point(x: 100, y: 100), size: Size(width: 40, height: 40))
        let destination = ReactiveProperty(Point(x: 100, y: 100))
        engine.add(element, interactions: [Attach(position: element.position, to: destination)])
        var reports: [(time: Double, positions: [Point])] = []
        clock.frameRunner = { time in
            let report = engine.runClockFrame(at: time)
            let positions = report.values.compactMap { update -> Point? in
                guard update.stream == "card.position", case .point(let p) = update.value else { return nil }
                #expect(update.time == time)
                return p
            }
            reports.append((report.time, positions))
        }
        destination.value = Point(x: 500, y: 100)
        scheduler.advance(to: 0.05)
        #expect(reports.count == 5, "one run a frame, none delivered behind the runner's back")
        #expect(reports.allSatisfy { $0.positions.count == 1 }, "each frame's report holds where its spring moved the card")
        #expect(reports.map(\.time) == (1...5).map { Double($0) / 100 })
        let xs = reports.map { $0.positions[0].x }
        #expect(zip(xs, xs.dropFirst()).allSatisfy { $0 < $1 } && xs.last! < 500, "moving towards 500: \(xs)")
        #expect(element.position.value.x == xs.last!)
    }
}
