import Foundation
import Subprocess
import ConcurrencyToolkit
#if canImport(System)
import System
#else
import SystemPackage
#endif

/// The one way the test suites run another program (`vsearch`, `vsearch
/// serve`, `python3`): through swift-subprocess, awaited — no thread is held
/// while a child runs — with stdout and stderr drained concurrently, so a
/// child that fills one pipe while the other is read never blocks, and with
/// no polling: a test that waits for a line of output awaits that line.
///
/// ```swift
/// let run = try await ChildProcess.run(binary, ["similar", "chelsea_cat", "--json"])
/// #expect(run.status == 0)
/// let outcome = try await ChildProcess.withRunning(binary, ["serve", "--port", "0"]) { child in
///     let line = try await child.line { $0.contains("listening on") }
///     …
///     child.signal(SIGTERM)
/// }
/// ```
public enum ChildProcess {
    /// How a child ended and what it printed.
    public struct Outcome: Sendable {
        /// The exit status, or 128 + the signal that ended it (as a shell reports it).
        public var status: Int32
        /// The signal that ended it; nil when it exited.
        public var signal: Int32?
        public var stdout: String
        public var stderr: String
    }

    /// The most a child may print on one stream (a test's child prints far less).
    public static let outputLimit = 256 << 20

    static func configuration(_ executable: String, _ arguments: [String], environment: [String: String],
                              directory: String?) -> Configuration {
        var updates: [Environment.Key: String?] = [:]
        for (key, value) in environment { updates[Environment.Key(stringLiteral: key)] = value }
        return Configuration(executable: .path(FilePath(executable)), arguments: Arguments(arguments),
                             environment: updates.isEmpty ? .inherit : .inherit.updating(updates),
                             workingDirectory: directory.map { FilePath($0) })
    }

    static func status(_ termination: TerminationStatus) -> (status: Int32, signal: Int32?) {
        switch termination {
        case .exited(let code): (Int32(code), nil)
        case .signaled(let signal): (128 + Int32(signal), Int32(signal))
        }
    }

    /// Runs `executable` to its end; `environment` adds to (or replaces in) this process's environment.
    public static func run(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                           directory: String? = nil) async throws -> Outcome {
        let result = try await Subprocess.run(configuration(executable, arguments, environment: environment, directory: directory),
                                              input: .none, output: .string(limit: outputLimit), error: .string(limit: outputLimit))
        let (status, signal) = status(result.terminationStatus)
        return Outcome(status: status, signal: signal, stdout: result.standardOutput, stderr: result.standardError)
    }

    /// Runs `executable` with a stdout nobody reads (`… | head -0`): the
    /// pipe's reading end is closed before the child starts, so its first
    /// write to stdout meets EPIPE.
    public static func runIntoClosedPipe(_ executable: String, _ arguments: [String]) async throws -> Outcome {
        var descriptors: [Int32] = [0, 0]
        guard pipe(&descriptors) == 0 else { throw POSIXError(.EMFILE) }
        close(descriptors[0])
        let result = try await Subprocess.run(configuration(executable, arguments, environment: [:], directory: nil), input: .none,
                                              output: .fileDescriptor(FileDescriptor(rawValue: descriptors[1]), closeAfterSpawningProcess: true),
                                              error: .string(limit: outputLimit))
        let (status, signal) = status(result.terminationStatus)
        return Outcome(status: status, signal: signal, stdout: "", stderr: result.standardError)
    }

    /// Runs `executable` to its end with stdout and stderr written to the
    /// files `stdout` and `stderr` (made or truncated): for a child that leaves
    /// a daemon behind (`pg_ctl start`), which would hold a pipe's write end
    /// open — and a reader waiting for its end — for as long as it runs.
    public static func runToFiles(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                                  stdout: String, stderr: String) async throws -> Outcome {
        let out = try FileDescriptor.open(FilePath(stdout), .writeOnly, options: [.create, .truncate], permissions: [.ownerReadWrite])
        let err = try FileDescriptor.open(FilePath(stderr), .writeOnly, options: [.create, .truncate], permissions: [.ownerReadWrite])
        let result = try await Subprocess.run(configuration(executable, arguments, environment: environment, directory: nil), input: .none,
                                              output: .fileDescriptor(out, closeAfterSpawningProcess: true),
                                              error: .fileDescriptor(err, closeAfterSpawningProcess: true))
        let (status, signal) = status(result.terminationStatus)
        return Outcome(status: status, signal: signal, stdout: (try? String(contentsOfFile: stdout, encoding: .utf8)) ?? "",
                       stderr: (try? String(contentsOfFile: stderr, encoding: .utf8)) ?? "")
    }

