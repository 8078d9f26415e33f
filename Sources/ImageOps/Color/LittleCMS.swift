import CLittleCMS
import Foundation

/// The edge to Little CMS: opening profiles, building them from primaries,
/// and transforms into sRGB. Nothing here prints (Little CMS's default error
/// handler is silent); failures come back as `nil` or a reason.
enum LittleCMS {
    /// The pixel layouts a transform reads.
    enum SourceLayout: Hashable, Sendable {
        /// 8-bit RGBA (``PixelBuffer``'s layout); alpha is copied.
        case rgba8
        /// 16-bit RGBA in host byte order; written out as 8-bit RGBA, alpha copied.
        case rgba16
        /// 8-bit inverted CMYK as Adobe JPEGs store it (255 = no ink); written as RGBA.
        case invertedCMYK8
        /// 8-bit gray; transformed once per value into a 256-entry lookup table.
        case gray8
    }

    /// The description tag of a profile, or `nil`.
    static func description(of iccData: [UInt8]) -> String? {
        guard let profile = open(iccData) else { return nil }
        defer { cmsCloseProfile(profile) }
        var buffer = [CChar](repeating: 0, count: 256)
        let length = cmsGetProfileInfoASCII(profile, cmsInfoDescription, "en", "US", &buffer, UInt32(buffer.count))
        guard length > 1 else { return nil }
        let text = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.isEmpty ? nil : text
    }

    /// Serialises a profile for ``RGBColorSpace``.
    static func profileData(for space: RGBColorSpace) -> [UInt8]? {
        let p = space.primaries
        var white = cmsCIExyY(x: p.white.x, y: p.white.y, Y: 1)
        var primaries = cmsCIExyYTRIPLE(Red: cmsCIExyY(x: p.red.x, y: p.red.y, Y: 1),
                                        Green: cmsCIExyY(x: p.green.x, y: p.green.y, Y: 1),
                                        Blue: cmsCIExyY(x: p.blue.x, y: p.blue.y, Y: 1))
        guard let curve = toneCurve(space.transfer) else { return nil }
        defer { cmsFreeToneCurve(curve) }
        var curves: [OpaquePointer?] = [curve, curve, curve]
        guard let profile = curves.withUnsafeMutableBufferPointer({ cmsCreateRGBProfile(&white, &primaries, $0.baseAddress) }) else {
            return nil
        }
        defer { cmsCloseProfile(profile) }
        var size: UInt32 = 0
        guard cmsSaveProfileToMem(profile, nil, &size) != 0, size > 0 else { return nil }
        var data = [UInt8](repeating: 0, count: Int(size))
        guard cmsSaveProfileToMem(profile, &data, &size) != 0 else { return nil }
        return Array(data.prefix(Int(size)))
    }

    static func toneCurve(_ transfer: RGBColorSpace.Transfer) -> OpaquePointer? {
        switch transfer {
        case .sRGB:
            // Y = ((X + 0.055) / 1.055)^2.4 above 0.04045, X / 12.92 below (ICC parametric type 4).
            let parameters: [Double] = [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045]
            return parameters.withUnsafeBufferPointer { cmsBuildParametricToneCurve(nil, 4, $0.baseAddress) }
        case .bt709:
            let parameters: [Double] = [1 / 0.45, 1 / 1.099, 0.099 / 1.099, 1 / 4.5, 0.081]
            return parameters.withUnsafeBufferPointer { cmsBuildParametricToneCurve(nil, 4, $0.baseAddress) }
        case .gamma(let exponent):
            guard exponent.isFinite, exponent > 0.1, exponent < 10 else { return nil }
            return cmsBuildGamma(nil, exponent)
        case .linear:
            return cmsBuildGamma(nil, 1)
        }
    }

    static func open(_ iccData: [UInt8]) -> cmsHPROFILE? {
        guard !iccData.isEmpty, iccData.count <= Int(UInt32.max) else { return nil }
        return iccData.withUnsafeBytes { cmsOpenProfileFromMem($0.baseAddress, UInt32($0.count)) }
    }

