import Foundation
import ParlanceInProcess
import ParlanceJSON
import ParlanceProtocol

/// One subcommand: its words for `--help`, the man page and completions, the method whose
/// params give its options, and what it does. The table below is the only list of them.
struct Command: Sendable {
    let name: String
    let synopsis: String
    let summary: String
    let details: String
    /// The method whose params schema gives the command's options (but `bound`).
    let paramsSchema: JSONValue?
    let bound: Set<String>
    /// Options of the command's own (not from the method).
    let own: [Option]
    /// How many positional arguments it takes.
    let positionals: ClosedRange<Int>
    /// What a positional completes to.
    let positionalKind: ValueKind
    let run: @Sendable (Invocation) async throws -> Int32
    /// Whether its results carry `verification` (then it takes `--strict`).
    var checked = false

    /// Its options, in the order `--help` lists them and parsing tries them (before the
    /// daemon's): `--json`, its own, its method's.
    var options: [Option] { [Option.json] + (checked ? [Option.strict] : []) + own + (paramsSchema.map { MethodOptions.options($0, skip: bound) } ?? []) }

    static let all: [Command] = [
        Command(name: "summarize", synopsis: "[OPTIONS] FILE...", summary: "Summarize transcripts or documents",
                details: "Summarizes each FILE (SRT, WebVTT or plain text, detected as document/open detects them; - for stdin): a summary, its main topics, key takeaways and audience. A long transcript is summarized in parts, then combined (a progress bar on a terminal).",
                paramsSchema: Summarize.paramsSchema, bound: ["text", "uri"], own: [], positionals: 1...64, positionalKind: .file,
                run: Runs.summarize, checked: true),
        Command(name: "ask", synopsis: "[OPTIONS] FILE... QUESTION", summary: "Answer a question from one or more documents, with citations",
                details: "Answers QUESTION from FILE (- for stdin), or from up to \(AskStream.maxDocuments) FILEs at once: retrieval then runs across all of them and each citation names its file. On a terminal the answer streams as the model writes it (piped, the final answer is written once), then its citations: the supporting segments with their timestamps. When the documents do not say, the answer says so.",
                paramsSchema: AskStream.paramsSchema, bound: ["text", "uri", "uris", "question", "sessionId"], own: [], positionals: 2...(AskStream.maxDocuments + 1),
                positionalKind: .file, run: Runs.ask, checked: true),
        Command(name: "rewrite", synopsis: "[--tone T]... [--audience A] [OPTIONS] [TEXT | -]",
                summary: "Rewrite text in one or more tones",
                details: "Rewrites TEXT (or stdin, when TEXT is - or absent and stdin is not a terminal) in each --tone, for --audience. With one tone the rewrite is printed alone (streamed on a terminal), so it can be piped; with several, each is printed under its tone.",
                paramsSchema: ComposeVariations.paramsSchema, bound: ["text"], own: [], positionals: 0...1, positionalKind: .none,
                run: Runs.rewrite, checked: true),
        Command(name: "analyze", synopsis: "tags|entities|highlights|content|worth-it|chapters [OPTIONS] FILE",
                summary: "Structured analysis of a transcript",
                details: "tags: tags, categories and difficulty; entities: people, organizations, products, locations and resources; highlights: key moments, quotes and action items; content: style, tone and complexity; worth-it: a score with its reasons, takeaways and questions; chapters: titled chapters covering the transcript, printed as a video description's chapter list (00:00 Title). --instructions TEXT focuses any of them (\"focus on what is said about pricing\"). FILE may be - for stdin.",
                paramsSchema: AnalyzeTags.paramsSchema, bound: ["text", "uri", "comments"], own: [], positionals: 2...2,
                positionalKind: .choices(AnalysisKinds.all.map(\.word)), run: Runs.analyze, checked: true),
        Command(name: "compare", synopsis: "[OPTIONS] FILE FILE...", summary: "Compare two to eight documents",
                details: "Common themes, how the documents' positions evolve, each one's unique insights and an order to read them in. Each FILE is titled by its file name.",
                paramsSchema: AnalyzeCompare.paramsSchema, bound: ["documents"], own: [], positionals: 2...8, positionalKind: .file,
                run: Runs.compare, checked: true),
        Command(name: "segments", synopsis: "[OPTIONS] FILE", summary: "A transcript's segments as Parlance reads them",
                details: "Parses FILE (SRT, WebVTT or plain text, detected as document/open detects them; - for stdin) and prints one line per segment: its id, its start time (hh:mm:ss) and speaker when it has them, and its text, as in [12] 00:03:14 MAYA: text. Every segment by default; --offset and --limit print a part. --json prints document/segments' result (with the plain text and the speakers and their aliases); a transcript of more than 5000 segments is one result per 5000, one per line.",
                paramsSchema: DocumentSegments.paramsSchema, bound: ["text", "uri", "includeText"], own: [], positionals: 1...1,
                positionalKind: .file, run: Runs.segments),
        Command(name: "cache", synopsis: "list [FILE] | clear FILE | clear --all | clear --content-hash HASH [OPTIONS]",
                summary: "What the analysis cache holds, or clear it",
                details: "list: the cached analyses, newest first (when, the method, the model, the language, the document), all of them or FILE's (analysis/cache/list); entries of another checks version are marked, as they are never served. clear FILE: remove FILE's cached analyses, so the next one is made again; clear --all: every entry; clear --content-hash HASH: the entries of the text with that SHA-256 (analysis/cache/clear). A single analysis is made again with its command's --refresh.",
                paramsSchema: AnalysisCacheClear.paramsSchema, bound: ["uri"], own: [.own("--limit", "N", .text, "list: at most N entries (default 100)")],
                positionals: 1...2, positionalKind: .choices(["list", "clear"]), run: Runs.cache),
        Command(name: "chat", synopsis: "[--instructions TEXT] [--schema FILE] [OPTIONS]", summary: "An interactive session that keeps its history",
                details: "Reads one prompt per line from stdin and answers each in the same session, streaming. With --schema FILE (a JSON Schema), every answer is a JSON value of that schema. End with Ctrl-D; Ctrl-C stops an answer.",
                paramsSchema: SessionCreate.paramsSchema, bound: ["tools", "toolChoice", "maxToolCalls", "toolTimeoutMs", "resetToolChoice"],
                own: [.own("--schema", "FILE", .file, "answer with JSON of this JSON Schema"),
                      .own("--max-tokens", "N", .text, "at most N tokens per answer")],
                positionals: 0...0, positionalKind: .none, run: Runs.chat),
        Command(name: "mcp", synopsis: "[OPTIONS]", summary: "Serve Parlance's tools to an MCP host over stdio",
                details: "Speaks the Model Context Protocol on stdin/stdout (one JSON-RPC message per line) for hosts such as Claude Desktop, VS Code, Zed or Cursor: tools summarize, ask, rewrite, analyze, compare and segments (their schemas are the methods' own), resources (the documents opened through it, the compose history), prompts (rewrite, summary), progress, cancellation and logging. Takes the daemon's flags and config file: models, routes, caches, --mcp-server.",
                paramsSchema: nil, bound: [], own: [], positionals: 0...0, positionalKind: .none, run: Runs.mcp),
        Command(name: "models", synopsis: "[NAME | pull NAME | use NAME]", summary: "List the models on this machine, pull one, or make one the default",
                details: "Without arguments: every model in the registry (from --model, --config and the default), its state, size and routes; then the models already on this machine in Ollama's store, the Hugging Face cache, llama.cpp's cache, LM Studio, GPT4All and the config file's modelDirs, each with the name to use, its architecture, size, quantization, memory and whether it fits now. With NAME: that model's status. pull NAME: download hf:ORG/REPO[:QUANT] into the Hugging Face cache, or ollama:[HOST/]NAME[:TAG] into Parlance's data folder; an interrupted pull resumes, every file is checked against its sha256 (a progress bar on a terminal; with --json, progress lines then the result). use NAME: write NAME as defaultModel in the config file (created when missing, other settings kept).",
                paramsSchema: nil, bound: [], own: [], positionals: 0...2, positionalKind: .none, run: Runs.models),
    ]

    static func named(_ name: String) -> Command? { all.first { $0.name == name } }
}

/// A parsed command line, ready to run.
struct Invocation: Sendable {
    let command: String
    let positionals: [String]
    let params: JSONObject
    /// The command's own options, by name, as written.
    let own: [String: String]
    let json: Bool
    /// `--strict`: exit 3 when a result did not pass its checks.
    let strict: Bool
    let session: CLISession

    /// Text streams as the model writes it on a terminal, where text a retry or a fallback
    /// replaces can be erased. Piped, only the final text is written.
    var streams: Bool { !json && session.terminal.stdoutIsTTY }
}
