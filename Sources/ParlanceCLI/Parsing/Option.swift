import ParlanceJSON

/// One command-line option. Every option is one of these, wherever it comes from: the
/// daemon's table (DaemonOptions), a command's method, derived from its params schema
/// (MethodOptions), or a command's own (`--json`, chat's `--schema`). Parsing runs its
/// `set`; `--help`, the man page and the bash, zsh and fish completions print its name,
/// value, kind and help. One value for both, so they cannot drift.
struct Option: Sendable {
    /// `--max-tokens`.
    let name: String
    /// The value's name in help (`N`, `PATH`); nil: a switch, which takes none.
    let value: String?
    /// What a shell completes the value to.
    let kind: ValueKind
    let help: String
    /// What a switch makes of a value written into it (`--name=x`); an option that takes a
    /// value takes it either way.
    let inline: Inline
    /// Sets what the option decides, from its value ("" for a switch).
    let set: @Sendable (inout OptionValues, String) throws -> Void
    /// `--no-NAME`, for the options that have it (a method's booleans): sets it false.
    let negate: (@Sendable (inout OptionValues) -> Void)?

    /// A switch given a value (`--name=x`), as each kind of switch has always read it.
    enum Inline: Sendable {
        /// An error: `--name takes no value` (the daemon's switches).
        case refused
        /// The value is ignored (a method's booleans, a command's own switches).
        case ignored
        /// The word is not this option (`--json` and `--stdio` are only ever the bare word).
        case unmatched
    }

    init(_ name: String, _ value: String?, _ kind: ValueKind, _ help: String, inline: Inline = .ignored,
         negate: (@Sendable (inout OptionValues) -> Void)? = nil, set: @escaping @Sendable (inout OptionValues, String) throws -> Void) {
        self.name = name
        self.value = value
        self.kind = value == nil ? .none : kind
        self.help = help
        self.inline = inline
        self.negate = negate
        self.set = set
    }

    /// `--json`: every command prints its method's result as JSON-RPC returns it.
    static let json = Option("--json", nil, .none, "print the method's result exactly as JSON-RPC returns it", inline: .unmatched) { v, _ in
        v.json = true
    }

    /// `--strict`: a result that did not pass its checks exits with `CLI.notPassed` (3).
    static let strict = Option("--strict", nil, .none, "exit 3 when a result did not pass its checks (it is printed, and what failed is said on stderr, either way)") { v, _ in
        v.strict = true
    }

    /// A command's own option: its value is kept by name for the command to read (`Invocation.own`).
    static func own(_ name: String, _ value: String?, _ kind: ValueKind, _ help: String) -> Option {
        Option(name, value, kind, help) { $0.own[name] = $1 }
    }
}

/// How a shell completes an option's value.
enum ValueKind: Equatable, Sendable {
    case none, file, directory, text
    case choices([String])
}

/// What the options of one command line set.
struct OptionValues: Sendable {
    /// The daemon's settings: models, engine, caches, logging.
    var settings: DaemonSettings
    /// The command's method's params.
    var params = JSONObject()
    /// A command's own options, by name, as written.
    var own: [String: String] = [:]
    var json = false
    var strict = false
    var stdio = false
}

/// A usage error: the message, then exit 2.
public struct UsageError: Error, CustomStringConvertible, Sendable {
    public let description: String
    public let command: String?
    init(_ message: String, command: String? = nil) {
        description = message
        self.command = command
    }
}
