import MotionCore
import Testing

@Suite("Coalescing queued frames")
struct FrameCoalescingTests {
    private func frame(_ time: Double, _ contacts: [(Int32, TouchPhase)]) -> TouchFrame {
        TouchFrame(time: time, contacts: contacts.map { id, phase in
            TouchContact(slot: Int(id), trackingID: id, phase: phase, deviceX: 0, deviceY: 0, position: Point(x: time, y: Double(id)))
        })
    }

    @Test("of a run of moves, only the newest frame of each device is kept")
    func moves() {
        let entries: [FrameCoalescing.Entry] = [
            .frame(device: 0, frame(1, [(1, .moved)])), .frame(device: 1, frame(1, [(7, .moved)])),
            .frame(device: 0, frame(2, [(1, .moved), (2, .stationary)])), .frame(device: 0, frame(3, [(1, .stationary)])),
            .frame(device: 1, frame(2, [(7, .moved)])),
        ]
        #expect(FrameCoalescing.keep(entries) == [false, false, false, true, true])
    }

    @Test("every frame in which a touch begins, ends or is cancelled is kept, and the newest move before it")
    func lifeEvents() {
        let entries: [FrameCoalescing.Entry] = [
            .frame(device: 0, frame(1, [(1, .began)])), .frame(device: 0, frame(2, [(1, .moved)])),
            .frame(device: 0, frame(3, [(1, .moved)])),
            .frame(device: 0, frame(4, [(1, .moved), (2, .began)])), .frame(device: 0, frame(5, [(1, .ended), (2, .moved)])),
            .frame(device: 0, frame(6, [(2, .moved)])), .frame(device: 0, frame(7, [(2, .moved)])),
            .frame(device: 1, frame(7, [(9, .moved)])), .frame(device: 0, frame(8, [(2, .cancelled)])),
            .frame(device: 0, frame(9, [])),
        ]
        #expect(FrameCoalescing.keep(entries) == [true, false, true, true, true, false, true, true, true, true])
    }

    @Test("nothing is coalesced across a barrier, and a lone frame is always kept")
    func barriers() {
        let entries: [FrameCoalescing.Entry] = [
            .frame(device: 0, frame(1, [(1, .moved)])), .barrier, .frame(device: 0, frame(2, [(1, .moved)])),
            .frame(device: 0, frame(3, [(1, .moved)])),
        ]
        #expect(FrameCoalescing.keep(entries) == [true, true, false, true])
        #expect(FrameCoalescing.keep([.frame(device: 3, frame(1, [(1, .moved)]))]) == [true])
        #expect(FrameCoalescing.keep([]) == [])
    }

    @Test("gestures happen as they would have: a coalesced drag lands, moves and lifts at the same points")
    func sameOutcome() {
        // A drag of 100 frames; the queue held it all at once.
        var frames = [frame(0, [(1, .began)])]
        for step in 1..<99 { frames.append(frame(Double(step), [(1, .moved)])) }
        frames.append(frame(99, [(1, .ended)]))
        let keep = FrameCoalescing.keep(frames.map { .frame(device: 0, $0) })
        let kept = zip(frames, keep).compactMap { $1 ? $0 : nil }
        // The lift reports where the finger left the glass; the newest move before it is what
        // begins the drag (a recognizer begins on a move), so it stays.
        #expect(kept.map(\.time) == [0, 98, 99])
        #expect(kept[1].contacts.first?.phase == .moved)
        #expect(kept.last?.contacts.first?.position == frames.last?.contacts.first?.position)
        #expect(kept.first?.contacts.first?.phase == .began && kept.last?.contacts.first?.phase == .ended)
    }
}
