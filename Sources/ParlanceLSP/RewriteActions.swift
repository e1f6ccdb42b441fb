import JSONRPC
import ParlanceDocuments
import ParlanceFeatures
import ParlanceJSON
import ParlanceProtocol

/// Code actions that rewrite a selection: offered at once (`textDocument/codeAction`, no
/// model call; the selection's shared prompt starts evaluating in the background), run when
/// chosen — `codeAction/resolve` answers the edit, or `workspace/executeCommand` answers at
/// once and sends `workspace/applyEdit` when the rewrite is ready. An edit is never made on
/// a buffer that changed since the action was offered.
enum RewriteActions {
    // MARK: offer

    static func offer(_ p: CodeActionRequest.Params, _ ctx: RequestContext, _ lsp: LanguageServer) async throws -> [CodeAction] {
        let client = lsp.client
        if let only = p.context?.only, !only.contains(where: { LanguageServer.actionKind.hasPrefix($0) || $0.hasPrefix(LanguageServer.actionKind) }) {
            return []
        }
        let uri = p.textDocument.uri
        let selection = await ctx.services.documents.withEditor(uri) { e -> (RewriteAction, String)? in
            let b = e.buffer
            var start = b.offset(line: p.range.start.line, character: p.range.start.character, encoding: client.encoding)
            var end = b.offset(line: p.range.end.line, character: p.range.end.character, encoding: client.encoding)
            if start > end { swap(&start, &end) }
            guard end > start else { return nil }
            let text = b.text(in: start..<end)
            guard !text.allSatisfy(\.isWhitespace) else { return nil }
            let s = b.position(of: start, encoding: client.encoding), en = b.position(of: end, encoding: client.encoding)
            let range = TextRange(start: Position(line: s.line, character: s.character), end: Position(line: en.line, character: en.character))
            return (RewriteAction(uri: uri, version: e.version, range: range), text)
        }
        guard let (base, text) = selection ?? nil else { return [] }
        let settings = client.settings
        var choices: [(String, RewriteAction)] = []
        for tone in settings.tones ?? Tone.allCases.sorted(by: { toneRank($0) < toneRank($1) }) {
            var a = base
            a.tone = tone
            choices.append(("Rewrite: \(tone.rawValue)", a))
        }
        for r in Refinement.allCases {
            var a = base
            a.refine = r
            choices.append((r == .shorter ? "Shorter" : "Clearer", a))
        }
        prewarm(text, base, ctx, lsp)
        return choices.map { title, action in
            let command = client.resolvesEdits ? nil
                : Command(title: title, command: LanguageServer.rewriteCommand, arguments: [(try? JSONValue(encoding: action)) ?? .null])
            return CodeAction(title: title, kind: LanguageServer.actionKind, command: command, data: action)
        }
    }

    static func toneRank(_ t: Tone) -> Int { [Tone.formal, .casual, .diplomatic, .empathetic, .direct].firstIndex(of: t) ?? 9 }

    /// The menu is open: evaluate what every tone's prompt shares (instructions, examples,
    /// the selection) now, at low priority, so a choice only has its tone's tail left.
    static func prewarm(_ text: String, _ action: RewriteAction, _ ctx: RequestContext, _ lsp: LanguageServer) {
        let settings = lsp.client.settings
        let key = prewarmKey(action)
        let params = ComposeVariations.Params(.init(text: text, audience: settings.audience, language: settings.language))
        lsp.startPrewarm(key: key) {
            do {
                _ = try await ctx.with(progress: .none).detached { try await Compose.prewarm(params, $0) }
            } catch {
                // Cancelled (the selection changed, real work arrived) or no model yet: the
                // rewrite, if chosen, evaluates the prompt itself.
            }
        }
    }

    static func prewarmKey(_ a: RewriteAction) -> String {
        "\(a.uri)@\(a.version):\(a.range.start.line).\(a.range.start.character)-\(a.range.end.line).\(a.range.end.character)"
    }

    // MARK: resolve

