import ImageOps
import VisualSearch

/// Why an image's features could not be computed: the image itself, or the learned model.
public enum FeaturesError: Error, Sendable, Hashable, CustomStringConvertible {
    case image(ImageOpsError)
    case embedding(EmbeddingError)

    public var description: String {
        switch self {
        case .image(let error): error.description
        case .embedding(let error): error.description
        }
    }

    /// The error a query answers with.
    public var searchError: VisualSearchError {
        switch self {
        case .image(let error): .image(error)
        case .embedding(let error): error.searchError
        }
    }

    /// Runs decoding and embedding work, its failures as a `FeaturesError`:
    /// image errors and model errors wrapped, anything else a failed inference.
    static func catching<T>(_ work: () throws -> T) throws(FeaturesError) -> T {
        do {
            return try work()
        } catch let error as FeaturesError {
            throw error
        } catch let error as ImageOpsError {
            throw .image(error)
        } catch let error as EmbeddingError {
            throw .embedding(error)
        } catch {
            throw .embedding(.inference(reason: "\(error)"))
        }
    }
}

extension EmbeddingError {
    /// The error a query answers with.
    public var searchError: VisualSearchError {
        switch self {
        case .modelMissing, .runtimeUnavailable: .learnedModel(.missing, reason: description)
        case .modelDamaged: .learnedModel(.damaged, reason: description)
        case .inference: .learnedModel(.damaged, reason: description)
        }
    }
}
