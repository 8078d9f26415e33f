#if HEIF
import CHEIF

extension ImageDecoders {
    /// HEIC/HEIF through libheif (HEVC by libde265): the primary image, as
    /// phones save it.
    ///
    /// - Geometry: libheif applies the file's own transformations (`clap`
    ///   crop, `irot` rotation, `imir` mirror), which are the HEIF way of
    ///   orienting; an EXIF orientation inside a HEIF is *not* applied again
    ///   (the HEIF specification makes `irot`/`imir` authoritative, as
    ///   libvips and browsers do). The header therefore reports the displayed
    ///   size and ``Orientation/up``.
    /// - Colour: a `colr` ICC profile (`prof`/`rICC`), or an `nclx` box
    ///   (primaries and transfer, e.g. Display P3) turned into a profile; PQ and
    ///   HLG high-dynamic-range sources are read as sRGB with a warning. Higher
    ///   bit depths are reduced to 8 by libheif.
    /// - The size is checked against ``ImageLimits`` before libheif decodes,
    ///   and libheif's own side limit is set to ``ImageLimits/maxSide``.
    public struct HEIF: ImageDecoding {
        /// Creates the decoder.
        public init() {}

        /// ``ImageFormat/heif``.
        public var format: ImageFormat { .heif }

        public func readHeader(_ bytes: UnsafeRawBufferPointer, source: String) throws(ImageOpsError) -> ImageHeader {
            let file = try File(bytes, source: source, maxSide: ImageLimits.default.maxSide)
            return file.header
        }

        public func decode(_ bytes: UnsafeRawBufferPointer, source: String,
                           options: DecodingOptions) throws(ImageOpsError) -> DecodedImage {
            let file = try File(bytes, source: source, maxSide: options.limits.maxSide)
            try options.limits.check(file.header.storedSize, source: source)
            var warnings: [String] = []
            let profile = file.colorProfile(warnings: &warnings)
            let pixels = try file.decodePixels()
            var decoded = DecodedImage(pixels: pixels, header: file.header, warnings: warnings)
            decoded.metadata = file.metadata()
            decoded.applyColorHandling(options.colorHandling, profile: profile, model: .rgb, deferring: options.defersColorConversion)
            return decoded
        }

        /// A parsed file and its primary image; released on deinit.
        final class File {
            let context: OpaquePointer
            let handle: OpaquePointer
            let header: ImageHeader
            let source: String

            init(_ bytes: UnsafeRawBufferPointer, source: String, maxSide: Int) throws(ImageOpsError) {
                guard let base = bytes.baseAddress, !bytes.isEmpty else { throw .emptyInput(source: source) }
                guard let context = heif_context_alloc() else {
                    throw .corrupt(source: source, format: .heif, reason: "libheif could not create a context")
                }
                heif_context_set_maximum_image_size_limit(context, Int32(clamping: maxSide))
                // A heif_error's message belongs to the context: turn it into our error before
                // freeing the context (reading it afterwards was a use-after-free; fuzz finding,
                // Fuzz/Regressions/heif).
                let read = heif_context_read_from_memory_without_copy(context, base, bytes.count, nil)
                guard read.code == heif_error_Ok else {
                    let error = HEIF.error(read, source: source)
                    heif_context_free(context)
                    throw error
                }
                var handle: OpaquePointer?
                let primary = heif_context_get_primary_image_handle(context, &handle)
                guard primary.code == heif_error_Ok, let handle else {
                    let error = HEIF.error(primary, source: source)
                    heif_context_free(context)
                    throw error
                }
                self.context = context
                self.handle = handle
                self.source = source
                let size = PixelSize(width: Int(heif_image_handle_get_width(handle)), height: Int(heif_image_handle_get_height(handle)))
                header = ImageHeader(format: .heif, storedSize: size, orientation: .up,
                                     hasAlpha: heif_image_handle_has_alpha_channel(handle) != 0)
                guard size.width > 0, size.height > 0 else {
                    throw ImageOpsError.invalidDimensions(source: source, width: size.width, height: size.height)
                }
            }

            deinit {
                heif_image_handle_release(handle)
                heif_context_free(context)
            }

