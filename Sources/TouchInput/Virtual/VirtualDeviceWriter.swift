/// What a virtual touchscreen writes its frames to: the kernel's device in motiond
/// (``UinputDevice``), or a test's recording, so that what the apps are shown (routing,
/// cancels, a lock, a reload) is read on the host in milliseconds, without uinput.
///
/// The encoder decides every event (``VirtualTouchEncoder``); a writer only carries them, so
/// a test's writer sees exactly what uinput is given.
package protocol VirtualDeviceWriter: AnyObject {
    /// The device's event node (`/dev/input/eventN`) and its place in sysfs; empty for a
    /// device that is none of the kernel's.
    var node: String { get }
    var syspath: String { get }
    /// Writes `events` (one or more frames, each ending in `SYN_REPORT`) at once, as the
    /// kernel takes them: in order, their own times ignored, each stamped `time` (the
    /// monotonic clock; nil leaves the stamp to the kernel). Nil when all went through; else
    /// the errno the write was refused with, or 0 when it was written short.
    func write(_ events: [InputEvent], stamped time: Double?) -> Int32?
    /// Removes the device from every reader. Nothing is written after.
    func close()
}
