import ParlanceEngine
import ParlanceServer

/// `--help`, each command's `--help` and the man page (and, in Completions.swift, the bash,
/// zsh and fish completions), all generated from the command table and its options, the
/// same values parsing reads, so they cannot drift.
enum Manual {
    static func line(_ e: Option) -> String {
        let head = "  " + e.name + (e.value.map { " " + $0 } ?? "")
        return (head.count < 28 ? head.padding(toLength: 28, withPad: " ", startingAt: 0) : head + "\n" + String(repeating: " ", count: 28)) + e.help
    }

    static var usage: String {
        """
        parlance \(Server.version): a private, local language model for editors, scripts and the shell.

        usage: parlance COMMAND [OPTIONS] [ARGS]      one job from the shell
               parlance --stdio [OPTIONS]             serve JSON-RPC 2.0 on stdin/stdout (LSP framing or NDJSON, auto-detected)
               parlance --print-spec | --print-man | --print-completion bash|zsh|fish | --print-checks | --print-formality | --version | --help

        commands:
        \(Command.all.map { "  " + $0.name.padding(toLength: 12, withPad: " ", startingAt: 0) + $0.summary }.joined(separator: "\n"))

        FILE may be - for stdin; SRT, WebVTT and plain text are detected. On a terminal, long work shows a
        progress bar on stderr; piped, output is plain. Exit status: 0 success, 1 a failed request (its
        message and data on stderr), 2 a usage error, 3 with --strict a result that did not pass its checks,
        130 interrupted. A result that did not pass its checks is printed, and what failed is said on stderr.
        'parlance COMMAND --help' for more.

        options (the daemon's and every command's):
        \(DaemonOptions.all.map(line).joined(separator: "\n"))

        On this machine --threads defaults to \(MachineDefaults.threads).
        """
    }

    static func help(_ c: Command) -> String {
        """
        usage: parlance \(c.name) \(c.synopsis)

        \(c.summary). \(c.details)

        options:
        \(c.options.map(line).joined(separator: "\n"))

        The daemon's options (--model, --config, --ctx, --threads, ...) apply too: see 'parlance --help'.
        """
    }

    // MARK: man page

    static func roff(_ s: String) -> String {
        s.replacingOccurrences(of: "\\", with: "\\e").replacingOccurrences(of: "-", with: "\\-")
            .split(separator: "\n", omittingEmptySubsequences: false).map { $0.hasPrefix(".") || $0.hasPrefix("'") ? "\\&" + $0 : String($0) }
            .joined(separator: "\n")
    }

    static func manFlag(_ e: Option) -> String {
        ".TP\n.B \(roff(e.name))" + (e.value.map { " \" \(roff($0))\"" } ?? "") + "\n\(roff(e.help))\n"
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
            for e in c.options { s += manFlag(e) }
        }
        s += ".SH OPTIONS\nThe daemon's options; every command takes them too.\n"
        s += manFlag(DaemonOptions.stdio)
        for e in DaemonOptions.all { s += manFlag(e) }
        s += """
        .SH EXIT STATUS
        0 on success; 1 when a request failed (its message and data are printed on standard error) or a file
        could not be read; 2 on a usage error; 3 with \\fB\\-\\-strict\\fR when a result did not pass its checks (the
        result is printed, and which checks failed is said on standard error, with or without it); 130 when interrupted.
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
}