    /// A transform from `iccData` to sRGB for `layout`, or the reason there is none.
    static func makeTransform(from iccData: [UInt8], layout: SourceLayout) -> Result<ColorTransform, ColorTransform.Unusable> {
        guard let header = ICCProfileHeader(iccData) else {
            return .failure(.init(reason: "not a valid ICC profile (\(iccData.count) bytes, bad header)"))
        }
        let expected: ICCProfileHeader.ColorSpace = switch layout {
        case .rgba8, .rgba16: .rgb
        case .invertedCMYK8: .cmyk
        case .gray8: .gray
        }
        guard header.colorSpace == expected else {
            return .failure(.init(reason: "a \(header.colorSpace) profile on \(expected) pixels"))
        }
        guard ["mntr", "scnr", "prtr", "spac"].contains(header.profileClass) else {
            return .failure(.init(reason: "profile class '\(header.profileClass)' cannot convert an image"))
        }
        guard let source = open(iccData) else {
            return .failure(.init(reason: "Little CMS cannot read the profile"))
        }
        defer { cmsCloseProfile(source) }
        guard let sRGB = cmsCreate_sRGBProfile() else { return .failure(.init(reason: "Little CMS cannot create sRGB")) }
        defer { cmsCloseProfile(sRGB) }
        let intent = UInt32(INTENT_RELATIVE_COLORIMETRIC)
        let common = UInt32(cmsFLAGS_BLACKPOINTCOMPENSATION) | UInt32(cmsFLAGS_NOCACHE)
        let copyAlpha = UInt32(cmsFLAGS_COPY_ALPHA)
        if layout == .rgba8, let matrixShaper = MatrixShaper(source: source, sRGB: sRGB) {
            return .success(ColorTransform(.matrixShaper(matrixShaper), layout: layout))
        }
        let transform: cmsHTRANSFORM?
        switch layout {
        case .rgba8:
            transform = cmsCreateTransform(source, VS_TYPE_RGBA_8, sRGB, VS_TYPE_RGBA_8, intent, common | copyAlpha)
        case .rgba16:
            transform = cmsCreateTransform(source, VS_TYPE_RGBA_16, sRGB, VS_TYPE_RGBA_8, intent, common | copyAlpha)
        case .invertedCMYK8:
            transform = cmsCreateTransform(source, VS_TYPE_CMYK_8_REV, sRGB, VS_TYPE_RGBA_8, intent, common)
        case .gray8:
            guard let gray = cmsCreateTransform(source, VS_TYPE_GRAY_8, sRGB, VS_TYPE_RGB_8, intent, common) else {
                return .failure(.init(reason: "Little CMS cannot convert from the profile"))
            }
            defer { cmsDeleteTransform(gray) }
            let input = (0...255).map { UInt8($0) }
            var table = [UInt8](repeating: 0, count: 256 * 3)
            cmsDoTransform(gray, input, &table, 256)
            return .success(ColorTransform(.grayLookup(table), layout: layout))
        }
        guard let transform else { return .failure(.init(reason: "Little CMS cannot convert from the profile")) }
        return .success(ColorTransform(.littleCMS(transform), layout: layout))
    }
}

/// A ready transform into sRGB for one profile and source layout, shared
/// between threads (made with `cmsFLAGS_NOCACHE`, which makes Little CMS
/// transforms safe to run concurrently).
final class ColorTransform: @unchecked Sendable {
    enum Kind {
        case littleCMS(cmsHTRANSFORM)
        case grayLookup([UInt8])
        /// Boxed (`indirect`): inline, Swift keeps the case tag in a spare bit of the
        /// shaper's table pointer, which LeakSanitizer then misses (docs/fuzzing.md).
        indirect case matrixShaper(MatrixShaper)
    }

    /// Why a profile is not applied.
    struct Unusable: Error, Hashable {
        var reason: String
    }

    let kind: Kind
    let layout: LittleCMS.SourceLayout

    init(_ kind: Kind, layout: LittleCMS.SourceLayout) {
        self.kind = kind
        self.layout = layout
    }

    deinit {
        if case .littleCMS(let transform) = kind { cmsDeleteTransform(transform) }
    }

    /// Converts `count` pixels of `input` (in ``layout``) to 8-bit RGBA in `output`
    /// (which may be the same memory for the 8-bit layouts).
    func apply(_ input: UnsafeRawPointer, _ output: UnsafeMutablePointer<UInt8>, count: Int) {
        switch kind {
        case .littleCMS(let transform):
            // cmsDoTransform counts pixels in a UInt32; convert in slices well below that.
            let inputStride = layout == .rgba16 ? 8 : 4
            var done = 0
            while done < count {
                let slice = Swift.min(count - done, 1 << 24)
                cmsDoTransform(transform, input + done * inputStride, output + done * 4, UInt32(slice))
                done += slice
            }
            if layout == .invertedCMYK8 {
                for index in stride(from: 3, to: count * 4, by: 4) { output[index] = 255 }
            }
        case .matrixShaper(let shaper):
            shaper.apply(input.assumingMemoryBound(to: UInt8.self), output, count: count)
        case .grayLookup(let table):
            let gray = input.assumingMemoryBound(to: UInt8.self)
            table.withUnsafeBufferPointer { lut in
                for pixel in 0..<count {
                    let value = Int(gray[pixel * 4]) * 3
                    output[pixel * 4] = lut[value]
                    output[pixel * 4 + 1] = lut[value + 1]
                    output[pixel * 4 + 2] = lut[value + 2]
                }
            }
        }
    }
}

