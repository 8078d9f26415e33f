import Foundation
import ArgumentParser
import ImageOps
import SearchEngine
import VisualSearch

/// The process exit codes vsearch uses (sysexits-style where one fits).
enum ExitCodes {
    /// Some inputs of a batch failed; the rest were processed.
    static let partialFailure = ExitCode(1)
    /// The command line was wrong (ArgumentParser's validation failure).
    static let usage = ExitCode.validationFailure
    /// No catalog, or no input file, at the location given (EX_NOINPUT): reading commands never create a catalog (`index`, `catalog migrate` and the vector-loading debug commands do).
    static let noInput = ExitCode(66)
    /// An input is not a usable image (EX_DATAERR).
    static let dataError = ExitCode(65)
    /// A file could not be read or written (EX_IOERR).
    static let ioError = ExitCode(74)

    /// A remote service could not be reached or failed (EX_UNAVAILABLE).
    static let unavailable = ExitCode(69)
    /// A remote service answered with something that is not its protocol (EX_PROTOCOL).
    static let protocolError = ExitCode(76)
    /// A remote service refused the credentials (EX_NOPERM).
    static let permission = ExitCode(77)

    /// The learned similarity model (or ONNX Runtime) is not installed (EX_CONFIG): `vsearch model install` fixes it.
    static let modelMissing = ExitCode(78)

    /// Stopped by SIGINT/SIGTERM after finishing the work in progress (128 + SIGINT).
    static let interrupted = ExitCode(130)

    /// The exit code for a VisualSearch error.
    static func code(for error: VisualSearchError) -> ExitCode {
        switch error {
        case .invalidParameter, .unknownField: usage
        case .imageNotFound, .invalidMetadata: dataError
        case .fetch(_, let reason): reason.hasPrefix("HTTP ") ? dataError : unavailable
        case .image(let error): code(for: error)
        case .catalogNotFound: noInput
        case .catalog, .storage: ioError
        case .unavailable, .overloaded: unavailable
        case .learnedModel(let problem, _):
            switch problem {
            case .missing: modelMissing
            case .damaged: ioError
            case .mismatch, .notIndexed: dataError
            }
        }
    }

    /// The exit code for a backup error: a missing pg_dump is EX_UNAVAILABLE
    /// ("a support program does not exist"), an existing destination or one of the catalog's own files a usage error.
    static func code(for error: BackupError) -> ExitCode {
        switch error {
        case .destinationExists, .destinationIsCatalogFile: usage
        case .toolMissing: unavailable
        case .destination, .toolFailed, .copy, .verification: ioError
        case .catalog(let error): code(for: VisualSearchError(error))
        }
    }

    /// The exit code for a client error.
    static func code(for error: ClientError) -> ExitCode {
        switch error {
        case .transport, .timeout, .cancelled: unavailable
        case .http(let status, _, _) where status == 401 || status == 403: permission
        case .http(let status, _, _) where status >= 500: unavailable
        case .http, .api: dataError
        case .decoding, .responseTooLarge: protocolError
        case .invalidRequest: usage
        }
    }

    /// The exit code for an ImageOps error.
    static func code(for error: ImageOpsError) -> ExitCode {
        switch error {
        case .io(let path, _) where !FileManager.default.fileExists(atPath: path): noInput
        case .io: ioError
        case .invalidParameter, .invalidBox: usage
        default: dataError
        }
    }
}