    /// Claims the selection as offered (refused when the buffer changed); the rewrite is
    /// the work, checked again against the buffer before the edit is answered.
    static func resolve(_ p: CodeAction, _ ctx: RequestContext, _ lsp: LanguageServer) async throws -> @Sendable () async throws -> CodeAction {
        guard let action = p.data else {
            throw ResponseError.invalidParams("data: missing; resolve an action this server offered", data: ["path": "data", "keyword": "required"])
        }
        lsp.stopPrewarm(unless: prewarmKey(action))
        let selection = try await current(action, ctx, lsp)
        return {
            let (resolved, warning) = try await TrackedRewrite(action, lsp).run(selection: selection, title: p.title, ctx: ctx) { edit in
                var resolved = p
                resolved.edit = edit
                resolved.command = nil
                return (resolved, "done")
            }
            if let warning { Messages.show(ctx, .warning, warning) }
            return resolved
        }
    }

    // MARK: executeCommand

    /// Answers at once (eglot gives up on any request after 10 s); the rewrite runs in the
    /// background and ends in `workspace/applyEdit`, or a `window/showMessage` saying why not.
    static func execute(_ p: ExecuteCommand.Params, _ ctx: RequestContext, _ lsp: LanguageServer) async throws -> @Sendable () async throws -> JSONValue {
        guard p.command == LanguageServer.rewriteCommand else {
            throw ResponseError.invalidParams("command: unknown command '\(p.command)'; this server has \(LanguageServer.rewriteCommand)",
                                              data: ["path": "command", "keyword": "enum", "commands": [.string(LanguageServer.rewriteCommand)]])
        }
        guard let raw = p.arguments?.first, let action = try? raw.decode(RewriteAction.self) else {
            throw ResponseError.invalidParams("arguments: expected [RewriteAction] (the action's data: uri, version, range, tone or refine)",
                                              data: ["path": "arguments/0", "keyword": "type"])
        }
        guard lsp.client.applyEdit else {
            throw ResponseError(.requestFailed, "the client cannot apply edits (capabilities.workspace.applyEdit is not true); use codeAction/resolve",
                                data: ["error": "applyEditUnsupported"])
        }
        lsp.stopPrewarm(unless: prewarmKey(action))
        let title = action.tone.map { "Rewrite: \($0.rawValue)" } ?? (action.refine == .shorter ? "Shorter" : "Clearer")
        let selection: String
        do {
            selection = try await current(action, ctx, lsp)
        } catch {
            Messages.show(ctx, .warning, Messages.describe(error))
            return { .null }
        }
        let tracked = TrackedRewrite(action, lsp)
        // Answered at once: the rewrite holds its own model use until it ends.
        Task { await ctx.detached { ctx in
            do {
                let (answer, warning) = try await tracked.run(selection: selection, title: title, ctx: ctx) { edit in
                    let params = try JSONValue(encoding: ApplyWorkspaceEdit.Params(label: "Parlance: \(title)", edit: edit))
                    let answer = try await ctx.services.client.request(ApplyWorkspaceEdit.name, params).decode(ApplyWorkspaceEdit.Result.self)
                    return (answer, answer.applied ? "applied" : "not applied")
                }
                if !answer.applied {
                    Messages.show(ctx, .warning, "Parlance: the editor did not apply the rewrite" + (answer.failureReason.map { ": \($0)" } ?? "."))
                } else if let warning {
                    Messages.show(ctx, .warning, warning)
                }
            } catch {
                // Cancelled by the writer (progress UI) or at shutdown: nothing to explain.
                if ErrorMapping.response(for: error).code != .requestCancelled { Messages.show(ctx, .warning, Messages.describe(error)) }
            }
        } }
        return { .null }
    }

    // MARK: shared steps

    /// A chosen rewrite under the client's control: tracked from creation (a change to its
    /// buffer stops it), with work-done progress the client can cancel. `run` produces the
    /// edit, hands it to `deliver` (which names how the progress ends), and reports a
    /// failure as "the text changed" when that is why it failed.
    struct TrackedRewrite {
        let action: RewriteAction
        let lsp: LanguageServer
        let cancellation = Cancellation()
        let key: String

