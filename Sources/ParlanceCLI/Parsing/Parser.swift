/// Reads command lines against lists of options. Where two options share a name, the
/// first in the list wins: `--json`, a command's own, its method's, then the daemon's.
enum Parser {
    /// `parlance --stdio [options]`: the daemon's settings.
    static func daemon(_ settings: DaemonSettings, _ args: [String]) throws -> DaemonSettings {
        var values = OptionValues(settings: settings)
        var i = 0
        while i < args.count {
            guard try take([DaemonOptions.stdio] + DaemonOptions.all, args, &i, into: &values) else {
                throw UsageError(args[i].hasPrefix("-") ? "unknown argument '\(args[i])'" : "unknown command '\(args[i])' (commands: \(Command.all.map(\.name).joined(separator: ", ")))")
            }
        }
        guard values.stdio else { throw UsageError("nothing to do: pass --stdio to serve, or a command (\(Command.all.map(\.name).joined(separator: ", ")))") }
        return values.settings
    }

    /// A command's arguments and options; nil when they ask for its help (`--help`, `-h`).
    static func command(_ command: Command, _ settings: DaemonSettings, _ args: [String]) throws -> (positionals: [String], values: OptionValues)? {
        var values = OptionValues(settings: settings)
        var positionals: [String] = []
        let options = command.options + DaemonOptions.all
        var i = 0
        var onlyPositionals = false
        while i < args.count {
            let a = args[i]
            if onlyPositionals || a == "-" || !a.hasPrefix("-") { positionals.append(a); i += 1; continue }
            if a == "--" { onlyPositionals = true; i += 1; continue }
            if a == "--help" || a == "-h" { return nil }
            do {
                if try take(options, args, &i, into: &values) { continue }
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
        return (positionals, values)
    }

    /// Applies the option at `args[i]` (and its value) when one of `options` has its name,
    /// or has it as `--no-NAME`; false when none does.
    static func take(_ options: [Option], _ args: [String], _ i: inout Int, into values: inout OptionValues) throws -> Bool {
        let (name, inline) = split(args[i])
        for option in options {
            if let negate = option.negate, name == "--no-" + option.name.dropFirst(2) {
                negate(&values)
                i += 1
                return true
            }
            guard option.name == name else { continue }
            var v = ""
            if let valueName = option.value {
                if let inline { v = inline } else {
                    guard i + 1 < args.count else { throw UsageError("\(name) needs a value (\(valueName))") }
                    i += 1
                    v = args[i]
                }
            } else if inline != nil {
                switch option.inline {
                case .refused: throw UsageError("\(name) takes no value")
                case .unmatched: continue
                case .ignored: break
                }
            }
            try option.set(&values, v)
            i += 1
            return true
        }
        return false
    }

    /// `--flag=value` → ("--flag", "value").
    static func split(_ a: String) -> (String, String?) {
        guard a.hasPrefix("--"), let eq = a.firstIndex(of: "=") else { return (a, nil) }
        return (String(a[..<eq]), String(a[a.index(after: eq)...]))
    }

    /// True when `word` at its first place is the value of the daemon option before it
    /// (`--model summarize`), so not a command.
    static func isOptionValue(_ args: [String], _ word: String) -> Bool {
        guard let i = args.firstIndex(of: word), i > 0 else { return false }
        let (prev, inline) = split(args[i - 1])
        return inline == nil && DaemonOptions.all.contains { $0.name == prev && $0.value != nil }
    }
}
