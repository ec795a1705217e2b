/// Protocol lines as bytes, back to back: a frame's lines, a reply, a subscriber's values.
/// Each line is written in one step into room reserved for its longest form (``ValueLine``),
/// and the lines go to the clients' outputs as a slice that shares the storage: an array's
/// storage is copied only when written again while a slice of it is still held (a line
/// waiting for a client that is behind), so a frame's lines are written once for every
/// client, and the buffer is reused frame after frame.
///
/// The storage is kept at least as long as ``count`` and the room a write asks for (bytes past
/// ``count`` are whatever was there: zeros, or lines cleared away), so that writing needs no
/// more than a pointer into it.
struct LineBuffer {
    private var storage: [UInt8]
    /// The bytes written.
    private(set) var count = 0

    init(capacity: Int = 0) {
        storage = [UInt8](repeating: 0, count: capacity)
    }

    /// The lines written, sharing the buffer's storage; their indices are offsets from the
    /// buffer's start, as ``write(atMost:_:)``'s `count` before and after a line say.
    var lines: ArraySlice<UInt8> { storage[..<count] }

    /// Forgets the lines written, keeping the storage.
    mutating func clear() {
        count = 0
    }

    /// Writes into `most` bytes of room what `body` writes there; `body` returns how many
    /// bytes it wrote.
    mutating func write(atMost most: Int, _ body: (UnsafeMutableRawBufferPointer) -> Int) {
        if storage.count - count < most {
            storage.append(contentsOf: repeatElement(0, count: Swift.max(most, storage.count)))
        }
        let start = count
        let written = storage.withUnsafeMutableBytes { body(UnsafeMutableRawBufferPointer(rebasing: $0[start..<start + most])) }
        assert(written <= most, "a line is longer than its bound")
        count += written
    }

    /// Appends `bytes` as they are.
    mutating func write(_ bytes: some Collection<UInt8>) {
        let length = bytes.count
        write(atMost: length) { room in
            room.copyBytes(from: bytes)
            return length
        }
    }
}
