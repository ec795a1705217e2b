import FuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzEvemu(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.evemu.libFuzzerInput(data, size)
}
