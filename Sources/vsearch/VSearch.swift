import ArgumentParser
import Foundation
import ImageOps
import VisualSearch

/// The `vsearch` command line.
@main
struct VSearch: AsyncParsableCommand {
    static let version = VSearchVersion.current

    static let configuration = CommandConfiguration(
        commandName: "vsearch",
        abstract: "Visual search toolkit: thumbnails, upload preparation and a local ViSearch-compatible search engine.",
        discussion: """
        Examples:
          vsearch thumbs photos/ thumbs/        400/800/1200/1600 px thumbnails
          vsearch prepare photo.jpg upload.jpg --box 10,10,300,400
          vsearch info photo.jpg                what a file is and whether it decodes
          vsearch index corpus/images --metadata corpus/catalog.csv
          vsearch search --image photo.jpg --fq category:food --fl brand
          vsearch model install                 the learned model (similarity by kind)
          vsearch similar chelsea_cat
          vsearch similar chelsea_cat --similarity color
          vsearch recommend chelsea_cat
          vsearch color c45b3b                  (or vsearch colour c45b3b)
          vsearch discover --image photo.jpg --point 120,80
          vsearch product search --image photo.jpg
          vsearch serve --port 8080             a local ViSearch-compatible server
          vsearch similar chelsea_cat --endpoint http://127.0.0.1:8080
          vsearch insert dress_1=https://cdn.example/dress_1.jpg \\
            --endpoint http://127.0.0.1:8080 --wait
          vsearch track product_click --query-id R --pid P --im-url U --pos 1 \\
            --endpoint http://127.0.0.1:8080
          vsearch events stats --since 24h      clicks, CTR and conversion

        Exit codes: 0 success, 1 some inputs failed, 64 usage error, 65 bad input or rejected request, \
        66 no catalog or no input file there (reading commands never create one; `index` does), 69 service unavailable, \
        74 I/O error, 76 protocol error, 77 credentials refused, 78 learned model not installed, 130 interrupted.
        """,
        version: "vsearch \(version) (libjpeg-turbo \(ImageOpsLibraries.libjpegTurbo), libdeflate \(ImageOpsLibraries.libdeflate))",
        subcommands: [ThumbsCommand.self, PrepareCommand.self, InfoCommand.self, IndexCommand.self, SearchCommand.self,
                      SimilarCommand.self, RecommendCommand.self, ColorCommand.self, DiscoverCommand.self, ProductCommand.self,
                      InsertCommand.self, InsertStatusCommand.self, RemoveCommand.self, CatalogCommand.self, ServeCommand.self,
                      ModelCommand.self, TrackCommand.self, EventsCommand.self, DebugCommand.self]
    )

    static func main() async {
        Allocator.tuneForImageWork()
        let arguments = Array(CommandLine.arguments.dropFirst())
        if let help = DefaultSubcommandHelp.message(for: arguments, root: Self.self) {
            Terminal.out(help)
            return
        }
        // An unknown command or option is named with the nearest known one before ArgumentParser parses.
        if let message = CommandSuggestion.problem(in: arguments, root: Self.self) {
            Terminal.err("error: \(message)\n")
            Self.exit(withError: ExitCodes.usage)
        }
        await main(nil)
    }
}
