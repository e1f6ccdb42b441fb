#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation
import JSONRPC
import ParlanceEngine
import ParlanceJSON
import ParlanceServer

/// `parlance`: the daemon (`--stdio`) and the command line, parsed from one table of
/// flags. Exit codes: 0 success, 1 a failed request (its message and data on stderr), 2 a
/// usage error, 130 interrupted.
public enum CLI {
    public static func main(_ arguments: [String]) async -> Int32 {
        ProcessMemory.tune()  // first: few malloc arenas, so freed memory is reused across threads
        var settings = DaemonSettings(env: ProcessInfo.processInfo.environment)
        var args = Array(arguments.dropFirst())
        var command: Command? = nil
        do {
            // Daemon-only words first: they stand alone.
            if let first = args.first {
                switch first {
                case "--print-spec": print(Server.specText()); return 0
                case "--version", "-V": print("parlance \(Server.version)"); return 0
                case "--help", "-h", "help":
                    if first == "help", args.count > 1, let c = Command.named(args[1]) { print(Manual.help(c)) } else { print(Manual.usage) }
                    return 0
                case "--print-man": print(Manual.man(), terminator: ""); return 0
                case "--print-completion":
                    guard args.count == 2, let script = Manual.completion(args[1]) else {
                        throw UsageError("--print-completion takes bash, zsh or fish")
                    }
                    print(script, terminator: "")
                    return 0
                default: break
                }
            }
            if let i = args.firstIndex(where: { !$0.hasPrefix("-") && Command.named($0) != nil && !isFlagValue(args, $0) }) {
                command = Command.named(args[i])
                args.remove(at: i)
            }
            guard let command else { return try await daemon(&settings, args) }
            // A command reports its own errors; the server's log says only our faults unless asked.
            if ProcessInfo.processInfo.environment["PARLANCE_LOG_LEVEL"] == nil { settings.logLevel = .fault }
            return try await run(command, &settings, args)
        } catch let e as UsageError {
            let cmd = e.command ?? command?.name
            FileHandle.standardError.write(Data("parlance: \(e.description)\nTry 'parlance \(cmd.map { "\($0) " } ?? "")--help'.\n".utf8))
            return 2
        } catch {
            FileHandle.standardError.write(Data("parlance: \(error)\n".utf8))
            return 1
        }
    }

    /// True when `word` at its first place is the value of the flag before it (`--model summarize`).
    static func isFlagValue(_ args: [String], _ word: String) -> Bool {
        guard let i = args.firstIndex(of: word), i > 0 else { return false }
        let (prev, inline) = DaemonSettings.split(args[i - 1])
        return inline == nil && DaemonSettings.flags.contains { $0.name == prev && $0.value != nil }
    }

    /// `parlance --stdio [flags]`: serve JSON-RPC on stdin/stdout.
    static func daemon(_ settings: inout DaemonSettings, _ args: [String]) async throws -> Int32 {
        var stdio = false
        var i = 0
        while i < args.count {
            if args[i] == "--stdio" { stdio = true; i += 1; continue }
            guard try settings.take(args, &i) else {
                throw UsageError(args[i].hasPrefix("-") ? "unknown argument '\(args[i])'" : "unknown command '\(args[i])' (commands: \(Command.all.map(\.name).joined(separator: ", ")))")
            }
        }
        guard stdio else { throw UsageError("nothing to do: pass --stdio to serve, or a command (\(Command.all.map(\.name).joined(separator: ", ")))") }
        return await Daemon.serve(settings)
    }

    static func run(_ command: Command, _ settings: inout DaemonSettings, _ args: [String]) async throws -> Int32 {
        var positionals: [String] = []
        var params = JSONObject()
        var extra: [String: String] = [:]
        var json = false
        let flags = command.flags
        var i = 0
        var onlyPositionals = false
        while i < args.count {
            let a = args[i]
            if onlyPositionals || a == "-" || !a.hasPrefix("-") { positionals.append(a); i += 1; continue }
            if a == "--" { onlyPositionals = true; i += 1; continue }
            if a == "--help" || a == "-h" { print(Manual.help(command)); return 0 }
            if a == "--json" { json = true; i += 1; continue }
            let (name, inline) = DaemonSettings.split(a)
            if let x = command.extra.first(where: { $0.name == name }) {
                if x.value == nil { extra[name] = ""; i += 1; continue }
                guard let v = inline ?? (i + 1 < args.count ? args[i + 1] : nil) else { throw UsageError("\(name) needs a value (\(x.value!))", command: command.name) }
                extra[name] = v
                i += inline == nil ? 2 : 1
                continue
            }
            do {
                if try MethodFlag.take(flags, args, &i, into: &params) { continue }
                if try settings.take(args, &i) { continue }
            } catch let e as UsageError {
                throw UsageError(e.description, command: command.name)
            }
            throw UsageError("unknown option '\(a)' for \(command.name)", command: command.name)
        }
        guard command.positionals.contains(positionals.count) else {
            let r = command.positionals
            let takes = r.lowerBound == r.upperBound ? "\(r.lowerBound)" : r.lowerBound == 0 ? "at most \(r.upperBound)" : "\(r.lowerBound) to \(r.upperBound)"
            throw UsageError("\(command.name) takes \(takes) argument\(r.upperBound == 1 ? "" : "s") (usage: parlance \(command.name) \(command.synopsis)), got \(positionals.count)", command: command.name)
        }
        let session = CLISession(settings: settings)
        let inv = Invocation(command: command.name, positionals: positionals, params: params, extra: extra, json: json, session: session)
        let code: Int32
        do {
            code = try await command.run(inv)
        } catch let f as RequestFailure {
            await session.close()
            return report(f, session.terminal, command: command.name)
        } catch let e as InputError {
            await session.close()
            session.terminal.err("parlance: \(e.description)\n")
            return 1
        }
        await session.close()
        return code
    }

    /// A failed request: its message and data on stderr; 2 when our own arguments were
    /// invalid (-32602), 130 when Ctrl-C cancelled it, else 1.
    static func report(_ f: RequestFailure, _ t: Terminal, command: String) -> Int32 {
        if f.code == -32800 {
            t.err("parlance: cancelled\n")
            return 130
        }
        var s = "parlance: \(f.message) (error \(f.code))\n"
        if let d = f.data { s += "  data: \(d.serialized())\n" }
        if f.code == -32602 { s += "Try 'parlance \(command) --help'.\n" }
        t.err(s)
        return f.code == -32602 ? 2 : 1
    }
}
