import FuzzTargets

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAssembler(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    FuzzTarget.assembler.libFuzzerInput(data, size)
}
