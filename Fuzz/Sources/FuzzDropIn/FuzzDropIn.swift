import FuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzDropIn(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.dropin.libFuzzerInput(data, size)
}
