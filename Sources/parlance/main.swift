import Foundation
import ParlanceCLI

/// `parlance --stdio …` serves JSON-RPC; `parlance COMMAND …` does one job from the shell.
/// See `parlance --help`, and ParlanceCLI for both.
exit(await CLI.main(CommandLine.arguments))
