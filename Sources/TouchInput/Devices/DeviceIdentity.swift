/// Which touchscreen something came from: one value from the input thread to the metrics,
/// so that a frame, a filter's count, a `device` event and a metric's label can never name
/// two different devices.
///
/// It carries what tells devices apart, and nothing that changes while a device is read: the
/// number motiond gave it, its node, where it is plugged in, and the name and ids its
/// firmware reports. The `[[device]]` and `[[calibration]]` rules match against these
/// (``DeviceSelection/Rule/matches(_:)``); its axes and the rest of its description stay in
/// ``DeviceDescription``, which is sent once, when the device comes.
public struct DeviceIdentity: Hashable, Sendable {
    /// The number motiond gave the device, counting from 0 in the order devices are first
    /// opened: what the engine keeps two devices' contacts apart by (their tracking ids may
    /// coincide). A node keeps its number when its device is plugged in again.
    public var number: Int
    /// The USB (or other bus) vendor and product ids.
    public var vendor: UInt16
    public var product: UInt16
    /// The texts, in one object of their own: an identity goes with every frame from the
    /// input thread to the sinks, copied at each step, and its three strings were a retain
    /// and a release each at every copy.
    private var texts: Texts

    /// Where the device is read from: `/dev/input/event5`, or `replay:FILE` for a recording
    /// motiond replays. Clients, the log and the metrics' `device` label name it so.
    public var node: String {
        get { texts.node }
        set { texts = Texts(node: newValue, path: path, name: name) }
    }
    /// udev's `ID_PATH`, where the device is plugged in (`pci-0000:00:14.0-usb-0:2:1.0`);
    /// nil for a recording, which no `path` rule selects.
    public var path: String? {
        get { texts.path }
        set { texts = Texts(node: node, path: newValue, name: name) }
    }
    /// The kernel's name for the device, as its firmware reports it.
    public var name: String {
        get { texts.name }
        set { texts = Texts(node: node, path: path, name: newValue) }
    }

    /// An identity with every part given; the name and ids are empty for a device whose
    /// description does not matter (a test's).
    public init(number: Int, node: String, path: String? = nil, name: String = "", vendor: UInt16 = 0, product: UInt16 = 0) {
        self.number = number
        self.texts = Texts(node: node, path: path, name: name)
        self.vendor = vendor
        self.product = product
    }

    /// Never changed once made: an identity given a new text gets new texts.
    private final class Texts: Hashable, Sendable {
        let node: String
        let path: String?
        let name: String

        init(node: String, path: String?, name: String) {
            self.node = node
            self.path = path
            self.name = name
        }

        static func == (left: Texts, right: Texts) -> Bool {
            left === right || (left.node == right.node && left.path == right.path && left.name == right.name)
        }

        func hash(into hasher: inout Hasher) {
            hasher.combine(node)
            hasher.combine(path)
            hasher.combine(name)
        }
    }

    /// The identity of the device numbered `number`, read from `node` (plugged in at `path`)
    /// and described by `description`.
    public init(number: Int, node: String, path: String? = nil, description: DeviceDescription) {
        self.init(number: number, node: node, path: path, name: description.name, vendor: description.vendor, product: description.product)
    }

    /// The identity of a recording's device, replayed as motiond's only touchscreen: number
    /// 0, node `replay:FILE`. motiond's replay and motionctl's commands on recordings (simulate,
    /// frames, sweep) select it alike, and `devices` names it so.
    public static func recording(_ file: String, description: DeviceDescription) -> DeviceIdentity {
        DeviceIdentity(number: 0, node: "replay:" + file, description: description)
    }
}
