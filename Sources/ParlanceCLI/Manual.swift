import ParlanceEngine
import ParlanceServer

/// `--help`, each command's `--help`, the man page and the bash, zsh and fish completions,
/// all generated from the command table and the flag tables, so they cannot drift.
enum Manual {
    struct Entry {
        let name: String
        let value: String?
        let kind: ValueKind
        let help: String
    }

    static var daemonFlags: [Entry] { DaemonSettings.flags.map { Entry(name: $0.name, value: $0.value, kind: $0.kind, help: $0.help) } }

    static func entries(_ c: Command) -> [Entry] {
        [Entry(name: "--json", value: nil, kind: .none, help: "print the method's result exactly as JSON-RPC returns it")]
            + c.extra.map { Entry(name: $0.name, value: $0.value, kind: $0.kind, help: $0.help) }
            + c.flags.map { Entry(name: $0.name, value: $0.value, kind: $0.kind, help: $0.help + ($0.type == "boolean" ? " (--no-\($0.name.dropFirst(2)) for false)" : "")) }
    }

    static func line(_ e: Entry) -> String {
        let head = "  " + e.name + (e.value.map { " " + $0 } ?? "")
        return (head.count < 28 ? head.padding(toLength: 28, withPad: " ", startingAt: 0) : head + "\n" + String(repeating: " ", count: 28)) + e.help
    }

    static var usage: String {
        """
        parlance \(Server.version): a private, local language model for editors, scripts and the shell.

        usage: parlance COMMAND [OPTIONS] [ARGS]      one job from the shell
               parlance --stdio [OPTIONS]             serve JSON-RPC 2.0 on stdin/stdout (LSP framing or NDJSON, auto-detected)
               parlance --print-spec | --print-man | --print-completion bash|zsh|fish | --version | --help

        commands:
        \(Command.all.map { "  " + $0.name.padding(toLength: 12, withPad: " ", startingAt: 0) + $0.summary }.joined(separator: "\n"))

        FILE may be - for stdin; SRT, WebVTT and plain text are detected. On a terminal, long work shows a
        progress bar on stderr; piped, output is plain. Exit status: 0 success, 1 a failed request (its
        message and data on stderr), 2 a usage error, 130 interrupted. 'parlance COMMAND --help' for more.

        options (the daemon's and every command's):
        \(daemonFlags.map(line).joined(separator: "\n"))

        On this machine --threads defaults to \(MachineDefaults.threads).
        """
    }

    static func help(_ c: Command) -> String {
        """
        usage: parlance \(c.name) \(c.synopsis)

        \(c.summary). \(c.details)

        options:
        \(entries(c).map(line).joined(separator: "\n"))

        The daemon's options (--model, --config, --ctx, --threads, ...) apply too: see 'parlance --help'.
        """
    }

    // MARK: man page

    static func roff(_ s: String) -> String {
        s.replacingOccurrences(of: "\\", with: "\\e").replacingOccurrences(of: "-", with: "\\-")
            .split(separator: "\n", omittingEmptySubsequences: false).map { $0.hasPrefix(".") || $0.hasPrefix("'") ? "\\&" + $0 : String($0) }
            .joined(separator: "\n")
    }

    static func manFlag(_ e: Entry) -> String {
        ".TP\n.B \(roff(e.name))" + (e.value.map { " \" \(roff($0))\"" }.map { $0.replacingOccurrences(of: "\" \"", with: "\" \"") } ?? "") + "\n\(roff(e.help))\n"
    }