    /// Starts `executable`, runs `body` with it while both its streams are
    /// read line by line, then waits for it to end (`body` ends it, or it
    /// ends by itself) and returns `body`'s value and how the child ended.
    /// When `body` throws, the child is killed (SIGKILL) and the error rethrown.
    public static func withRunning<Value: Sendable>(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
                                                    directory: String? = nil,
                                                    _ body: (Running) async throws -> Value) async throws -> (Value, Outcome) {
        let result = try await Subprocess.run(configuration(executable, arguments, environment: environment, directory: directory),
                                              input: .none, output: .sequence, error: .sequence) { execution in
            let running = Running(processIdentifier: execution.processIdentifier.value)
            async let stdout: Void = running.drain(execution.standardOutput, into: .stdout)
            async let stderr: Void = running.drain(execution.standardError, into: .stderr)
            let value: Value
            do {
                value = try await body(running)
            } catch {
                running.signal(SIGKILL)
                _ = try? await (stdout, stderr)
                throw error
            }
            _ = try await (stdout, stderr)
            return (value, running)
        }
        let (value, running) = result.closureResult
        let (status, signal) = status(result.terminationStatus)
        return (value, Outcome(status: status, signal: signal, stdout: running.text(.stdout), stderr: running.text(.stderr)))
    }

    /// A child while it runs: what it has printed so far, a way to await a
    /// line, and signals.
    public final class Running: Sendable {
        public enum Stream: Sendable { case stdout, stderr }

        struct State {
            var lines: [Stream: [String]] = [.stdout: [], .stderr: []]
            var closed: Set<Stream> = []
            var signalled = false
            var waiters: [(stream: Stream, matches: @Sendable (String) -> Bool, continuation: CheckedContinuation<String, any Error>)] = []
        }

        /// The child's process id.
        public let processIdentifier: Int32
        let state = Locked(State())

        init(processIdentifier: Int32) {
            self.processIdentifier = processIdentifier
        }

        /// Sends `signal` to the child (nothing when it has ended and been reaped).
        public func signal(_ signal: Int32) {
            state.withLock { $0.signalled = true }
            kill(processIdentifier, signal)
        }

        /// Whether ``signal(_:)`` was called.
        public var wasSignalled: Bool { state.withLock { $0.signalled } }

        /// What the child printed on `stream` so far, one line per line.
        public func text(_ stream: Stream) -> String {
            state.withLock { $0.lines[stream, default: []].map { $0 + "\n" }.joined() }
        }

        /// Whether both streams have closed: the child has ended (or closed them).
        public var hasEnded: Bool { state.withLock { $0.closed.count == 2 } }

        /// The first line of `stream` (stderr by default) that `matches`,
        /// printed already or awaited; throws when the stream closes without one.
        public func line(on stream: Stream = .stderr, _ matches: @escaping @Sendable (String) -> Bool) async throws -> String {
            try await withCheckedThrowingContinuation { continuation in
                let found: Result<String, any Error>? = state.withLock { state in
                    if let line = state.lines[stream, default: []].first(where: matches) { return .success(line) }
                    if state.closed.contains(stream) { return .failure(Ended(stream: stream, printed: state.lines[stream, default: []])) }
                    state.waiters.append((stream, matches, continuation))
                    return nil
                }
                if let found { continuation.resume(with: found) }
            }
        }

        /// The error of ``line(on:_:)`` when the stream closed first.
        public struct Ended: Error, CustomStringConvertible {
            public let stream: Stream
            public let printed: [String]
            public var description: String { "the child closed its \(stream) without the awaited line; it printed:\n" + printed.joined(separator: "\n") }
        }

        func drain(_ sequence: SubprocessOutputSequence, into stream: Stream) async throws {
            defer { close(stream) }
            for try await line in sequence.strings() { append(line, to: stream) }
        }

        func append(_ line: String, to stream: Stream) {
            let ready: [(CheckedContinuation<String, any Error>, String)] = state.withLock { state in
                state.lines[stream, default: []].append(line)
                var ready: [(CheckedContinuation<String, any Error>, String)] = []
                state.waiters.removeAll { waiter in
                    guard waiter.stream == stream, waiter.matches(line) else { return false }
                    ready.append((waiter.continuation, line))
                    return true
                }
                return ready
            }
            for (continuation, line) in ready { continuation.resume(returning: line) }
        }

        func close(_ stream: Stream) {
            let waiting: [(CheckedContinuation<String, any Error>, Ended)] = state.withLock { state in
                state.closed.insert(stream)
                var waiting: [(CheckedContinuation<String, any Error>, Ended)] = []
                state.waiters.removeAll { waiter in
                    guard waiter.stream == stream else { return false }
                    waiting.append((waiter.continuation, Ended(stream: stream, printed: state.lines[stream, default: []])))
                    return true
                }
                return waiting
            }
            for (continuation, error) in waiting { continuation.resume(throwing: error) }
        }
    }
}
