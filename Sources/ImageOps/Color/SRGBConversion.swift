import ConcurrencyToolkit

/// Converting decoded pixels to sRGB: one Little CMS transform per distinct
/// profile and pixel layout, made once and cached, applied once per source
/// at its decoded size (after shrink-on-load, before resampling).
///
/// A profile whose transform changes no colour by more than one level (the
/// many files that embed sRGB itself, in any of its versions) is marked
/// *identity* when it is first seen, and its sources cost nothing more.
/// A profile that cannot be used — unreadable, the wrong colour space for the
/// pixels, a device link — is reported as a warning and the pixels are read
/// as sRGB: never an error.
enum SRGBConversion {
    /// What to do for a profile and layout.
    enum Plan {
        /// Converting would change nothing visible.
        case identity
        /// Convert with this transform.
        case transform(ColorTransform)
        /// The profile cannot be applied.
        case unusable(String)
    }

    struct Key: Hashable {
        var iccData: [UInt8]
        var layout: LittleCMS.SourceLayout
    }

    /// At most this many plans are kept; the cache is emptied when full (a
    /// shop's catalogue has a handful of distinct profiles).
    static let capacity = 64
    private static let cache = Locked<[Key: Plan]>([:])

    /// The plan for a profile, made on first use.
    static func plan(for profile: ColorProfile, layout: LittleCMS.SourceLayout) -> Plan {
        let key = Key(iccData: profile.iccData, layout: layout)
        if let cached = cache.withLock({ $0[key] }) { return cached }
        let plan: Plan
        switch LittleCMS.makeTransform(from: profile.iccData, layout: layout) {
        case .failure(let unusable):
            plan = .unusable(unusable.reason)
        case .success(let transform):
            plan = isIdentity(transform) ? .identity : .transform(transform)
        }
        cache.withLock { plans in
            if plans.count >= capacity { plans.removeAll(keepingCapacity: true) }
            plans[key] = plan
        }
        return plan
    }

    /// Whether a transform moves no colour of a 17×17×17 grid (or no gray
    /// level) by more than one level: such a profile is sRGB for our purposes.
    static func isIdentity(_ transform: ColorTransform) -> Bool {
        let steps = 17
        var samples: [UInt8] = []
        switch transform.layout {
        case .rgba8:
            samples.reserveCapacity(steps * steps * steps * 4)
            for r in 0..<steps { for g in 0..<steps { for b in 0..<steps {
                samples += [UInt8(r * 255 / (steps - 1)), UInt8(g * 255 / (steps - 1)), UInt8(b * 255 / (steps - 1)), 255]
            } } }
        case .gray8:
            for value in 0...255 { samples += [UInt8(value), UInt8(value), UInt8(value), 255] }
        case .rgba16, .invertedCMYK8:
            return false  // decided on the 8-bit RGB plan; CMYK is never sRGB
        }
        var output = [UInt8](repeating: 0, count: samples.count)
        samples.withUnsafeBytes { input in
            output.withUnsafeMutableBufferPointer { transform.apply(input.baseAddress!, $0.baseAddress!, count: samples.count / 4) }
        }
        for index in samples.indices where index % 4 != 3 && abs(Int(samples[index]) - Int(output[index])) > 1 {
            return false
        }
        return true
    }

    /// Whether `profile` would change 8-bit RGB pixels (so a 16-bit source is worth decoding at 16 bits).
    static func changesRGB(_ profile: ColorProfile) -> Bool {
        if case .transform = plan(for: profile, layout: .rgba8) { return true }
        return false
    }
}

/// The colour model of the pixels a decoder produced, before colour handling.
enum DecodedColorModel {
    /// RGB (or RGBA).
    case rgb
    /// Gray, already replicated into R, G and B.
    case gray
    /// Inverted CMYK in the four bytes (Adobe JPEG), to be turned into RGB.
    case invertedCMYK
}

extension DecodedImage {
    /// The one place decoders hand their colour profile to: converts the
    /// pixels to sRGB, or keeps an RGB profile when asked, and turns CMYK
    /// into RGB (through its profile, or the naive `c·k/255` without one).
    /// Problems with the profile become ``warnings``.
    mutating func applyColorHandling(_ handling: ColorHandling, profile: ColorProfile?, model: DecodedColorModel,
                                     deferring: Bool = false) {
        colorProfile = nil
        pendingConversion = nil
        let layout: LittleCMS.SourceLayout = switch model {
        case .rgb: .rgba8
        case .gray: .gray8
        case .invertedCMYK: .invertedCMYK8
        }
        guard let profile else {
            if model == .invertedCMYK { pixels.convertInvertedCMYKToRGB() }
            return
        }
        let plan = SRGBConversion.plan(for: profile, layout: layout)
        if handling == .keepSourceProfile, model == .rgb {
            if case .unusable(let reason) = plan {
                warnings.append("colour profile dropped (\(reason)); pixels read as sRGB")
            } else {
                colorProfile = profile
            }
            return
        }
        switch plan {
        case .identity:
            break
        case .transform where deferring && model == .rgb:
            pendingConversion = profile
        case .transform(let transform):
            pixels.bytes.withUnsafeMutableBufferPointer { buffer in
                transform.apply(UnsafeRawPointer(buffer.baseAddress!), buffer.baseAddress!, count: buffer.count / 4)
            }
        case .unusable(let reason):
            warnings.append("colour profile ignored (\(reason)); pixels read as sRGB")
            if model == .invertedCMYK { pixels.convertInvertedCMYKToRGB() }
        }
    }
}

extension PixelBuffer {
    /// The pixels converted from `profile` (an RGB profile) to sRGB — the
    /// deferred half of ``DecodedImage/applyColorHandling(_:profile:model:deferring:)``,
    /// for a caller that resized first. `nil` converts nothing.
    public consuming func convertedToSRGB(from profile: ColorProfile?) -> PixelBuffer {
        guard let profile, case .transform(let transform) = SRGBConversion.plan(for: profile, layout: .rgba8) else { return self }
        var converted = self
        converted.bytes.withUnsafeMutableBufferPointer { buffer in
            transform.apply(UnsafeRawPointer(buffer.baseAddress!), buffer.baseAddress!, count: buffer.count / 4)
        }
        return converted
    }

    /// Adobe CMYK JPEGs store inverted ink values; without a profile, RGB = c·k/255 per channel.
    mutating func convertInvertedCMYKToRGB() {
        bytes.withUnsafeMutableBufferPointer { pixels in
            for index in stride(from: 0, to: pixels.count, by: 4) {
                let k = UInt32(pixels[index + 3])
                pixels[index] = UInt8((UInt32(pixels[index]) * k + 127) / 255)
                pixels[index + 1] = UInt8((UInt32(pixels[index + 1]) * k + 127) / 255)
                pixels[index + 2] = UInt8((UInt32(pixels[index + 2]) * k + 127) / 255)
                pixels[index + 3] = 255
            }
        }
    }
}
