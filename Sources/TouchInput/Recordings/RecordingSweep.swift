import Glibc
import TouchModel

/// Every recording in a folder run through the contact filters as the daemon would run its
/// device, next to what the device sent: whether motiond accepts the device and, if it
/// does, whether the filters would cost its users a finger. What a packager runs on a
/// corpus of real panels before rolling out new filters or defaults (`motionctl sweep`).
public enum RecordingSweep {
    /// How the daemon would read a recorded device: mapped and filtered so, or not at all
    /// (no `[[device]]` entry selects it), with why.
    public enum Use: Sendable {
        case read(OutputMapping, ContactFilterSettings)
        case notSelected(String)
    }

    /// One file of the folder.
    public struct Recording: Sendable {
        /// As found: the folder's path, then the names down to the file.
        public var path: String
        /// Why the file could not be read or parsed, in words (outside text quoted); nil
        /// when it was, and ``devices`` says what of.
        public var failure: String?
        /// Each device the file holds: one for evemu, each of a libinput record file's.
        public var devices: [Device]
    }

    /// One recorded device and what motiond would make of it.
    public struct Device: Sendable {
        /// Its place in a libinput record file holding several (from 0); nil for evemu.
        public var index: Int?
        /// The name its firmware gave, as it gave it: quote it before writing it anywhere.
        public var name: String?
        public var verdict: Verdict
    }

    /// Whether motiond reads a device, and what its filters did to the recording.
    public enum Verdict: Sendable {
        /// A touchscreen the daemon reads, and the recording replayed.
        case accepted(Report)
        /// A touchscreen the daemon would read, but the file holds no events (a device
        /// description): its filters as they would apply, nothing replayed.
        case withoutEvents(ResolvedContactFilters)
        /// Not read, and the true reason: not a touchscreen (what it is instead), a
        /// description motiond refuses (which axis, and why), not selected, no header.
        case refused(String)
    }

    /// What the filters did to one recording.
    public struct Report: Sendable {
        /// The filters as they apply to the device: thresholds in its units, and `notes`
        /// saying what is off and why.
        public var filters: ResolvedContactFilters
        /// Contacts begun in what the device sent (every filter off).
        public var rawContacts = 0
        /// Contacts begun after the filters: a jump begins one again.
        public var filteredContacts = 0
        /// Contacts the filters cancelled (the device itself ended them otherwise).
        public var cancelled = 0
        /// Contacts of the device the filters lost: never reported, or cancelled by a filter
        /// when the device lifted them or kept them down. On recordings of real fingers,
        /// every one is a finger a user would lose.
        public var lost = 0
        /// How often each filter acted, over the whole recording.
        public var counts = ContactFilters.Counts()
    }

    /// The folder could not be read.
    public struct FolderError: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    /// The names of the files a sweep reads: evemu recordings and descriptions, and
    /// `libinput record` YAML. Others (a README, a licence) are passed over.
    public static let extensions = ["evemu", "desc", "yml", "yaml", "events"]

    /// The largest file a sweep reads: 64 MiB. The largest real recording in the repository
    /// (ten fingers on a Wacom DTH-2242) is 1.2 MB, and a bug report's recording is seconds
    /// long; 64 MiB is over two million evemu event lines, some ten minutes of ten fingers
    /// moving at 120 Hz. Past it a file is a mistake in the folder (a disk image, a log named
    /// `.events`). The cap also bounds memory: replaying a recording twice through the
    /// filters, as a sweep does, takes about 7 times its size (464 MB for 61 MiB).
    public static let maximumFileSize = 64 << 20

    /// Where a sweep is, for a progress line: the file being read, how many were read before
    /// it, and how far into it the sweep has read.
    public struct Progress: Sendable {
        public var path: String
        public var filesDone: Int
        public var bytesRead: Int
        /// The file's size when it was opened.
        public var bytes: Int
    }

    /// Sweeps every recording under `folder` (its subfolders too, in name order; hidden
    /// entries and links to folders are passed over), each device read as `use` says
    /// given the file's path and the device; `progress` hears of each file as it is read.
    ///
    /// - Throws: ``FolderError`` when `folder` itself cannot be read; a file or subfolder
    ///   that cannot is a ``Recording`` with its ``Recording/failure``.
    public static func sweep(folder: String, progress: (Progress) -> Void = { _ in }, use: (String, DeviceDescription) -> Use) throws(FolderError) -> [Recording] {
        guard let entries = names(in: folder) else {
            throw FolderError(description: "cannot read \(OutsideText.quoted(folder)): \(String(cString: strerror(errno)))")
        }
        var recordings: [Recording] = []
        walk(folder, entries, into: &recordings, progress: progress, use: use)
        return recordings
    }

