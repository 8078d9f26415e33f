import CPNGShim
import CTurboJPEG

/// Versions of the C libraries ImageOps runs on, for `vsearch --version`
/// and bug reports.
public enum ImageOpsLibraries {
    /// libjpeg-turbo's version, from the headers vsearch was built with (e.g. `2.1.5`).
    public static var libjpegTurbo: String {
        let number = Int(LIBJPEG_TURBO_VERSION_NUMBER)
        return "\(number / 1_000_000).\(number / 1000 % 1000).\(number % 1000)"
    }

    /// libpng's version, as the library loaded at run time reports it (e.g. `1.6.39`).
    public static var libpng: String { String(cString: vs_png_runtime_version()) }
}