    static func man() -> String {
        var s = """
        .TH PARLANCE 1 "" "parlance \(Server.version)" "User Commands"
        .SH NAME
        parlance \\- a private, local language model for editors, scripts and the shell
        .SH SYNOPSIS
        .B parlance
        .I COMMAND
        [\\fIOPTIONS\\fR] [\\fIARGS\\fR]
        .br
        .B parlance \\-\\-stdio
        [\\fIOPTIONS\\fR]
        .SH DESCRIPTION
        Parlance runs GGUF language models through llama.cpp on this machine. With \\fB\\-\\-stdio\\fR it serves
        JSON\\-RPC 2.0 on standard input and output (LSP framing or one JSON object per line), for editors and
        programs. With a command it does one job from the shell, through the same code in the same process.
        FILE may be \\fB\\-\\fR for standard input; SRT, WebVTT and plain text are detected.
        On a terminal, long work shows a progress bar on standard error; piped, output is plain.
        .SH COMMANDS

        """
        for c in Command.all {
            s += ".SS \"\(roff(c.name)) \(roff(c.synopsis))\"\n\(roff(c.summary)). \(roff(c.details))\n"
            for e in entries(c) { s += manFlag(e) }
        }
        s += ".SH OPTIONS\nThe daemon's options; every command takes them too.\n"
        s += manFlag(Entry(name: "--stdio", value: nil, kind: .none, help: "serve JSON-RPC 2.0 on stdin/stdout"))
        for e in daemonFlags { s += manFlag(e) }
        s += """
        .SH EXIT STATUS
        0 on success; 1 when a request failed (its message and data are printed on standard error) or a file
        could not be read; 2 on a usage error; 130 when interrupted.
        .SH ENVIRONMENT
        .TP
        .B PARLANCE_MODEL
        a model, as \\fB\\-\\-model\\fR gives it.
        .TP
        .B PARLANCE_LOG_LEVEL\\fR, \\fBPARLANCE_LOG_FILE\\fR, \\fBPARLANCE_CACHE_DIR\\fR, \\fBPARLANCE_DATA_DIR
        as the options of the same names.
        .SH FILES
        .TP
        .I PREFIX/share/parlance/models/\(DefaultModel.fileName)
        the default model, found beside the installed binary.
        .TP
        .I $XDG_CONFIG_HOME/parlance/config.json
        models, routes, keep\\-alive and memory budget.
        .SH EXAMPLES
        .nf
        parlance summarize talk.srt
        parlance ask talk.srt "What did they decide about the launch?"
        parlance rewrite \\-\\-tone formal \\-\\-tone casual "we're moving the review to friday"
        parlance analyze entities talk.vtt \\-\\-json
        .fi

        """
        return s
    }

    // MARK: completions

    static func completion(_ shell: String) -> String? {
        switch shell {
        case "bash": return bash()
        case "zsh": return zsh()
        case "fish": return fish()
        default: return nil
        }
    }

    static func words(_ kind: ValueKind) -> String? {
        if case .choices(let c) = kind { return c.joined(separator: " ") }
        return nil
    }

    static func bash() -> String {
        let commands = Command.all.map(\.name).joined(separator: " ")
        let global = (["--stdio", "--help", "--version", "--print-spec"] + daemonFlags.map(\.name)).joined(separator: " ")
        var valueCases = ""
        for e in daemonFlags + Command.all.flatMap(entries) where e.value != nil {
            let action: String
            switch e.kind {
            case .file: action = "COMPREPLY=($(compgen -f -- \"$cur\"))"
            case .directory: action = "COMPREPLY=($(compgen -d -- \"$cur\"))"
            case .choices(let c): action = "COMPREPLY=($(compgen -W \"\(c.joined(separator: " "))\" -- \"$cur\"))"
            default: action = "COMPREPLY=()"
            }
            valueCases += "        \(e.name)) \(action); return ;;\n"
        }
        var commandCases = ""
        for c in Command.all {
            let negated = c.flags.filter { $0.type == "boolean" }.map { "--no-" + $0.name.dropFirst(2) }
            let flags = (entries(c).map(\.name) + negated + ["--help"] + daemonFlags.map(\.name)).joined(separator: " ")
            let positional: String
            switch c.positionalKind {
            case .file: positional = "COMPREPLY=($(compgen -f -- \"$cur\"))"
            case .choices(let w): positional = "COMPREPLY=($(compgen -W \"\(w.joined(separator: " "))\" -- \"$cur\")); [ ${#COMPREPLY[@]} -eq 0 ] && COMPREPLY=($(compgen -f -- \"$cur\"))"
            default: positional = "COMPREPLY=()"
            }
            commandCases += "        \(c.name)) if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \"\(flags)\" -- \"$cur\")); else \(positional); fi ;;\n"
        }
        return """
        # bash completion for parlance (generated by parlance --print-completion bash)
        _parlance() {
            local cur prev cmd i
            cur=${COMP_WORDS[COMP_CWORD]}
            prev=${COMP_WORDS[COMP_CWORD-1]}
            case $prev in
        \(valueCases)    esac
            cmd=
            for ((i = 1; i < COMP_CWORD; i++)); do
                case ${COMP_WORDS[i]} in \(Command.all.map(\.name).joined(separator: "|"))) cmd=${COMP_WORDS[i]}; break ;; esac
            done
            case $cmd in
                "") COMPREPLY=($(compgen -W "\(commands) \(global)" -- "$cur")) ;;
        \(commandCases)    esac
        }
        complete -o filenames -F _parlance parlance

        """
    }

