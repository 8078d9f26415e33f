import ImageOps

/// Where an upload search's query image comes from.
public enum QueryImage: Sendable, Hashable {
    /// Encoded JPEG or PNG bytes (on the wire: the multipart `image`).
    case bytes([UInt8])
    /// A local file, read by whoever answers locally or prepared by the client.
    case file(String)
    /// `im_url`: an `http(s)://` or `file://` URL the service fetches.
    case url(String)
    /// `im_id`: an image an earlier upload search cached.
    case imageID(String)
}

/// The query image of an upload, discover or ProductSearch request, the box
/// inside it, and how it is prepared before it is searched.
///
/// Preparation is what the ViSearch SDKs do before uploading (fit inside
/// 512 px, JPEG quality 0.97, EXIF orientation applied, the box scaled into
/// the prepared pixels). The client prepares before sending; the engine
/// prepares a local request the same way, so a query gives the same answer
/// offline and through a server. A request read from the wire has
/// `preparation` nil: its bytes are what the sender prepared.
public struct ImageQuery: Sendable, Hashable {
    public var image: QueryImage
    /// A box in the image's upright pixels; a zero-size box is a point.
    public var box: PixelBox?
    /// How bytes and files are prepared; `nil` searches them as they are.
    public var preparation: UploadSettings?

    public init(_ image: QueryImage, box: PixelBox? = nil, preparation: UploadSettings? = .standard) {
        self.image = image
        self.box = box
        self.preparation = preparation
    }

    /// The image prepared as the SDKs upload it: bytes or a file become
    /// ``QueryImage/bytes(_:)`` of the prepared JPEG, the box scaled with it.
    /// URLs and image ids are returned as they are (the service fetches them).
    /// - Parameter scale: receives prepared ÷ original, for coordinates other than the box.
    /// - Throws: ``ImageOpsError`` naming the file or `upload image`.
    public func prepared(limits: ImageLimits = .default, scale: ((Double) -> Void)? = nil) throws(ImageOpsError) -> ImageQuery {
        guard let preparation else { return self }
        let bytes: [UInt8], source: String
        switch image {
        case .bytes(let data): (bytes, source) = (data, "upload image")
        case .file(let path): (bytes, source) = (try FileIO.read(path, maxBytes: limits.maxInputBytes), path)
        case .url, .imageID: return self
        }
        let prepared = try UploadPreparation.prepare(bytes, source: source, settings: preparation, box: box, limits: limits)
        scale?(prepared.scale)
        return ImageQuery(.bytes(prepared.jpeg), box: prepared.box, preparation: nil)
    }

    /// Puts the image where the SDKs put it: bytes in the multipart `image`,
    /// `im_url` or `im_id` in the query; `box` beside it.
    /// - Throws: ``VisualSearchError/invalidParameter(name:reason:)`` for a local file (prepare it first).
    func encode(into message: inout WireMessage) throws(VisualSearchError) {
        switch image {
        case .bytes(let bytes): message.image = bytes
        case .url(let url): message.query.append("im_url", url)
        case .imageID(let id): message.query.append("im_id", id)
        case .file(let path):
            throw .invalidParameter(name: "image", reason: "the local file \(path) must be prepared into bytes before it is sent")
        }
        if let box { message.query.append("box", box.description) }
    }

    /// Reads the image the Swift SDK's way: the multipart `image`, else `im_url`, else `im_id`.
    init(wire message: WireMessage) throws(VisualSearchError) {
        let image: QueryImage
        if let bytes = message.image {
            image = .bytes(bytes)
        } else if let url = message.query.string("im_url") {
            image = .url(url)
        } else if let id = message.query.string("im_id") {
            image = .imageID(id)
        } else {
            throw .invalidParameter(name: "image", reason: "send a multipart image part, im_url or im_id")
        }
        self.init(image, box: try message.query.box("box"), preparation: nil)
    }
}

extension WireQuery {
    /// A box `x1,y1,x2,y2`, validated; each coordinate must fit in 32 bits (an image side is at
    /// most ``ImageLimits/maxSide``), so no arithmetic on a box from the wire can overflow.
    /// - Throws: ``VisualSearchError/invalidParameter(name:reason:)``.
    public func box(_ name: String) throws(VisualSearchError) -> PixelBox? {
        guard let text = string(name) else { return nil }
        let box: PixelBox
        do { box = try PixelBox(parsing: text) } catch {
            throw .invalidParameter(name: name, reason: error.description)
        }
        guard [box.x1, box.y1, box.x2, box.y2].allSatisfy({ Int32(exactly: $0) != nil }) else {
            throw .invalidParameter(name: name, reason: "\"\(text)\" has a coordinate beyond ±2147483647")
        }
        return box
    }
}
