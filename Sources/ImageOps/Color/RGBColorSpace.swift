/// An RGB colour space given by its primaries, white point and transfer
/// function — how PNG's gAMA/cHRM chunks and HEIF/AVIF `nclx` boxes declare
/// colour. ``profile`` turns it into an ICC profile (built by Little CMS), so
/// it is converted and embedded like any other.
///
/// ```swift
/// let p3 = RGBColorSpace(primaries: .displayP3, transfer: .sRGB)
/// let profile = p3.profile // ICC bytes Little CMS made
/// ```
public struct RGBColorSpace: Sendable, Hashable {
    /// A CIE 1931 xy chromaticity.
    public struct Chromaticity: Sendable, Hashable {
        /// x.
        public var x: Double
        /// y.
        public var y: Double

        /// Creates a chromaticity.
        public init(x: Double, y: Double) {
            self.x = x
            self.y = y
        }
    }

    /// White point and the three primaries.
    public struct Primaries: Sendable, Hashable {
        /// The white point.
        public var white: Chromaticity
        /// Red.
        public var red: Chromaticity
        /// Green.
        public var green: Chromaticity
        /// Blue.
        public var blue: Chromaticity

        /// Creates primaries.
        public init(white: Chromaticity, red: Chromaticity, green: Chromaticity, blue: Chromaticity) {
            self.white = white
            self.red = red
            self.green = green
            self.blue = blue
        }

        static let d65 = Chromaticity(x: 0.3127, y: 0.3290)
        /// ITU-R BT.709 / sRGB, D65.
        public static let bt709 = Primaries(white: d65, red: .init(x: 0.64, y: 0.33),
                                            green: .init(x: 0.30, y: 0.60), blue: .init(x: 0.15, y: 0.06))
        /// Display P3 (SMPTE EG 432-1), D65: what phones shoot.
        public static let displayP3 = Primaries(white: d65, red: .init(x: 0.680, y: 0.320),
                                                green: .init(x: 0.265, y: 0.690), blue: .init(x: 0.150, y: 0.060))
        /// DCI-P3 (SMPTE RP 431-2), DCI white.
        public static let dciP3 = Primaries(white: .init(x: 0.314, y: 0.351), red: .init(x: 0.680, y: 0.320),
                                            green: .init(x: 0.265, y: 0.690), blue: .init(x: 0.150, y: 0.060))
        /// ITU-R BT.2020, D65.
        public static let bt2020 = Primaries(white: d65, red: .init(x: 0.708, y: 0.292),
                                             green: .init(x: 0.170, y: 0.797), blue: .init(x: 0.131, y: 0.046))
        /// ITU-R BT.601 625-line (PAL), D65.
        public static let bt601PAL = Primaries(white: d65, red: .init(x: 0.64, y: 0.33),
                                               green: .init(x: 0.29, y: 0.60), blue: .init(x: 0.15, y: 0.06))
        /// ITU-R BT.601 525-line (SMPTE 170M), D65.
        public static let bt601NTSC = Primaries(white: d65, red: .init(x: 0.630, y: 0.340),
                                                green: .init(x: 0.310, y: 0.595), blue: .init(x: 0.155, y: 0.070))
    }

    /// How stored values map to linear light.
    public enum Transfer: Sendable, Hashable {
        /// The sRGB curve (IEC 61966-2-1).
        case sRGB
        /// The BT.709 / BT.601 camera curve.
        case bt709
        /// A pure power: linear = stored^exponent (PNG's gAMA g gives exponent 1/g).
        case gamma(Double)
        /// Linear light.
        case linear
    }

    /// Primaries and white point.
    public var primaries: Primaries
    /// The transfer function.
    public var transfer: Transfer

    /// Creates a colour space.
    public init(primaries: Primaries, transfer: Transfer) {
        self.primaries = primaries
        self.transfer = transfer
    }

    /// Whether this is sRGB itself (BT.709 primaries, the sRGB curve), which needs no profile.
    public var isSRGB: Bool { primaries == .bt709 && transfer == .sRGB }

    /// An ICC profile describing this colour space, made by Little CMS;
    /// `nil` when it cannot be built (degenerate primaries, a non-positive gamma).
    public var profile: ColorProfile? {
        LittleCMS.profileData(for: self).map(ColorProfile.init(iccData:))
    }

    /// The colour space an ITU-T H.273 `nclx` box declares (HEIF, AVIF), or
    /// `nil` for sRGB itself or codes vsearch does not convert (PQ and HLG
    /// high-dynamic-range curves, unknown primaries): those are read as sRGB.
    /// - Returns: the colour space, or a reason it is not converted.
    static func nclx(primaries: Int, transfer: Int) -> Result<RGBColorSpace, NCLXUnsupported>? {
        let chosenPrimaries: Primaries
        switch primaries {
        case 1, 2: chosenPrimaries = .bt709  // 2: unspecified
        case 5: chosenPrimaries = .bt601PAL
        case 6, 7: chosenPrimaries = .bt601NTSC
        case 9: chosenPrimaries = .bt2020
        case 11: chosenPrimaries = .dciP3
        case 12: chosenPrimaries = .displayP3
        default: return .failure(NCLXUnsupported(reason: "colour primaries \(primaries)"))
        }
        let chosenTransfer: Transfer
        switch transfer {
        case 2, 13: chosenTransfer = .sRGB  // 2: unspecified
        case 1, 6, 14, 15: chosenTransfer = .bt709
        case 4: chosenTransfer = .gamma(2.2)
        case 5: chosenTransfer = .gamma(2.8)
        case 8: chosenTransfer = .linear
        case 16: return .failure(NCLXUnsupported(reason: "the PQ (HDR) transfer function"))
        case 18: return .failure(NCLXUnsupported(reason: "the HLG (HDR) transfer function"))
        default: return .failure(NCLXUnsupported(reason: "transfer characteristics \(transfer)"))
        }
        let space = RGBColorSpace(primaries: chosenPrimaries, transfer: chosenTransfer)
        return space.isSRGB ? nil : .success(space)
    }

    /// Why an `nclx` colour description is read as sRGB.
    struct NCLXUnsupported: Error {
        var reason: String
    }
}