    static func zshQuote(_ s: String) -> String {
        s.replacingOccurrences(of: "'", with: "'\\''").replacingOccurrences(of: "[", with: "\\[").replacingOccurrences(of: "]", with: "\\]")
            .replacingOccurrences(of: ":", with: "\\:")
    }

    static func zshSpec(_ e: Entry) -> String {
        let help = zshQuote(String(e.help.prefix(70)))
        guard let v = e.value else { return "'\(e.name)[\(help)]'" }
        let action: String
        switch e.kind {
        case .file: action = "_files"
        case .directory: action = "_files -/"
        case .choices(let c): action = "(\(c.joined(separator: " ")))"
        default: action = " "
        }
        return "'\(e.name)=[\(help)]:\(zshQuote(v)):\(action)'"
    }

    static func zsh() -> String {
        var s = """
        #compdef parlance
        # zsh completion for parlance (generated by parlance --print-completion zsh)
        _parlance() {
          local -a commands daemon
          commands=(
        \(Command.all.map { "    '\($0.name):\(zshQuote($0.summary))'" }.joined(separator: "\n"))
          )
          daemon=(
        \(daemonFlags.map { "    " + zshSpec($0) }.joined(separator: "\n"))
          )
          if (( CURRENT == 2 )); then
            _describe -t commands 'parlance command' commands
            _arguments '--stdio[serve JSON-RPC on stdin/stdout]' '--help[show help]' '--version[show the version]' $daemon
            return
          fi
          case $words[2] in

        """
        for c in Command.all {
            let positional: String
            switch c.positionalKind {
            case .file: positional = "'*:file:_files'"
            case .choices(let w): positional = "'1:kind:(\(w.joined(separator: " ")))' '*:file:_files'"
            default: positional = "'*:argument: '"
            }
            s += "    \(c.name)) _arguments $daemon \(entries(c).map(zshSpec).joined(separator: " ")) \(positional) ;;\n"
        }
        s += "    --stdio) _arguments $daemon ;;\n  esac\n}\n_parlance \"$@\"\n"
        return s
    }

    static func fish() -> String {
        var s = "# fish completion for parlance (generated by parlance --print-completion fish)\n"
        let names = Command.all.map(\.name).joined(separator: " ")
        s += "complete -c parlance -f\n"
        for c in Command.all {
            s += "complete -c parlance -n 'not __fish_seen_subcommand_from \(names)' -a \(c.name) -d '\(fishQuote(c.summary))'\n"
        }
        s += "complete -c parlance -n 'not __fish_seen_subcommand_from \(names)' -l stdio -d 'serve JSON-RPC on stdin/stdout'\n"
        func flag(_ e: Entry, _ condition: String) -> String {
            var line = "complete -c parlance \(condition) -l \(e.name.dropFirst(2)) -d '\(fishQuote(String(e.help.prefix(70))))'"
            switch e.kind {
            case .file, .directory: line += " -r -F"
            case .choices(let c): line += " -x -a '\(c.joined(separator: " "))'"
            case .text: line += " -x"
            case .none: break
            }
            return line + "\n"
        }
        for e in daemonFlags { s += flag(e, "") }
        for c in Command.all {
            for e in entries(c) { s += flag(e, "-n '__fish_seen_subcommand_from \(c.name)'") }
            switch c.positionalKind {
            case .file: s += "complete -c parlance -n '__fish_seen_subcommand_from \(c.name)' -F\n"
            case .choices(let w): s += "complete -c parlance -n '__fish_seen_subcommand_from \(c.name)' -a '\(w.joined(separator: " "))'\n"
            default: break
            }
        }
        return s
    }

    static func fishQuote(_ s: String) -> String { s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") }
}
