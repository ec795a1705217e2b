import Glibc
import MotionConfiguration
import TouchInput
import TouchModel
import MotionWire
import MotionDaemon

/// Why motiond could not start: one case for each cause it tells apart, each with the words
/// it says on standard error (`<3>motiond: …`, which the journal keeps) and the status it
/// exits with. ``DaemonService/run(_:)`` throws nothing else, so a test, or a program that
/// embeds the service, tells the causes apart by their case instead of by their words.
public enum StartupFailure: Error, CustomStringConvertible {
    // MARK: The configuration and the options

    /// The configuration file or one of its drop-ins is refused, on a line of a file.
    case configurationRefused(ConfigurationError)
    /// `--websocket` names an address other machines could reach, and `[websocket]` has no
    /// `allow_remote = true`: the protocol is not encrypted.
    case remoteWebListener(ListenAddress)

    // MARK: The Unix socket

    /// The socket's path does not fit in a `sockaddr_un`.
    case socketPathTooLong(SocketPathTooLong)
    /// Something that is not a socket is where the socket goes; motiond removes only sockets.
    case notASocket(path: String)
    /// Another motiond listens on the socket's path.
    case socketInUse(path: String)
    /// The kernel made no socket (out of descriptors, or forbidden to the service).
    case socketNotCreated(errno: Int32)
    /// The socket could not be bound at its path or listen there: its directory is missing
    /// or the service may not write in it, mostly.
    case cannotListen(path: String, errno: Int32)
    /// The event loop would not take the socket motiond bound.
    case socketNotServed(path: String, any Error)
    /// The socket's mode could not be made 0660.
    case socketModeNotSet(path: String, errno: Int32)
    /// `[daemon] socket_group` names no group.
    case noSuchGroup(String)
    /// The socket could not be given to `[daemon] socket_group`'s group.
    case socketGroupNotSet(path: String, group: String, errno: Int32)

    // MARK: systemd

    /// A socket systemd passed (`LISTEN_FDS`) is one the event loop cannot listen on: not a
    /// listening stream socket, or closed.
    case passedSocketUnusable(PassedSocket, any Error)

    // MARK: The browsers' listener

    /// Another program listens on `[websocket] listen`'s address (or `--websocket`'s).
    case webAddressInUse(ListenAddress, any Error)
    /// The service may not open TCP sockets itself (systemd's `RestrictAddressFamilies`): the
    /// listener has to come from motiond-web.socket.
    case webListenerForbidden(ListenAddress)
    /// The listener could not be bound for another reason (an address not on this machine…).
    case webListenerNotBound(ListenAddress, any Error)

    // MARK: The state file

    /// Another motiond keeps its scene in the state file (or the lock beside it is not a
    /// regular file).
    case stateFileUnusable(StateFileError)

    // MARK: The replay (`--replay`)

    /// The recording cannot be read, with the system's reason.
    case recordingUnreadable(path: String, reason: String)
    /// The recording is neither evemu nor libinput record's YAML, or is broken on a line.
    case recordingRefused(path: String, EvemuParseError)
    /// The recording describes no device.
    case recordingWithoutDevice(path: String)
    /// No `[[device]]` entry selects the recorded device (named so).
    case recordingNotSelected(name: String)
    /// The recorded device is no touchscreen, or its description cannot be trusted.
    case recordingNotReplayable(ReplayError)
    /// `--speed` is not a positive number.
    case replaySpeed(Double)

    // MARK: The process

    /// A thread of motiond's (the input's, the signals') could not be started.
    case threadNotStarted(name: String, errno: Int32)
    /// The pipe that wakes the input thread could not be made.
    case wakePipe(errno: Int32)
    /// The event loop failed a step of start-up (it was shut down under the daemon).
    case eventLoop(any Error)

    /// Which socket systemd passed.
    public enum PassedSocket: Sendable {
        /// The protocol's Unix socket (motiond.socket).
        case control
        /// The browsers' TCP listener (motiond-web.socket, `FileDescriptorName=websocket`).
        case web
    }

    /// What motiond says: the cause, where, and what to do about it when that is known.
    public var description: String {
        switch self {
        case .configurationRefused(let error): return error.description
        case .remoteWebListener(let address):
            return "--websocket \(address): other machines could reach it, and the protocol is not encrypted; use 127.0.0.1 or [::1], or allow_remote = true in [websocket]"
        case .socketPathTooLong(let error): return error.description
        case .notASocket(let path): return "\(path) exists and is not a socket; remove it or choose another path"
        case .socketInUse(let path): return "another motiond is already listening on \(path); stop it first, or give this one another --socket"
        case .socketNotCreated(let errno): return "cannot make a socket: \(Self.text(errno))"
        case let .cannotListen(path, errno): return "cannot listen on \(path): \(Self.text(errno))"
        case let .socketNotServed(path, error): return "cannot serve \(path): \(error)"
        case let .socketModeNotSet(path, errno): return "cannot set the mode of \(path): \(Self.text(errno))"
        case .noSuchGroup(let group): return "no group is called '\(group)' ([daemon] socket_group)"
        case let .socketGroupNotSet(path, group, errno): return "cannot give \(path) to group \(group): \(Self.text(errno))"
        case let .passedSocketUnusable(.control, error): return "cannot listen on the socket systemd passed (motiond.socket): \(error)"
        case let .passedSocketUnusable(.web, error): return "cannot listen on the socket systemd passed for the browsers (motiond-web.socket): \(error)"
        case let .webAddressInUse(address, error), let .webListenerNotBound(address, error):
            return "cannot listen on \(address) ([websocket] listen): \(error)"
        case .webListenerForbidden(let address):
            return "cannot listen on \(address) ([websocket] listen): this service may not open TCP sockets itself; enable the socket unit that passes one: systemctl enable --now motiond-web.socket (its ListenStream says where)"
        case .stateFileUnusable(let error): return error.description
        case let .recordingUnreadable(path, reason): return "cannot read \(path): \(reason)"
        case let .recordingRefused(path, error): return "\(path):\(error.line): \(error.message)"
        case .recordingWithoutDevice(let path): return "\(path): \(ReplayError.noDeviceHeader)"
        case .recordingNotSelected(let name): return "no [[device]] entry in the configuration selects the recorded device \(OutsideText.quoted(name))"
        case .recordingNotReplayable(let error): return error.description
        case .replaySpeed: return "--speed must be a positive number"
        case let .threadNotStarted(name, errno): return "cannot start the \(name) thread: \(Self.text(errno))"
        case .wakePipe(let errno): return "cannot make a pipe: \(Self.text(errno))"
        case .eventLoop(let error): return "the event loop failed while motiond started: \(error)"
        }
    }

    /// The status motiond exits with: 1 for every cause, as motiond(8) says (64 is for
    /// arguments the command line refuses before anything starts). systemd's
    /// `Restart=on-failure` then tries again a second later, which helps the causes that pass
    /// (a socket or an address still held by a process that is ending) and, for the rest,
    /// stops at the unit's start limit.
    public var exitStatus: Int32 { 1 }

    private static func text(_ errno: Int32) -> String { String(cString: strerror(errno)) }
}