/// The fast path for the common case, an RGB matrix/TRC profile (Adobe RGB,
/// ProPhoto, Display P3, wide gamut…) into sRGB: what Little CMS computes for
/// such a pair — linearise each channel by the profile's curve, one 3×3 matrix
/// (source colorants → XYZ D50 → sRGB), clip, encode with the sRGB curve — in
/// tables built once from the profile's own tags. Black-point compensation is
/// the identity here (both blacks are zero). About a third of the per-pixel
/// cost of Little CMS's general 8-bit RGBA path; equal to it within a level.
struct MatrixShaper: Sendable {
    /// Linear values of the 256 codes of each channel.
    let linear: [Float]
    /// Row-major 3×3 from source linear RGB to sRGB linear RGB.
    let matrix: [Float]
    /// sRGB codes of linear values 0…1 in 16384 steps (fine enough near black, where the curve is steepest).
    let encode: [UInt8]
    static let encodeSteps = 16384

    init?(source: cmsHPROFILE, sRGB: cmsHPROFILE) {
        guard cmsIsMatrixShaper(source) != 0, cmsIsMatrixShaper(sRGB) != 0,
              let sourceMatrix = MatrixShaper.colorants(source), let sRGBMatrix = MatrixShaper.colorants(sRGB),
              let inverse = MatrixShaper.inverse(sRGBMatrix) else { return nil }
        var linear: [Float] = []
        for tag in [cmsSigRedTRCTag, cmsSigGreenTRCTag, cmsSigBlueTRCTag] {
            guard let curve = cmsReadTag(source, tag) else { return nil }
            let tone = OpaquePointer(curve)
            for code in 0...255 { linear.append(cmsEvalToneCurveFloat(tone, Float(code) / 255)) }
        }
        self.linear = linear
        matrix = MatrixShaper.product(inverse, sourceMatrix).map(Float.init)
        encode = (0..<MatrixShaper.encodeSteps).map { step in
            let v = Double(step) / Double(MatrixShaper.encodeSteps - 1)
            let encoded = v <= 0.0031308 ? 12.92 * v : 1.055 * pow(v, 1 / 2.4) - 0.055
            return UInt8((encoded * 255).rounded())
        }
    }

    /// Columns rXYZ, gXYZ, bXYZ as a row-major 3×3 matrix.
    static func colorants(_ profile: cmsHPROFILE) -> [Double]? {
        var columns: [cmsCIEXYZ] = []
        for tag in [cmsSigRedColorantTag, cmsSigGreenColorantTag, cmsSigBlueColorantTag] {
            guard let raw = cmsReadTag(profile, tag) else { return nil }
            columns.append(raw.assumingMemoryBound(to: cmsCIEXYZ.self).pointee)
        }
        return [columns[0].X, columns[1].X, columns[2].X,
                columns[0].Y, columns[1].Y, columns[2].Y,
                columns[0].Z, columns[1].Z, columns[2].Z]
    }

    static func product(_ a: [Double], _ b: [Double]) -> [Double] {
        (0..<9).map { index in
            let row = index / 3, column = index % 3
            return (0..<3).reduce(0) { $0 + a[row * 3 + $1] * b[$1 * 3 + column] }
        }
    }

    static func inverse(_ m: [Double]) -> [Double]? {
        let determinant = m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) + m[2] * (m[3] * m[7] - m[4] * m[6])
        guard abs(determinant) > 1e-9 else { return nil }
        let adjugate = [m[4] * m[8] - m[5] * m[7], m[2] * m[7] - m[1] * m[8], m[1] * m[5] - m[2] * m[4],
                        m[5] * m[6] - m[3] * m[8], m[0] * m[8] - m[2] * m[6], m[2] * m[3] - m[0] * m[5],
                        m[3] * m[7] - m[4] * m[6], m[1] * m[6] - m[0] * m[7], m[0] * m[4] - m[1] * m[3]]
        return adjugate.map { $0 / determinant }
    }

    func apply(_ input: UnsafePointer<UInt8>, _ output: UnsafeMutablePointer<UInt8>, count: Int) {
        linear.withUnsafeBufferPointer { lut in
            encode.withUnsafeBufferPointer { out in
                let m = matrix
                let (m0, m1, m2, m3, m4, m5, m6, m7, m8) = (m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8])
                let scale = Float(MatrixShaper.encodeSteps - 1)
                @inline(__always) func code(_ value: Float) -> UInt8 {
                    out[Int(Swift.min(Swift.max(value, 0), 1) * scale + 0.5)]
                }
                for pixel in 0..<count {
                    let at = pixel * 4
                    let r = lut[Int(input[at])], g = lut[256 + Int(input[at + 1])], b = lut[512 + Int(input[at + 2])]
                    let alpha = input[at + 3]
                    output[at] = code(m0 * r + m1 * g + m2 * b)
                    output[at + 1] = code(m3 * r + m4 * g + m5 * b)
                    output[at + 2] = code(m6 * r + m7 * g + m8 * b)
                    output[at + 3] = alpha
                }
            }
        }
    }
}
