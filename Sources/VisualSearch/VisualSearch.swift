import ImageOps

/// The ViSearch / ProductSearch model, the wire-compatible client and the
/// offline engine.
///
/// This module is laid down with the package; its contents arrive with the
/// engine and client issues. Today it re-exports the upload-preparation
/// presets the client will use, so apps can already prepare uploads exactly
/// as the ViSearch SDKs do.
public enum VisualSearch {
    /// The upload settings the ViSearch SDKs use by default (512 px, 0.97).
    public static let defaultUploadSettings = UploadSettings.standard
}
