import JSONRPC
import ParlanceDocuments
import ParlanceFeatures
import ParlanceJSON
import ParlanceProtocol
import ParlanceSchema
import Synchronization

/// The standard LSP surface over Parlance's document store and compose feature: what the
/// client said it can do (negotiated at `initialize`), the editor settings, and the work
/// started on the client's behalf (rewrites running after `workspace/executeCommand`, the
/// prewarm of the selection a code-action menu was opened on).
public final class LanguageServer: Sendable {
    public static let rewriteCommand = "parlance.rewrite"
    public static let actionKind = "refactor.rewrite"

    struct Client: Sendable {
        var encoding = PositionEncoding.utf16
        var resolvesEdits = false
        var applyEdit = false
        var documentChanges = false
        var workDoneProgress = false
        var settings = EditorSettings()
    }

    struct Work {
        var client = Client()
        /// Rewrites running for this client, by progress token (cancellable from the
        /// client's progress UI) or by an internal key.
        var running: [String: (uri: String?, cancel: @Sendable () -> Void)] = [:]
        var prewarm: (key: String, task: Task<Void, Never>)? = nil
        var nextToken = 1
    }
    let state = Mutex(Work())  // guards the negotiated client, the settings and the tasks started for the client

    public init() {}

    var client: Client { state.withLock { $0.client } }

    // MARK: initialize

    /// Reads the client's capabilities and settings; returns the position encoding chosen
    /// (UTF-8 when offered, else UTF-16, LSP's default, else UTF-32 when that is all) and
    /// what was wrong with `initializationOptions` (the defaults are used instead).
    public func configure(_ p: Initialize.Params) -> (encoding: PositionEncoding, settingsProblem: String?) {
        var c = Client()
        let offered = p.capabilities?.general?.positionEncodings ?? []
        if offered.contains(PositionEncoding.utf8.rawValue) {
            c.encoding = .utf8
        } else if offered.isEmpty || offered.contains(PositionEncoding.utf16.rawValue) {
            c.encoding = .utf16
        } else if offered.contains(PositionEncoding.utf32.rawValue) {
            c.encoding = .utf32
        }
        c.resolvesEdits = p.capabilities?.textDocument?.codeAction?.resolveSupport?.properties.contains("edit") ?? false
        c.applyEdit = p.capabilities?.workspace?.applyEdit ?? false
        c.documentChanges = p.capabilities?.workspace?.workspaceEdit?.documentChanges ?? false
        c.workDoneProgress = p.capabilities?.window?.workDoneProgress ?? false
        var problem: String? = nil
        do {
            c.settings = try LanguageServer.settings(from: p.initializationOptions) ?? EditorSettings()
        } catch {
            problem = "Parlance: initializationOptions ignored: \((error as? ResponseError)?.message ?? "\(error)")"
        }
        state.withLock { $0.client = c }
        return (c.encoding, problem)
    }

    /// The standard capabilities, into the `initialize` result.
    public static func capabilities(_ caps: inout Initialize.ServerCapabilities, encoding: PositionEncoding) {
        caps.positionEncoding = encoding.rawValue
        caps.textDocumentSync = TextDocumentSyncOptions(openClose: true, change: 2)
        caps.codeActionProvider = CodeActionOptions(codeActionKinds: [actionKind], resolveProvider: true)
        caps.executeCommandProvider = ExecuteCommandOptions(commands: [rewriteCommand])
    }

    // MARK: settings

    public func configurationChanged(_ p: DidChangeConfiguration.Params) throws {
        guard let settings = p.settings, settings != .null else { return }
        guard let s = try LanguageServer.settings(from: settings["parlance"] ?? settings) else {
            throw ResponseError.invalidParams("settings: expected an object with tones, audience, language or maxTokens")
        }
        state.withLock { $0.client.settings = s }
    }

    /// EditorSettings from a JSON object (nil when there is none); a value that does not fit
    /// the schema throws, naming every problem (unknown fields are other tools' settings).
    static func settings(from value: JSONValue?) throws -> EditorSettings? {
        guard let value, case .object = value else { return nil }
        let schema = SchemaDeriver.schema(for: EditorSettings.self)
        let violations = SchemaValidator.validate(value, against: schema).filter { $0.keyword != "additionalProperties" }
        if let v = violations.first {
            throw ResponseError.invalidParams(violations.map(\.description).joined(separator: "; "),
                                              data: ["path": .string(v.path), "keyword": .string(v.keyword)])
        }
        do {
            return try value.decode(EditorSettings.self)
        } catch {
            throw ResponseError.invalidParams("settings: \(error)")
        }
    }

