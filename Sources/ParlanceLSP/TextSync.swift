import JSONRPC
import ParlanceDocuments
import ParlanceFeatures
import ParlanceProtocol

/// `textDocument/didOpen|didChange|didClose`: editor buffers in the document store,
/// edited in place with the negotiated position encoding.
enum TextSync {
    static func didOpen(_ p: DidOpenTextDocument.Params, _ ctx: RequestContext, _ lsp: LanguageServer) async throws {
        let d = p.textDocument
        lsp.stopPrewarm()
        do {
            try await ctx.services.documents.openEditor(uri: d.uri, languageId: d.languageId, version: d.version, text: d.text)
        } catch let e as ResponseError {
            Messages.show(ctx, .warning, "Parlance will not read \(d.uri): \(e.message).")
            throw e
        }
    }

    static func didChange(_ p: DidChangeTextDocument.Params, _ ctx: RequestContext, _ lsp: LanguageServer) async throws {
        let uri = p.textDocument.uri
        lsp.stopPrewarm()
        let encoding = lsp.client.encoding
        let found = await ctx.services.documents.editEditor(uri: uri, version: p.textDocument.version) { buffer in
            for change in p.contentChanges {
                guard let r = change.range else {
                    buffer = TextBuffer(change.text)
                    continue
                }
                let start = buffer.offset(line: r.start.line, character: r.start.character, encoding: encoding)
                let end = buffer.offset(line: r.end.line, character: r.end.character, encoding: encoding)
                buffer.replace(min(start, end)..<max(start, end), with: change.text)
            }
        }
        if !found { throw ErrorMapping.notFound("document", uri) }
        lsp.bufferChanged(uri)
    }

    static func didClose(_ p: DidCloseTextDocument.Params, _ ctx: RequestContext, _ lsp: LanguageServer) async throws {
        lsp.stopPrewarm()
        lsp.bufferChanged(p.textDocument.uri)
        if !(await ctx.services.documents.closeEditor(p.textDocument.uri)) { throw ErrorMapping.notFound("document", p.textDocument.uri) }
    }
}