    /// Sweeps one recording's text; `path` names it (and is what `use` is given).
    public static func sweep(text: String, path: String, use: (String, DeviceDescription) -> Use) -> Recording {
        do { return sweep(try EvemuRecording.everyDevice(reading: text), path: path, use: use) } catch {
            return Recording(path: path, failure: "line \(error.line): \(error.message)", devices: [])
        }
    }

    /// Sweeps the file at `path` (an `.events` file with the description it names), read
    /// as a sweep reads what it did not write (``read(_:into:progress:)``).
    public static func sweep(file path: String, progress: (_ bytesRead: Int, _ bytes: Int) -> Void = { _, _ in }, use: (String, DeviceDescription) -> Use) -> Recording {
        switch parse(path, progress: progress) {
        case .success(let parsed): return sweep(parsed, path: path, use: use)
        case .failure(let reason): return Recording(path: path, failure: reason.description, devices: [])
        }
    }

    /// Sweeps a file's recordings, one per device.
    private static func sweep(_ parsed: [EvemuRecording], path: String, use: (String, DeviceDescription) -> Use) -> Recording {
        let several = parsed.count > 1
        return Recording(path: path, failure: nil, devices: parsed.enumerated().map { index, recording in
            Device(index: several ? index : nil, name: recording.device?.name, verdict: verdict(recording, path: path, use: use))
        })
    }

    /// What motiond makes of one recorded device.
    static func verdict(_ recording: EvemuRecording, path: String, use: (String, DeviceDescription) -> Use) -> Verdict {
        guard let device = recording.device else { return .refused(ReplayError.noDeviceHeader.description) }
        // The device checked first as the daemon checks it (a touchscreen, soundly
        // described): that is the true reason even where no entry would select it.
        do { _ = try RecordingReplay(recording, filters: .off) } catch { return .refused(error.description) }
        let mapping: OutputMapping, settings: ContactFilterSettings
        switch use(path, device) {
        case .notSelected(let reason): return .refused(reason)
        case .read(let chosen, let filters): (mapping, settings) = (chosen, filters)
        }
        let replay: RecordingReplay, raw: RecordingReplay
        do {
            replay = try RecordingReplay(recording, mapping: mapping, filters: settings)
            raw = try RecordingReplay(recording, mapping: mapping, filters: .off)
        } catch {
            return .refused(error.description)
        }
        guard !recording.events.isEmpty else { return .withoutEvents(replay.resolvedFilters) }
        return .accepted(report(raw: raw.frames(), filtered: replay.replayedFrames(), filters: replay.resolvedFilters))
    }

    /// Compares what the device sent with what the filters made of it, contact by contact.
    ///
    /// A contact after the filters belongs to the device's contact in the same slot that
    /// began last by the time it began: the same contact, or after a jump, the one it was
    /// cut from.
    static func report(raw: [TouchFrame], filtered: [RecordingReplay.ReplayedFrame], filters: ResolvedContactFilters) -> Report {
        struct Contact {
            var slot: Int
            var began: Double
            var end: (time: Double, phase: TouchPhase)?
        }
        var sent: [Contact] = []
        var current: [Int: Int] = [:]
        for frame in raw {
            for contact in frame.contacts {
                if contact.phase == .began || current[contact.slot] == nil {
                    current[contact.slot] = sent.count
                    sent.append(Contact(slot: contact.slot, began: frame.time))
                }
                if contact.phase == .ended || contact.phase == .cancelled, let index = current.removeValue(forKey: contact.slot) {
                    sent[index].end = (frame.time, contact.phase)
                }
            }
        }

        var report = Report(filters: filters)
        report.rawContacts = sent.count
        report.counts = filtered.last?.counts ?? ContactFilters.Counts()
        var reported = Array(repeating: false, count: sent.count)
        var cut = Array(repeating: false, count: sent.count)
        var shown: [Int: Int] = [:]
        for frame in filtered.compactMap(\.frame) {
            for contact in frame.contacts {
                if contact.phase == .began || shown[contact.slot] == nil {
                    report.filteredContacts += 1
                    let owner = sent.indices.last { sent[$0].slot == contact.slot && sent[$0].began <= frame.time }
                    shown[contact.slot] = owner ?? -1
                    if let owner { reported[owner] = true }
                }
                guard contact.phase == .ended || contact.phase == .cancelled, let owner = shown.removeValue(forKey: contact.slot) else { continue }
                guard contact.phase == .cancelled, owner >= 0 else { continue }
                // The device's own cancel (events lost) at the same moment is not the filters'.
                if let end = sent[owner].end, end.phase == .cancelled, end.time == frame.time { continue }
                report.cancelled += 1
                cut[owner] = true
            }
        }
        report.lost = sent.indices.count { !reported[$0] || cut[$0] }
        return report
    }

