/// What the daemon has to tell its operator, as values: ``Daemon/onEvent`` hears each, the
/// service writes it to the log (``DaemonService``), and a test looks at what it is rather
/// than at a sentence.
public enum DaemonEvent {
    /// An element's values stopped being finite numbers; they were put back to its last
    /// finite ones, and are not published until they are finite again.
    case valuesRepaired(element: String, streams: [String])
    /// Something of the scene could not be made as asked: an element of a reload, a value
    /// carried over from the scene before, a reset's element. The note says what and why.
    case sceneNote(String)
    /// A reload read the state file again, which had been left alone; what became of it.
    case stateFileReread(Daemon.Restoration)
    /// Keeping the scene in its state file began failing (why), or works again (nil).
    case sceneKeeping(failure: StateFileError?)
}