    // MARK: work started for the client

    /// A progress token of ours (unique on this connection).
    func newToken() -> String {
        state.withLock { s in
            defer { s.nextToken += 1 }
            return "parlance-rewrite-\(s.nextToken)"
        }
    }

    /// Remembers how to cancel work started for the client, under a progress token or key.
    /// `uri`: the buffer the work will edit; a change to it stops the work (its edit
    /// would be refused anyway).
    func track(_ key: String, uri: String? = nil, cancel: @escaping @Sendable () -> Void) {
        state.withLock { $0.running[key] = (uri, cancel) }
    }

    /// The buffer changed or closed: rewrites for it stop now rather than finish for nothing.
    func bufferChanged(_ uri: String) {
        let cancels = state.withLock { s in s.running.values.filter { $0.uri == uri }.map(\.cancel) }
        cancels.forEach { $0() }
    }
    func untrack(_ key: String) { state.withLock { _ = $0.running.removeValue(forKey: key) } }

    /// `window/workDoneProgress/cancel`: stops the rewrite reporting under that token.
    public func cancelProgress(_ token: JSONValue) {
        guard let key = token.stringValue ?? token.intValue.map(String.init) else { return }
        state.withLock { $0.running[key] }?.cancel()
    }

    /// Starts the prewarm of a selection (replacing any other); `key` names the selection.
    func startPrewarm(key: String, _ body: @escaping @Sendable () async -> Void) {
        let previous = state.withLock { s -> Task<Void, Never>? in
            if s.prewarm?.key == key { return nil }
            let old = s.prewarm?.task
            s.prewarm = (key, Task(priority: .background) { await body() })
            return old
        }
        previous?.cancel()
    }

    /// Stops the prewarm, unless it is for `key` (the selection about to be rewritten).
    public func stopPrewarm(unless key: String? = nil) {
        let task = state.withLock { s -> Task<Void, Never>? in
            guard let p = s.prewarm, p.key != key else { return nil }
            s.prewarm = nil
            return p.task
        }
        task?.cancel()
    }

    /// Real work arrived: the background prewarm yields to it. (Requests of the rewrite
    /// flow itself keep it: they are what it prepares.)
    public func requestArrived(_ method: String) {
        if method == CodeActionRequest.name || method == CodeActionResolve.name || method == ExecuteCommand.name { return }
        stopPrewarm()
    }

    /// Shutdown: cancels every rewrite started for the client and the prewarm.
    public func cancelAll() {
        let (cancels, prewarm) = state.withLock { s -> ([@Sendable () -> Void], Task<Void, Never>?) in
            defer { s.running = [:]; s.prewarm = nil }
            return (s.running.values.map(\.cancel), s.prewarm?.task)
        }
        cancels.forEach { $0() }
        prewarm?.cancel()
    }
}

// MARK: handlers, as registered

extension LanguageServer {
    public func didOpen(_ p: DidOpenTextDocument.Params, _ ctx: RequestContext) async throws { try await TextSync.didOpen(p, ctx, self) }
    public func didChange(_ p: DidChangeTextDocument.Params, _ ctx: RequestContext) async throws { try await TextSync.didChange(p, ctx, self) }
    public func didClose(_ p: DidCloseTextDocument.Params, _ ctx: RequestContext) async throws { try await TextSync.didClose(p, ctx, self) }
    public func codeActions(_ p: CodeActionRequest.Params, _ ctx: RequestContext) async throws -> [CodeAction] {
        try await RewriteActions.offer(p, ctx, self)
    }
    public func resolve(_ p: CodeAction, _ ctx: RequestContext) async throws -> @Sendable () async throws -> CodeAction {
        try await RewriteActions.resolve(p, ctx, self)
    }
    public func execute(_ p: ExecuteCommand.Params, _ ctx: RequestContext) async throws -> @Sendable () async throws -> JSONValue {
        try await RewriteActions.execute(p, ctx, self)
    }
    public static func warn(_ ctx: RequestContext, _ message: String) { Messages.show(ctx, .warning, message) }
}