    // MARK: The folder

    private static func walk(_ folder: String, _ entries: [String], into recordings: inout [Recording], progress: (Progress) -> Void,
                             use: (String, DeviceDescription) -> Use) {
        for name in entries where !name.hasPrefix(".") {
            let path = folder.hasSuffix("/") ? folder + name : folder + "/" + name
            var status = stat()
            guard lstat(path, &status) == 0 else {
                recordings.append(Recording(path: path, failure: "cannot read it: \(String(cString: strerror(errno)))", devices: []))
                continue
            }
            switch status.st_mode & S_IFMT {
            case S_IFDIR:
                if let inner = names(in: path) {
                    walk(path, inner, into: &recordings, progress: progress, use: use)
                } else {
                    recordings.append(Recording(path: path, failure: "cannot read the folder: \(String(cString: strerror(errno)))", devices: []))
                }
            case S_IFREG, S_IFLNK:
                guard isRecording(name) else { continue }
                // A link is followed to a file, never to a folder (which could loop).
                if status.st_mode & S_IFMT == S_IFLNK {
                    guard stat(path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { continue }
                }
                let done = recordings.count
                recordings.append(sweep(file: path, progress: { read, bytes in
                    progress(Progress(path: path, filesDone: done, bytesRead: read, bytes: bytes))
                }, use: use))
            default:
                continue
            }
        }
    }

    /// The recordings of the file at `path`, one per device. Evemu text, most of a corpus
    /// and what can be large, goes through the parser a piece at a time as it is read; a
    /// `libinput record` file is YAML, which is parsed whole.
    ///
    /// An `.events` file holds events alone: evemu before 1.10 (and whot/evemu-devices) keeps
    /// a device's description in a `.desc` file beside its recordings, named like them up to
    /// their last `__`, which is read first.
    private static func parse(_ path: String, progress: (Int, Int) -> Void) -> Result<[EvemuRecording], ReadFailure> {
        var text = Text.undecided
        if path.hasSuffix(".events") {
            guard let description = descriptionPath(of: path) else {
                return .failure(ReadFailure(description: "an .events file holds events alone, and its name (DEVICE__WHAT.events) names no DEVICE.desc"))
            }
            if let reason = read(description, into: &text, progress: { _, _ in }) ?? text.append(newline) {
                return .failure(ReadFailure(description: "an .events file holds events alone, and its device's description \(OutsideText.quoted(description)): \(reason.description)"))
            }
        }
        if let reason = read(path, into: &text, progress: progress) { return .failure(reason) }
        return text.recordings()
    }

    private static let newline: [UInt8] = [UInt8(ascii: "\n")]

    /// A file's text as it is read, told apart by its first piece: evemu's, parsed line by
    /// line as it comes, or YAML, kept whole for its parser.
    private enum Text {
        case undecided
        case evemu(EvemuStream)
        case yaml([UInt8])

        /// Takes the next piece; a failure ends the reading.
        mutating func append(_ piece: UnsafeBufferPointer<UInt8>) -> ReadFailure? {
            if case .undecided = self {
                self = LibinputRecording.looksLikeYAML(String(decoding: piece, as: UTF8.self)[...]) ? .yaml([]) : .evemu(EvemuStream())
            }
            switch self {
            case .undecided:
                return nil
            case .evemu(var stream):
                self = .undecided  // not a second copy while the stream changes
                defer { self = .evemu(stream) }
                do throws(EvemuParseError) { try stream.read(piece) } catch {
                    return ReadFailure(description: "line \(error.line): \(error.message)")
                }
                return nil
            case .yaml(var bytes):
                self = .undecided
                bytes += piece
                self = .yaml(bytes)
                return nil
            }
        }

        mutating func append(_ bytes: [UInt8]) -> ReadFailure? {
            bytes.withUnsafeBufferPointer { append($0) }
        }

        /// The recordings, once the whole text has been read.
        func recordings() -> Result<[EvemuRecording], ReadFailure> {
            do throws(EvemuParseError) {
                switch self {
                case .undecided:
                    return .success([EvemuRecording(device: nil, events: [])])
                case .evemu(var stream):
                    return .success([try stream.finish()])
                case .yaml(let bytes):
                    guard let text = String(validating: bytes, as: UTF8.self) else {
                        return .failure(ReadFailure(description: "not UTF-8 text: an evemu or libinput record recording is text"))
                    }
                    return .success(try EvemuRecording.everyDevice(reading: text))
                }
            } catch {
                return .failure(ReadFailure(description: "line \(error.line): \(error.message)"))
            }
        }
    }

    /// The `.desc` file an `.events` file's name names; nil when it names none.
    private static func descriptionPath(of path: String) -> String? {
        let stem = Array(path.utf8.dropLast(".events".count))
        let slash = stem.lastIndex(of: UInt8(ascii: "/")) ?? -1
        guard let separator = stem.indices.reversed().first(where: { $0 > slash && $0 + 1 < stem.count && stem[$0] == UInt8(ascii: "_") && stem[$0 + 1] == UInt8(ascii: "_") }) else {
            return nil
        }
        return String(decoding: stem[..<separator], as: UTF8.self) + ".desc"
    }

    private static func isRecording(_ name: String) -> Bool {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return false }
        return extensions.contains(name[name.index(after: dot)...].lowercased())
    }

