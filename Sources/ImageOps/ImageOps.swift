import CPNGCodec
import CTurboJPEG

/// Versions of the C libraries ImageOps runs on, for `vsearch --version`
/// and bug reports.
public enum ImageOpsLibraries {
    /// libjpeg-turbo's version, from the headers vsearch was built with (e.g. `2.1.5`).
    public static var libjpegTurbo: String {
        let number = Int(LIBJPEG_TURBO_VERSION_NUMBER)
        return "\(number / 1_000_000).\(number / 1000 % 1000).\(number % 1000)"
    }

    /// libdeflate's version, from the headers vsearch was built with (e.g. `1.14`):
    /// PNG image data is inflated and deflated with it.
    public static var libdeflate: String { String(cString: vspng_libdeflate_version()) }
}
