#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch
import Foundation
import JSONRPC
import ParlanceEngine
import ParlanceFeatures
import ParlanceInProcess
import ParlanceJSON
import ParlanceServer

/// `parlance`: the daemon (`--stdio`) and the command line, parsed from one kind of option
/// (Parsing/Option.swift). Exit codes: 0 success, 1 a failed request (its message and data
/// on stderr), 2 a usage error, 3 with `--strict` a result that did not pass its checks,
/// 130 interrupted.
public enum CLI {
    /// The exit code of `--strict` when a result did not pass its checks.
    static let notPassed: Int32 = 3

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
                case "--print-checks":
                    // The ids PARLANCE_DISABLE_CHECKS takes, for the eval's ablation (`Ablation`).
                    for (id, what) in Ablation.known.sorted(by: { $0.key < $1.key }) { print(id.padding(toLength: 22, withPad: " ", startingAt: 0) + what) }
                    return 0
                case "--print-formality":
                    // The daemon's own formality score (`Formality.score`) of each stdin line,
                    // {"text": …, "language": …} as NDJSON, one score per line: the eval scores
                    // its peer's rewrites with it, so no port of the scorer's word lists exists.
                    return FormalityLines.run()
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
            if let i = args.firstIndex(where: { !$0.hasPrefix("-") && Command.named($0) != nil && !Parser.isOptionValue(args, $0) }) {
                command = Command.named(args[i])
                args.remove(at: i)
            }
            guard let command else { return try await daemon(settings, args) }
            // A command reports its own errors; the server's log says only our faults unless asked.
            if ProcessInfo.processInfo.environment["PARLANCE_LOG_LEVEL"] == nil { settings.logLevel = .fault }
            return try await run(command, settings, args)
        } catch let e as UsageError {
            let cmd = e.command ?? command?.name
            FileHandle.standardError.write(Data("parlance: \(e.description)\nTry 'parlance \(cmd.map { "\($0) " } ?? "")--help'.\n".utf8))
            return 2
        } catch {
            FileHandle.standardError.write(Data("parlance: \(error)\n".utf8))
            return 1
        }
    }

    /// `parlance --stdio [options]`: serve JSON-RPC on stdin/stdout.
    static func daemon(_ settings: DaemonSettings, _ args: [String]) async throws -> Int32 {
        await Daemon.serve(try Parser.daemon(settings, args))
    }

    /// `parlance COMMAND [options] [args]`: parse, run, report; the command's server (in
    /// this process, started on its first request) finishes before it returns.
    static func run(_ command: Command, _ settings: DaemonSettings, _ args: [String]) async throws -> Int32 {
        guard let (positionals, values) = try Parser.command(command, settings, args) else {
            print(Manual.help(command))
            return 0
        }
        let session = CLISession(settings: values.settings)
        let inv = Invocation(command: command.name, positionals: positionals, params: values.params, own: values.own, json: values.json,
                             strict: values.strict, session: session)
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
