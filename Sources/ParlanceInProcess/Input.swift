import Foundation
import ParlanceProtocol

/// FILE arguments (a command's, an MCP tool's `path`): a path, or - for stdin.
public enum Input {
    public static func read(_ path: String) throws -> String {
        if path == "-" {
            let data = FileHandle.standardInput.readDataToEndOfFile()
            return String(decoding: data, as: UTF8.self)
        }
        var isDir: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDir) else { throw InputError("\(path): no such file") }
        guard !isDir.boolValue else { throw InputError("\(path): is a directory") }
        guard let data = FileManager.default.contents(atPath: path) else { throw InputError("\(path): cannot be read") }
        return String(decoding: data, as: UTF8.self)
    }
}

/// A file that cannot be read (exit 1).
public struct InputError: Error, CustomStringConvertible {
    public let description: String
    public init(_ d: String) { description = d }
}

/// The analyses both front ends offer, each by its command-line word (`parlance analyze
/// worth-it`); `parlance mcp`'s analyze tool names them as their methods do (`worthIt`).
public enum AnalysisKinds {
    public static let all: [(word: String, method: any RPCMethod.Type)] = [
        ("tags", AnalyzeTags.self), ("entities", AnalyzeEntities.self), ("highlights", AnalyzeHighlights.self),
        ("content", AnalyzeContent.self), ("worth-it", AnalyzeWorthIt.self), ("chapters", AnalyzeChapters.self),
    ]
}
