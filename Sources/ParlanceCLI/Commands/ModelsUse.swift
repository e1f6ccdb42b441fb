import Foundation
import ParlanceJSON
import ParlanceProtocol

/// `parlance models use NAME`: makes NAME the default model in the user's config file
/// (`--config PATH`, else `$XDG_CONFIG_HOME/parlance/config.json`), creating the file when
/// it is missing and keeping every other setting in it. The name is checked first, as a
/// request would use it: a registry name, a store name on disk, or a GGUF path.
enum ModelsUse {
    static func run(_ name: String, _ inv: Invocation) async throws -> Int32 {
        let status = try await inv.session.request(ModelStatus.name, JSONObject([("model", .string(name))]), progress: false)
        if status["availability"]?.stringValue == "unavailable" {
            throw UsageError("cannot use '\(name)': \(status["message"]?.stringValue ?? "unavailable")", command: "models")
        }
        let settings = inv.session.settings
        let path = settings.configPath ?? settings.defaultConfigPath
        var file = JSONObject()
        if let data = FileManager.default.contents(atPath: path) {
            guard let v = try? JSONParser.parse(Array(data)), let o = v.objectValue else {
                throw UsageError("config file \(path) is not a JSON object; not changed", command: "models")
            }
            file = o
        }
        let previous = file["defaultModel"]?.stringValue
        file["defaultModel"] = .string(name)
        do {
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            // Written beside it, then renamed: a crash never leaves half a config file.
            let tmp = path + ".tmp-\(getpid())"
            try Data((JSONValue.object(file).serialized(pretty: true) + "\n").utf8).write(to: URL(fileURLWithPath: tmp))
            guard rename(tmp, path) == 0 else { throw UsageError("cannot write \(path): \(String(cString: strerror(errno)))") }
        } catch let e as UsageError { throw e } catch {
            throw UsageError("cannot write \(path): \(error.localizedDescription)", command: "models")
        }
        let t = inv.session.terminal
        if inv.json {
            t.out(JSONValue.object(["configFile": .string(path), "defaultModel": .string(name), "previous": previous.map { .string($0) } ?? .null]).serialized() + "\n")
        } else {
            t.out("default model: \(name)" + (previous.map { " (was \($0))" } ?? "") + "\nwritten to \(path)\n")
        }
        return 0
    }
}
