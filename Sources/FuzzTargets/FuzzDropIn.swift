import MotionConfiguration
import MotionCore
import TouchInput
import MotionWire

/// `motionctl calibrate`'s drop-in for a panel whose name and udev path are any bytes (a USB
/// descriptor says what its firmware wants). The input is the name, then after a NUL byte the
/// path (empty: udev gave none), then after another NUL one byte that says whether the panel
/// has ids. Whatever they hold, the drop-in must load as a configuration with exactly one
/// `[[calibration]]`, selecting that panel by the expected rule with the value as given, with
/// the matrix written, and nothing else set: no `[daemon]`, `[[tuio]]` or any other table.
func fuzzDropIn(_ bytes: [UInt8]) throws {
    let parts = bytes.split(separator: 0, maxSplits: 2, omittingEmptySubsequences: false)
    let name = String(decoding: parts[0], as: UTF8.self)
    let path = parts.count > 1 && !parts[1].isEmpty ? String(decoding: parts[1], as: UTF8.self) : nil
    let hasIDs = parts.count > 2 && parts[2].first.map { $0 & 1 == 1 } == true
    let matrix = [1.02, 0.03, -0.015, -0.02, 0.98, 0.025]
    let dropIn = CalibrationDropIn(name: name, node: "/dev/input/event5", path: path, vendor: hasIDs ? 0x04f3 : 0,
                                   product: hasIDs ? 0x2a1c : 0, matrix: matrix, note: "5 targets, rms 0.40 px")

    let fileName = dropIn.fileName
    try fuzzCheck(!fileName.contains("/") && !fileName.hasPrefix(".") && fileName.hasSuffix(".toml") && fileName.utf8.count < 200,
                  "a drop-in's file name must stay in conf.d, be read and be short: \(fileName)")

    let configuration: Configuration
    do {
        configuration = try Configuration.parse([(text: "", file: "motiond.toml"), (text: dropIn.text, file: "conf.d/" + fileName)])
    } catch {
        throw BrokenInvariant(message: "the drop-in does not load: \(error)\n\(dropIn.text)")
    }
    try fuzzCheck(configuration.calibrations.count == 1, "\(configuration.calibrations.count) [[calibration]] tables in\n\(dropIn.text)")
    try fuzzCheck(configuration.calibrations.first?.selection == DeviceSelection([dropIn.rule]) && configuration.calibrations.first?.matrix == matrix,
                  "the table read back is not the one written:\n\(dropIn.text)")
    try fuzzCheck(configuration.daemon == DaemonSettings() && configuration.tuio.isEmpty && configuration.devices.isEmpty
                  && configuration.elements.isEmpty && configuration.websocket == nil && configuration.screenGestures.isEmpty,
                  "the drop-in set more than its calibration:\n\(dropIn.text)")

    // And it selects the panel it was written for.
    var device = DeviceDescription(name: name)
    if hasIDs { (device.vendor, device.product) = (0x04f3, 0x2a1c) }
    try fuzzCheck(configuration.match(DeviceIdentity(number: 0, node: "/dev/input/event5", path: path, description: device))?.calibrationRule == dropIn.rule,
                  "the drop-in does not select the panel it was written for:\n\(dropIn.text)")
}
