import Testing
@testable import MotionCore

/// The links that replaced closures, to make a large scene's elements with fewer objects:
/// observers see what they saw before.
@Suite("Links that are objects")
struct LinkTests {
    @Test("a tracker follows another's state until the subscription ends, which counts it at rest")
    func followedState() {
        let inner = ActivityTracker(), outer = ActivityTracker()
        let events = EventStream<Int>(state: { $0 > 0 ? .active : .atRest })
        inner.tracked(events.stream).subscribe(next: { _ in })
        events.send(1)
        let link = outer.follow(inner.state)
        #expect(outer.state.value == .active)
        link.unsubscribe()
        #expect(outer.state.value == .atRest)
        #expect(inner.state.value == .active)
    }

    /// Records the tags of the writes it hears.
    final class Listener: WriteListener {
        var tags: [Int] = []
        func propertyWritten(_ tag: Int) { tags.append(tag) }
    }

    @Test("the engine's link to a published property hears the later writes only, with its tag, until cancelled; from closures as from a property")
    func publishedLinkHearsLaterWrites() {
        let property = ReactiveProperty(1.0)
        let fromProperty = PublishedProperty.number(property)
        let fromClosures = PublishedProperty(read: { .number(property.value) }, subscribe: { property.subscribeToWrites($0) })
        for published in [fromProperty, fromClosures] {
            let listener = Listener()
            let link = published.follow(listener, 7)
            #expect(listener.tags.isEmpty, "what the property holds now is not a write")
            property.value = 2
            property.value = 2
            #expect(listener.tags == [7, 7])
            link.unsubscribe()
            property.value = 3
            #expect(listener.tags == [7, 7])
        }
    }

    @Test("a frame observer is its own subscription: unsubscribing takes it off the clock, which then stops")
    func frameObserverUnsubscribes() {
        let clock = ManualFrameClock(now: 0)
        var first: [Double] = [], second: [Double] = []
        let one = clock.observeFrames { first.append($0) }
        let two = clock.observeFrames { second.append($0) }
        clock.tick(at: 1)
        one.unsubscribe()
        one.unsubscribe()
        clock.tick(at: 2)
        #expect(first == [1])
        #expect(second == [1, 2])
        two.unsubscribe()
        #expect(!clock.isRunning)
    }
}
