import ParlanceDocuments
import ParlanceFeatures
import ParlanceLSP
import ParlanceProtocol

/// The one registration list. Capabilities, `rpc.discover` and the published spec are
/// derived from it; a method's name string appears only in its protocol type.
enum Registry {
    static func router(_ lifecycle: Lifecycle, _ lsp: LanguageServer) -> Router {
        var r = Router()
        // Lifecycle
        r.on(Initialize.self, ordered: true) { params, ctx in
            let (encoding, problem) = lsp.configure(params)
            ctx.services.peer.runsTools = params.capabilities?.tools == true
            var capabilities = Initialize.ServerCapabilities(
                methods: lifecycle.methodNames, notifications: lifecycle.notificationNames, workDoneProgress: true,
                framings: ["lsp", "ndjson"], maxMessageBytes: lifecycle.maxMessageBytes,
                languages: LanguageSupport.supported, tones: Tone.allCases.map(\.rawValue), audiences: Audience.allCases.map(\.rawValue))
            LanguageServer.capabilities(&capabilities, encoding: encoding)
            if let problem { LanguageServer.warn(ctx, problem) }
            let result = Initialize.Result(
                serverInfo: .init(name: "parlance", version: Server.version, protocolVersion: Server.protocolVersion),
                capabilities: capabilities, model: await Models.status(ctx.services, name: nil, checkRemote: false))
            lifecycle.markInitialized()
            return result
        }
        // Drains: no new work is accepted, and the answer comes once every request that
        // arrived before it has been answered (so a pipe's `shutdown` + `exit` loses nothing).
        r.on(Shutdown.self, claim: { _, ctx in
            lifecycle.beginShutdown()
            lsp.cancelAll()
            return {
                await lifecycle.drain(except: ctx.id)
                return Empty()
            }
        })
        r.on(Ping.self) { _, _ in Empty() }
        r.on(Discover.self) { _, _ in Spec.openRPC(lifecycle.router.withLock { $0! }) }
        r.notification(Initialized.self)
        r.notification(Exit.self)
        r.notification(CancelRequest.self)
        r.notification(Progress.self)

        // Model
        r.on(ModelStatus.self, Models.status)
        r.on(ModelList.self) { _, ctx in await Models.list(ctx.services) }
        r.on(ModelLoad.self, Models.load)
        r.on(ModelPull.self, Models.pull)

        // Sessions
        r.on(SessionCreate.self, ordered: true, Sessions.create)
        r.on(SessionRespond.self, claim: Sessions.respond)
        r.on(SessionPrewarm.self, claim: Sessions.prewarm)
        r.on(SessionTranscript.self, ordered: true, Sessions.transcript)
        r.on(SessionReset.self, ordered: true, Sessions.reset)
        r.on(SessionClose.self, ordered: true, Sessions.close)
        r.clientMethod(ToolCall.self)
        r.on(MCPList.self, MCPHandlers.list)

        // Documents
        r.on(DocumentOpen.self, ordered: true, DocumentHandlers.open)
        r.on(DocumentChange.self, ordered: true, DocumentHandlers.change)
        r.on(DocumentClose.self, ordered: true, DocumentHandlers.close)
        r.on(DocumentList.self, ordered: true, DocumentHandlers.list)
        r.on(DocumentSegments.self, ordered: true, SegmentHandlers.segments)

        // Analysis
        r.on(Summarize.self, Summaries.summarize)
        r.on(AnalyzeTags.self, Analyses.tags)
        r.on(AnalyzeEntities.self, Entities.entities)
        r.on(AnalyzeHighlights.self, Highlights.highlights)
        r.on(AnalyzeContent.self, Analyses.content)
        r.on(AnalyzeCompare.self, Compare.compare)
        r.on(AnalyzeWorthIt.self, WorthIt.worthIt)
        r.on(AnalyzeChapters.self, Chapters.chapters)
        r.on(AnalysisCacheList.self, ordered: true, CacheHandlers.list)
        r.on(AnalysisCacheClear.self, ordered: true, CacheHandlers.clear)

        // Ask
        r.on(AskStream.self, claim: Ask.ask)

        // Compose
        r.on(ComposeVariations.self, claim: Compose.variations)
        r.on(ComposeRefine.self, claim: Compose.refine)
        r.on(ComposeHistoryList.self, ordered: true, ComposeHistoryHandlers.list)
        r.on(ComposeHistoryGet.self, ordered: true, ComposeHistoryHandlers.get)
        r.on(ComposeHistoryDelete.self, ordered: true, ComposeHistoryHandlers.delete)
        r.on(ComposeHistoryClear.self, ordered: true, ComposeHistoryHandlers.clear)

        // LSP: editor buffers and rewrite code actions (ParlanceLSP)
        r.on(DidOpenTextDocument.self) { p, ctx in try await lsp.didOpen(p, ctx) }
        r.on(DidChangeTextDocument.self) { p, ctx in try await lsp.didChange(p, ctx) }
        r.on(DidCloseTextDocument.self) { p, ctx in try await lsp.didClose(p, ctx) }
        r.on(DidChangeConfiguration.self) { p, _ in try lsp.configurationChanged(p) }
        r.on(WorkDoneProgressCancel.self) { p, _ in lsp.cancelProgress(p.token) }
        r.on(CodeActionRequest.self, ordered: true) { p, ctx in try await lsp.codeActions(p, ctx) }
        r.on(CodeActionResolve.self, claim: { p, ctx in try await lsp.resolve(p, ctx) })
        r.on(ExecuteCommand.self, claim: { p, ctx in try await lsp.execute(p, ctx) })
        r.clientMethod(ApplyWorkspaceEdit.self)
        r.clientMethod(WorkDoneProgressCreate.self)
        r.notification(ShowMessage.self)
        return r
    }
}
