/// motiond's version, shown by `--version` and sent in the protocol's `hello`.
public enum MotiondVersion {
    /// The release, as semantic versioning.
    public static let string = "0.1.0"
}
