import FuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzGlob(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.glob.libFuzzerInput(data, size)
}
