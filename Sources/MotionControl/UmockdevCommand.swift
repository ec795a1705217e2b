import ArgumentParser
import FoundationEssentials
import MotionConfiguration
import TouchInput

/// `motionctl umockdev`: turns an evemu recording into files umockdev can fake a device from.
struct UmockdevCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "umockdev",
        abstract: "Convert an evemu recording into umockdev files, to replay it through the real libevdev and libudev.",
        discussion: """
            Writes NAME.umockdev (the device in sysfs and udev), NAME.ioctl (libevdev's set-up \
            ioctls) and NAME.events (the events) into the output directory, and prints the \
            umockdev-run command that uses them.
            """
    )

    @Argument(help: "The recording (evemu with its device header, or libinput record YAML).") var recording: String
    @OptionGroup var device: RecordingDeviceOption
    @Option(name: .customLong("output-dir"), help: "Where to write the files.") var outputDirectory: String = "."
    @Option(help: "N in /dev/input/eventN.") var eventNumber: Int = 50
    @Option(help: "Seconds before the first event, so the reader is ready when it comes (umockdev misstamps earlier ones).")
    var leadIn: Double = 0.5

    func validate() throws {
        if !(0...9999).contains(eventNumber) { throw ValidationError("--event-number must be between 0 and 9999") }
        if !(leadIn >= 0 && leadIn.isFinite) { throw ValidationError("--lead-in must be zero or more seconds") }
    }

    func run() throws {
        // Any recorded device converts, touchscreen or not, valid or not: faking a touchpad,
        // or a panel whose firmware reports nonsense, is how to test that motiond refuses it.
        let parsed = try loadRecording(recording, device: device, validatingDevice: false)
        guard let device = parsed.device else { fail("motionctl: \(recording): \(ReplayError.noDeviceHeader)") }
        let export = UmockdevExport(device: device, eventNumber: eventNumber)
        do {
            try FileManager.default.createDirectory(atPath: outputDirectory, withIntermediateDirectories: true)
        } catch {
            fail("motionctl: cannot create \(outputDirectory): \(reason(error))")
        }
        let base = URL(fileURLWithPath: outputDirectory)
            .appendingPathComponent(URL(fileURLWithPath: recording).deletingPathExtension().lastPathComponent)
        let files = [
            (base.appendingPathExtension("umockdev"), export.deviceFile()),
            (base.appendingPathExtension("ioctl"), export.ioctlFile()),
            (base.appendingPathExtension("events"), UmockdevExport.eventsFile(parsed.events, leadIn: leadIn)),
        ]
        for (url, text) in files {
            do { try text.write(to: url, atomically: true, encoding: .utf8) } catch {
                fail("motionctl: cannot write \(url.path): \(reason(error))")
            }
        }
        emit("umockdev-run --device \(files[0].0.path) --ioctl \(export.node)=\(files[1].0.path) --evemu-events \(export.node)=\(files[2].0.path) -- motionctl frames")
    }
}
