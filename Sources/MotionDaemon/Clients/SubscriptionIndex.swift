import MotionCore

/// Who subscribes to what, both ways: per stream its subscribers, per session its streams
/// (``ClientSession/subscriptions``). Kept up to date on subscribe, unsubscribe, connect,
/// disconnect and when streams come and go, so that publishing a frame visits only the
/// subscribers of the streams that changed, however many clients there are.
struct SubscriptionIndex {
    /// Per ``StreamID/index``, the subscribers, in no particular order.
    private var lists: [[ClientSession]] = []

    /// Calls `body` with each subscriber of `stream`, not retained: the index holds them.
    /// The publisher visits every subscriber of every line of a frame, and a retain and a
    /// release each cost more than the visit.
    func forEachSubscriber(of stream: StreamID, _ body: (Unmanaged<ClientSession>) -> Void) {
        guard stream.index < lists.count else { return }
        lists[stream.index].withUnsafeBufferPointer { subscribers in
            // By position, not `for subscriber in`: a named reference would be retained
            // for as long as its name lives, across `body`.
            for position in subscribers.indices { body(.passUnretained(subscribers[position])) }
        }
    }

    /// Whether anyone subscribes to `stream`.
    func hasSubscribers(_ stream: StreamID) -> Bool {
        stream.index < lists.count && !lists[stream.index].isEmpty
    }

    /// Subscribes `session` to `stream`; false if it already was.
    @discardableResult
    mutating func subscribe(_ session: ClientSession, to stream: StreamID) -> Bool {
        guard session.subscriptions[stream] == nil else { return false }
        while lists.count <= stream.index { lists.append([]) }
        session.subscriptions[stream] = lists[stream.index].count
        lists[stream.index].append(session)
        return true
    }

    /// Ends `session`'s subscription to `stream`, if it had one. The last subscriber takes
    /// the place of the one leaving, so this costs the same for a thousand subscribers.
    mutating func unsubscribe(_ session: ClientSession, from stream: StreamID) {
        guard let place = session.subscriptions.removeValue(forKey: stream) else { return }
        let last = lists[stream.index].removeLast()
        if last !== session {
            lists[stream.index][place] = last
            last.subscriptions[stream] = place
        }
    }

    /// Ends every subscription of `session` (it went, or a reload renumbered the streams).
    mutating func unsubscribeAll(_ session: ClientSession) {
        for stream in Array(session.subscriptions.keys) { unsubscribe(session, from: stream) }
    }

    /// Forgets streams that no longer exist: their numbers will name other streams.
    mutating func remove(_ streams: [StreamID]) {
        for stream in streams where stream.index < lists.count {
            for session in lists[stream.index] { session.subscriptions[stream] = nil }
            lists[stream.index] = []
        }
    }
}