    /// The names in a folder, sorted; nil (with `errno`) when it cannot be read.
    private static func names(in folder: String) -> [String]? {
        guard let directory = opendir(folder) else { return nil }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != "." && name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    private struct ReadFailure: Error, CustomStringConvertible { var description: String }

    /// Reads the file at `path` into `text` a piece at a time, as a sweep reads files it did
    /// not write: only a regular file, of at most ``maximumFileSize`` bytes, and no open that
    /// can block. `progress` hears how far it has read. Nil once read, else why not.
    ///
    /// The file is judged before it is opened, so that a device is never opened (opening
    /// some has effects, and /dev/zero never ends), and again on the open descriptor, which
    /// is what is read: O_NONBLOCK, so that a FIFO put there meanwhile cannot block the open.
    private static func read(_ path: String, into text: inout Text, progress: (_ bytesRead: Int, _ bytes: Int) -> Void) -> ReadFailure? {
        func failure(_ code: Int32 = errno) -> ReadFailure { ReadFailure(description: "cannot read it: \(String(cString: strerror(code)))") }
        var status = stat()
        guard stat(path, &status) == 0 else { return failure() }
        if let refusal = refusal(status) { return refusal }
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return failure() }
        defer { close(descriptor) }
        guard fstat(descriptor, &status) == 0 else { return failure() }
        if let refusal = refusal(status) { return refusal }
        let size = Int(status.st_size)
        var piece = [UInt8](repeating: 0, count: 1 << 16)
        var total = 0
        progress(0, size)
        while true {
            let count = piece.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count >= 0 else { return failure() }
            if count == 0 { return nil }
            total += count
            // A file that grows while it is read.
            guard total <= maximumFileSize else { return tooLarge(total) }
            if let reason = piece.withUnsafeBufferPointer({ text.append(UnsafeBufferPointer(rebasing: $0[..<count])) }) { return reason }
            progress(total, size)
        }
    }

    /// Why a file is not read, judged by its status; nil for a regular file of a recording's size.
    private static func refusal(_ status: stat) -> ReadFailure? {
        let kinds: [mode_t: String] = [S_IFDIR: "a directory", S_IFIFO: "a FIFO", S_IFCHR: "a character device", S_IFBLK: "a block device", S_IFSOCK: "a socket"]
        let kind = status.st_mode & S_IFMT
        guard kind == S_IFREG else { return ReadFailure(description: "not a regular file: \(kinds[kind] ?? "not a file"); a recording is a file") }
        return Int(status.st_size) > maximumFileSize ? tooLarge(Int(status.st_size)) : nil
    }

    private static func tooLarge(_ size: Int) -> ReadFailure {
        ReadFailure(description: "larger than \(maximumFileSize >> 20) MiB (\(size) bytes): a recording is at most \(maximumFileSize >> 20) MiB, and this is no recording of a touchscreen")
    }
}
