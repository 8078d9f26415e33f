import ArgumentParser
import ImageOps
import SearchEngine
import Tracking
import VisualSearch

/// The one place errors become what the user sees: a line on stderr
/// (`error: …`, saying what to do where we can) and an exit code. A message
/// of the engine, a service or the collector may quote what was sent (an
/// `im_name`, an event field): it is escaped whole (``TerminalText``), so a
/// line break in it cannot print a line of its own.
enum CLIError {
    /// An engine error in the command line's words: a missing catalog says how to make one here.
    static func message(for error: VisualSearchError) -> String {
        if case .catalogNotFound(let location) = error {
            return "no catalog at \(location); create one with `vsearch index IMAGES_DIR --catalog \(location)`, or point --catalog "
                + "(or $VSEARCH_CATALOG) at an existing one"
        }
        return error.description
    }

    /// The error as the engine would answer it: a store's failure in the engine's words (``VisualSearchError/init(_:)``).
    static func searchError(_ error: any Error) -> VisualSearchError? {
        (error as? VisualSearchError) ?? (error as? CatalogStoreError).map(VisualSearchError.init)
    }

    /// Prints the error and returns the exit code to throw.
    static func report(_ error: any Error) -> ExitCode {
        switch error {
        case let code as ExitCode: return code
        case let error as InputError:
            Terminal.err("error: \(error.description)\n")
            return error.exitCode
        case let error as VisualSearchError:
            Terminal.err("error: \(TerminalText.escaped(message(for: error)))\n")
            return ExitCodes.code(for: error)
        case let error as CatalogStoreError:
            return report(VisualSearchError(error))
        case let error as ClientError:
            Terminal.err("error: \(TerminalText.escaped(error.description))\n")
            return ExitCodes.code(for: error)
        case let error as ImageOpsError:
            Terminal.err("error: \(error.description)\n")
            return ExitCodes.code(for: error)
        case let error as EmbeddingError:
            Terminal.err("error: \(error.description)\n")
            return ExitCodes.code(for: error.searchError)
        case let error as BackupError:
            Terminal.err("error: \(error.description)\n")
            return ExitCodes.code(for: error)
        case let error as TrackingError:
            Terminal.err("error: \(TerminalText.escaped(error.description))\n")
            return ExitCodes.ioError
        default:
            Terminal.err("error: \(error)\n")
            return ExitCode.failure
        }
    }
}