            func colorProfile(warnings: inout [String]) -> ColorProfile? {
                let type = heif_image_handle_get_color_profile_type(handle)
                if type == heif_color_profile_type_prof || type == heif_color_profile_type_rICC {
                    let size = heif_image_handle_get_raw_color_profile_size(handle)
                    guard size > 0 else { return nil }
                    var data = [UInt8](repeating: 0, count: size)
                    guard heif_image_handle_get_raw_color_profile(handle, &data).code == heif_error_Ok else { return nil }
                    return ColorProfile(iccData: data)
                }
                if type == heif_color_profile_type_nclx {
                    var nclx: UnsafeMutablePointer<heif_color_profile_nclx>?
                    let status = heif_image_handle_get_nclx_color_profile(handle, &nclx)
                    // libheif allocates the profile before it validates the values, and on an
                    // unknown primaries, transfer or matrix code returns an error with the
                    // profile still allocated: free whatever it returned (fuzz finding: a leak).
                    defer { if let nclx { heif_nclx_color_profile_free(nclx) } }
                    guard status.code == heif_error_Ok, let nclx else { return nil }
                    switch RGBColorSpace.nclx(primaries: Int(nclx.pointee.color_primaries.rawValue),
                                              transfer: Int(nclx.pointee.transfer_characteristics.rawValue)) {
                    case .none: return nil
                    case .success(let space): return space.profile
                    case .failure(let unsupported):
                        warnings.append("colour description ignored (\(unsupported.reason)); pixels read as sRGB")
                        return nil
                    }
                }
                return nil
            }

            /// Artist and Copyright from the first Exif item.
            func metadata() -> ImageMetadata {
                var id = heif_item_id()
                guard heif_image_handle_get_list_of_metadata_block_IDs(handle, "Exif", &id, 1) == 1 else { return .none }
                let size = heif_image_handle_get_metadata_size(handle, id)
                guard size > 4, size <= 16 << 20 else { return .none }
                var data = [UInt8](repeating: 0, count: size)
                guard heif_image_handle_get_metadata(handle, id, &data).code == heif_error_Ok else { return .none }
                // The item starts with the big-endian offset of the TIFF header after these four bytes.
                let offset = 4 + (Int(data[0]) << 24 | Int(data[1]) << 16 | Int(data[2]) << 8 | Int(data[3]))
                guard offset < data.count else { return .none }
                return data.withUnsafeBytes { ImageMetadata(EXIFReader.fields(inTIFF: UnsafeRawBufferPointer(rebasing: $0[offset...]))) }
            }

            func decodePixels() throws(ImageOpsError) -> PixelBuffer {
                guard let options = heif_decoding_options_alloc() else {
                    throw .corrupt(source: source, format: .heif, reason: "libheif could not allocate options")
                }
                defer { heif_decoding_options_free(options) }
                options.pointee.convert_hdr_to_8bit = 1
                var image: OpaquePointer?
                let chroma = header.hasAlpha ? heif_chroma_interleaved_RGBA : heif_chroma_interleaved_RGB
                let result = heif_decode_image(handle, &image, heif_colorspace_RGB, chroma, options)
                guard result.code == heif_error_Ok, let image else { throw HEIF.error(result, source: source) }
                defer { heif_image_release(image) }
                let width = Int(heif_image_get_width(image, heif_channel_interleaved))
                let height = Int(heif_image_get_height(image, heif_channel_interleaved))
                var stride: Int32 = 0
                guard width == header.storedSize.width, height == header.storedSize.height,
                      let plane = heif_image_get_plane_readonly(image, heif_channel_interleaved, &stride),
                      Int(stride) >= width * (header.hasAlpha ? 4 : 3) else {
                    throw .corrupt(source: source, format: .heif, reason: "decoded image differs from its header")
                }
                let hasAlpha = header.hasAlpha
                return PixelBuffer(width: width, height: height, hasAlpha: hasAlpha) { out in
                    for y in 0..<height {
                        let row = plane + y * Int(stride)
                        let target = out.baseAddress! + y * width * 4
                        if hasAlpha {
                            target.update(from: row, count: width * 4)
                        } else {
                            for x in 0..<width {
                                target[x * 4] = row[x * 3]
                                target[x * 4 + 1] = row[x * 3 + 1]
                                target[x * 4 + 2] = row[x * 3 + 2]
                                target[x * 4 + 3] = 255
                            }
                        }
                    }
                }
            }
        }

        static func error(_ error: heif_error, source: String) -> ImageOpsError {
            let message = error.message.map { String(cString: $0) } ?? "unknown libheif error"
            if error.subcode == heif_suberror_End_of_data {
                return .truncated(source: source, format: .heif, reason: message)
            }
            if error.code == heif_error_Unsupported_filetype || error.code == heif_error_Unsupported_feature {
                return .corrupt(source: source, format: .heif, reason: "unsupported: \(message)")
            }
            if error.subcode == heif_suberror_Security_limit_exceeded {
                return .corrupt(source: source, format: .heif, reason: "exceeds libheif's security limits: \(message)")
            }
            return .corrupt(source: source, format: .heif, reason: message)
        }
    }
}
#endif
