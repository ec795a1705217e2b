import FuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLibinput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.libinput.libFuzzerInput(data, size)
}