        init(_ action: RewriteAction, _ lsp: LanguageServer) {
            self.action = action
            self.lsp = lsp
            key = "rewrite-\(lsp.newToken())"
            lsp.track(key, uri: action.uri, cancel: cancellation.cancel)
        }

        func run<T: Sendable>(selection: String, title: String, ctx: RequestContext,
                              deliver: (WorkspaceEdit) async throws -> (T, ended: String)) async throws -> (T, warning: String?) {
            let (action, lsp) = (self.action, self.lsp)
            let progress = EditorProgress.start(lsp, ctx, title: title, cancel: cancellation.cancel)
            let run = Task { try await Rewriter.rewrite(action, selection: selection, ctx: ctx.with(progress: progress.reporter), lsp: lsp) }
            cancellation.attach(run)
            defer {
                progress.token.map(lsp.untrack)
                lsp.untrack(key)
            }
            do {
                let (newText, warning) = try await withTaskCancellationHandler { try await run.value } onCancel: { run.cancel() }
                let edit = try await RewriteActions.edit(action, newText: newText, ctx: ctx, lsp: lsp)
                let (value, ended) = try await deliver(edit)
                progress.reporter.end(ended)
                return (value, warning)
            } catch {
                let e = await RewriteActions.stale(action, ctx, otherwise: error)
                progress.reporter.end(Messages.describe(e))
                throw e
            }
        }
    }


    /// The selection's text, when the buffer is still at the version the action was offered for.
    static func current(_ a: RewriteAction, _ ctx: RequestContext, _ lsp: LanguageServer) async throws -> String {
        let encoding = lsp.client.encoding
        let found = await ctx.services.documents.withEditor(a.uri) { e -> (Int, String) in
            let s = e.buffer.offset(line: a.range.start.line, character: a.range.start.character, encoding: encoding)
            let t = e.buffer.offset(line: a.range.end.line, character: a.range.end.character, encoding: encoding)
            return (e.version, e.buffer.text(in: s..<max(s, t)))
        }
        guard let (version, text) = found else { throw ErrorMapping.notFound("document", a.uri) }
        guard version == a.version else { throw changed(a, now: version) }
        return text
    }

    /// A rewrite that failed or was stopped because its buffer changed reports that (the
    /// writer's edit is the reason, not a cancellation).
    static func stale(_ a: RewriteAction, _ ctx: RequestContext, otherwise error: any Error) async -> any Error {
        guard ErrorMapping.response(for: error).code == .requestCancelled else { return error }
        let version = await ctx.services.documents.withEditor(a.uri) { $0.version }
        guard let version else { return ErrorMapping.notFound("document", a.uri) }
        return version == a.version ? error : changed(a, now: version)
    }

    static func changed(_ a: RewriteAction, now: Int) -> ResponseError {
        ResponseError(.contentModified, "the text changed since the rewrite was offered, so it was not applied; select the text and try again",
                      data: ["error": "contentModified", "uri": .string(a.uri), "offeredVersion": .int(a.version), "currentVersion": .int(now)])
    }

    /// The edit replacing the range, after checking the buffer did not change meanwhile;
    /// versioned (`documentChanges`) when the client supports it.
    static func edit(_ a: RewriteAction, newText: String, ctx: RequestContext, lsp: LanguageServer) async throws -> WorkspaceEdit {
        let version = await ctx.services.documents.withEditor(a.uri) { $0.version }
        guard let version else { throw ErrorMapping.notFound("document", a.uri) }
        guard version == a.version else { throw changed(a, now: version) }
        let edit = TextEdit(range: a.range, newText: newText)
        if lsp.client.documentChanges {
            return WorkspaceEdit(documentChanges: [TextDocumentEdit(textDocument: .init(uri: a.uri, version: a.version), edits: [edit])])
        }
        return WorkspaceEdit(changes: [a.uri: [edit]])
    }
}
