import Foundation
import ParlanceClient
import ParlanceHash
import ParlanceJSON
import XCTest

/// The standard LSP surface through the real daemon and model, as an editor's own LSP
/// client uses it: buffers kept by incremental edits in the negotiated encoding, rewrite
/// actions offered at once and run when chosen (resolve, or executeCommand →
/// workspace/applyEdit answered by the client), never applied to a buffer that changed.
/// Every wait is for a message; the daemon's requests to us are answered when the test
/// says so, which makes "the buffer changed while the model worked" deterministic.
final class LSPTests: XCTestCase {
    static let uri = "file:///notes.md"
    static let paragraph = "hey Sam, the Q3 budget review moved to Friday at 3pm. can u send the 14 slides to Priya by Thursday? thx"
    static let text = "# Notes\n\n😀 日本語 e\u{301} \(paragraph) — ok 👍\n\nbye\n"

    /// The paragraph's range on line 2, in UTF-16 units (or UTF-8 bytes).
    static func paragraphRange(utf8: Bool) -> JSONValue {
        let line = text.components(separatedBy: "\n")[2]
        let prefix = String(line[..<line.range(of: paragraph)!.lowerBound])
        let count = { (s: String) in utf8 ? s.utf8.count : s.utf16.count }
        return ["start": ["line": 2, "character": .int(count(prefix))], "end": ["line": 2, "character": .int(count(prefix) + count(paragraph))]]
    }

    func start(_ capabilities: JSONValue, options: JSONValue = ["tones": ["formal", "casual"], "maxTokens": 80]) throws -> (Daemon, JSONValue) {
        let d = try Daemon(framing: .lsp)
        let r = d.call("initialize", ["processId": .null, "rootUri": .null, "capabilities": capabilities, "initializationOptions": options,
                                      "trace": "off", "clientInfo": ["name": "lsp-tests"]])
        d.notify("initialized", [:])
        d.notify("textDocument/didOpen", ["textDocument": ["uri": .string(Self.uri), "languageId": "markdown", "version": 1, "text": .string(Self.text)]])
        return (d, r)
    }

    /// The buffer's text as the daemon has it, through its content hash.
    func assertBuffer(_ d: Daemon, is expected: String, _ what: String, file: StaticString = #filePath, line: UInt = #line) {
        let docs = d.call("document/list", [:]).result?["documents"]?.arrayValue ?? []
        let doc = docs.first { $0["uri"]?.stringValue == Self.uri }
        XCTAssertEqual(doc?["contentHash"]?.stringValue, SHA256.hex(expected), "\(what): the daemon's buffer differs", file: file, line: line)
    }

    func testRewriteByResolveInUTF16WithStaleAndCancelledChoices() throws {
        let caps: JSONValue = ["textDocument": ["codeAction": ["resolveSupport": ["properties": ["edit"]]]],
                               "workspace": ["applyEdit": true, "workspaceEdit": ["documentChanges": true]], "window": ["workDoneProgress": true]]
        let (d, initialized) = try start(caps)
        let c = initialized.result?["capabilities"]
        XCTAssertEqual(c?["positionEncoding"], "utf-16", "no positionEncodings offered: UTF-16")
        XCTAssertEqual(c?["textDocumentSync"], ["openClose": true, "change": 2])
        XCTAssertEqual(c?["codeActionProvider"]?["resolveProvider"], true)
        XCTAssertEqual(c?["executeCommandProvider"]?["commands"], ["parlance.rewrite"])

        // Offered at once: the two tones configured, then Shorter and Clearer; data only.
        let range = Self.paragraphRange(utf8: false)
        let offer = d.call("textDocument/codeAction", ["textDocument": ["uri": .string(Self.uri)], "range": range, "context": ["diagnostics": []]])
        let actions = offer.result?.arrayValue ?? []
        XCTAssertEqual(actions.compactMap { $0["title"]?.stringValue }, ["Rewrite: formal", "Rewrite: casual", "Shorter", "Clearer"], "\(offer)")
        XCTAssertTrue(actions.allSatisfy { $0["edit"] == nil && $0["command"] == nil && $0["kind"] == "refactor.rewrite" })
        XCTAssertEqual(actions.first?["data"]?["range"], range)
        // An empty range, and a kind the client did not ask for, offer nothing.
        let empty = d.call("textDocument/codeAction", ["textDocument": ["uri": .string(Self.uri)], "range": ["start": ["line": 2, "character": 3], "end": ["line": 2, "character": 3]]])
        XCTAssertEqual(empty.result, [])
        let quickfix = d.call("textDocument/codeAction", ["textDocument": ["uri": .string(Self.uri)], "range": range, "context": ["diagnostics": [], "only": ["quickfix"]]])
        XCTAssertEqual(quickfix.result, [])

        // Chosen: the daemon creates a progress token, reports, and answers the edit. A rewrite
        // the checks reject is an error instead: the next action is tried, as a writer would.
        let (resolved, create) = try XCTUnwrap(resolveUntilEdited(d, actions), "every rewrite of the paragraph was rejected")
        let change = resolved.result?["edit"]?["documentChanges"]?.arrayValue?.first
        XCTAssertEqual(change?["textDocument"], ["uri": .string(Self.uri), "version": 1], "\(resolved)")
        let edit = change?["edits"]?.arrayValue?.first
        XCTAssertEqual(edit?["range"], range)
        let newText = edit?["newText"]?.stringValue ?? ""
        XCTAssertFalse(newText.isEmpty)
        XCTAssertNotEqual(newText, Self.paragraph)
        XCTAssertNil(resolved.result?["command"])
        let progress = d.progress(token: create["params"]!["token"]!)
        XCTAssertEqual(progress.first?["kind"], "begin")
        XCTAssertEqual(progress.last?["kind"], "end", "\(progress)")

        // The client applies it and reports the edit (incremental, UTF-16 positions): the
        // daemon's buffer is the editor's, byte for byte.
        d.notify("textDocument/didChange", ["textDocument": ["uri": .string(Self.uri), "version": 2],
                                            "contentChanges": [["range": range, "text": .string(newText)]]])
        let edited = Self.text.replacingOccurrences(of: Self.paragraph, with: newText)
        assertBuffer(d, is: edited, "after the rewrite was applied")

        // Stale at the choice: the buffer changed after the offer → -32801, nothing made.
        let line4 = ["start": ["line": 4, "character": 0], "end": ["line": 4, "character": 0]] as JSONValue
        let newRange: JSONValue = ["start": ["line": 2, "character": range["start"]!["character"]!],
                                   "end": ["line": 2, "character": .int(range["start"]!["character"]!.intValue! + newText.utf16.count)]]
        let offer2 = d.call("textDocument/codeAction", ["textDocument": ["uri": .string(Self.uri)], "range": newRange]).result?.arrayValue ?? []
        XCTAssertEqual(offer2.count, 4)
        d.notify("textDocument/didChange", ["textDocument": ["uri": .string(Self.uri), "version": 3], "contentChanges": [["range": line4, "text": "P.S. "]]])
        let stale = d.call("codeAction/resolve", try element(offer2, 1))
        XCTAssertEqual(stale.errorCode, -32801, "\(stale)")
        XCTAssertEqual(stale["error"]?["data"]?["currentVersion"], 3)

        // Stale while the model works: the buffer changes after the choice (while the
        // progress token the daemon asks for is unanswered) → the finished rewrite is refused.
        let offer3 = d.call("textDocument/codeAction", ["textDocument": ["uri": .string(Self.uri)], "range": newRange]).result?.arrayValue ?? []
        let id3 = d.start("codeAction/resolve", try element(offer3, 0))
        let create3 = try XCTUnwrap(d.waitFor { $0["method"] == "window/workDoneProgress/create" })
        d.notify("textDocument/didChange", ["textDocument": ["uri": .string(Self.uri), "version": 4], "contentChanges": [["range": line4, "text": "Later: "]]])
        d.send(["jsonrpc": "2.0", "id": create3["id"]!, "result": .null])
        let late = try XCTUnwrap(d.response(id3))
        XCTAssertEqual(late.errorCode, -32801, "\(late)")

        // Cancelled by the client while the model works → -32800, nothing made.
        let offer4 = d.call("textDocument/codeAction", ["textDocument": ["uri": .string(Self.uri)], "range": newRange]).result?.arrayValue ?? []
        let id4 = d.start("codeAction/resolve", try element(offer4, 2))
        let create4 = try XCTUnwrap(d.waitFor { $0["method"] == "window/workDoneProgress/create" })
        d.notify("$/cancelRequest", ["id": .int(id4)])
        d.send(["jsonrpc": "2.0", "id": create4["id"]!, "result": .null])
        XCTAssertEqual(d.response(id4)?.errorCode, -32800)

        // The executeCommand path, cancelled from the progress UI (the token is the
        // daemon's; cancelled before the client even confirmed it): no edit, progress ends.
        let offer5 = d.call("textDocument/codeAction", ["textDocument": ["uri": .string(Self.uri)], "range": newRange]).result?.arrayValue ?? []
        XCTAssertEqual(d.call("workspace/executeCommand", ["command": "parlance.rewrite", "arguments": [try element(offer5, 0)["data"] ?? .null]]).result, .null)
        let create5 = try XCTUnwrap(d.waitFor { $0["method"] == "window/workDoneProgress/create" })
        let token5 = create5["params"]!["token"]!
        d.notify("window/workDoneProgress/cancel", ["token": token5])
        d.send(["jsonrpc": "2.0", "id": create5["id"]!, "result": .null])
        let end5 = try XCTUnwrap(d.waitFor { $0["method"] == "$/progress" && $0["params"]?["token"] == token5 && $0["params"]?["value"]?["kind"] == "end" })
        XCTAssertTrue(end5["params"]?["value"]?["message"]?.stringValue?.contains("cancelled") ?? false, "\(end5)")

        // What the daemon does not implement: -32601; unknown notifications are ignored.
        d.notify("textDocument/didSave", ["textDocument": ["uri": .string(Self.uri)]])
        d.notify("$/setTrace", ["value": "off"])
        XCTAssertEqual(d.call("textDocument/hover", ["textDocument": ["uri": .string(Self.uri)], "position": ["line": 0, "character": 0]]).errorCode, -32601)
        let final = edited.replacingOccurrences(of: "\nbye", with: "\nLater: P.S. bye")
        assertBuffer(d, is: final, "after the edits the daemon refused to touch")
        // An answer to a request the daemon never sent is ignored (logged), nothing breaks;
        // and the cancelled rewrite never asked for an edit.
        d.send(["jsonrpc": "2.0", "id": "parlance-9999", "result": ["applied": true]])
        XCTAssertNotNil(d.call("document/list", [:]).result)
        XCTAssertNil(d.waitFor(timeout: 0) { $0["method"] == "workspace/applyEdit" }, "a cancelled or refused rewrite sent an edit")

        XCTAssertEqual(d.call("shutdown", .null).result, [:], "params: null is accepted (eglot sends it)")
        d.notify("exit")
        XCTAssertEqual(d.waitExit(timeout: 30), 0)
    }

    /// The rewrite does not wait for the client to accept its progress token: a client that
    /// holds `window/workDoneProgress/create` unanswered gets the resolved edit (or the
    /// checks' rejection) first, and no progress; once it answers, the progress held comes,
    /// begin first and end last. (The daemon used to wait up to 10 s for the answer before
    /// the model started.)
    func testTheRewriteRunsWhileTheClientHoldsItsProgressToken() throws {
        let caps: JSONValue = ["textDocument": ["codeAction": ["resolveSupport": ["properties": ["edit"]]]],
                               "workspace": ["applyEdit": true], "window": ["workDoneProgress": true]]
        let (d, _) = try start(caps)
        let actions = d.call("textDocument/codeAction", ["textDocument": ["uri": .string(Self.uri)], "range": Self.paragraphRange(utf8: false)]).result?.arrayValue ?? []
        let id = d.start("codeAction/resolve", try element(actions, 0))
        let create = try XCTUnwrap(d.waitFor { $0["method"] == "window/workDoneProgress/create" })
        let token = try XCTUnwrap(create["params"]?["token"])
        let resolved = try XCTUnwrap(d.response(id), "no answer while the progress token was unanswered")
        XCTAssertTrue(resolved.result?["edit"] != nil || resolved["error"]?["data"]?["error"] == "rewriteRejected", "\(resolved)")
        XCTAssertEqual(d.progress(token: token), [], "no $/progress before the client accepted the token")
        d.send(["jsonrpc": "2.0", "id": create["id"] ?? .null, "result": .null])
        XCTAssertNotNil(d.waitFor { $0["method"] == "$/progress" && $0["params"]?["token"] == token && $0["params"]?["value"]?["kind"] == "end" },
                        "the progress held was not sent once the token was accepted")
        let held = d.progress(token: token)
        XCTAssertEqual(held.first?["kind"], "begin", "\(held)")
        XCTAssertFalse(held.contains { $0["kind"] == "end" }, "end comes last, once: \(held)")
    }

    func testRewriteByExecuteCommandAndApplyEditInUTF8() throws {
        // No resolve support (like eglot): actions carry a command; UTF-8 offered and chosen.
        let caps: JSONValue = ["general": ["positionEncodings": ["utf-8", "utf-16"]], "workspace": ["applyEdit": true]]
        let (d, initialized) = try start(caps)
        XCTAssertEqual(initialized.result?["capabilities"]?["positionEncoding"], "utf-8")
        let range = Self.paragraphRange(utf8: true)
        let actions = d.call("textDocument/codeAction", ["textDocument": ["uri": .string(Self.uri)], "range": range]).result?.arrayValue ?? []
        let formal = try XCTUnwrap(actions.first)
        XCTAssertEqual(formal["command"]?["command"], "parlance.rewrite")
        XCTAssertEqual(formal["command"]?["arguments"]?.arrayValue?.first, formal["data"])

        // Answered at once (null), before the model runs; the edit comes as applyEdit. A rewrite
        // the checks reject ends in a message instead (the small model's output varies with the
        // batch shapes its drafts give): the next action is tried, as a writer would.
        let apply = try XCTUnwrap(rewriteUntilApplied(d, actions), "every rewrite of the paragraph was rejected")
        let edits = apply["params"]?["edit"]?["changes"]?[Self.uri]?.arrayValue ?? []
        XCTAssertEqual(edits.count, 1, "\(apply)")
        XCTAssertEqual(edits.first?["range"], range, "UTF-8 positions")
        let newText = edits.first?["newText"]?.stringValue ?? ""
        XCTAssertFalse(newText.isEmpty)
        d.send(["jsonrpc": "2.0", "id": apply["id"]!, "result": ["applied": true]])
        d.notify("textDocument/didChange", ["textDocument": ["uri": .string(Self.uri), "version": 2],
                                            "contentChanges": [["range": range, "text": .string(newText)]]])
        assertBuffer(d, is: Self.text.replacingOccurrences(of: Self.paragraph, with: newText), "UTF-8 incremental edit")

        // The client refuses the edit: the writer is told, in words. A rewrite the checks
        // reject (the small model's output varies with the batch shapes its drafts give) ends
        // in a message instead of an edit: the next action is tried, so the refusal is tested.
        let newRange: JSONValue = ["start": range["start"]!, "end": ["line": 2, "character": .int(range["start"]!["character"]!.intValue! + newText.utf8.count)]]
        let again = d.call("textDocument/codeAction", ["textDocument": ["uri": .string(Self.uri)], "range": newRange]).result?.arrayValue ?? []
        let applyEdit2 = try XCTUnwrap(rewriteUntilApplied(d, [try element(again, 1), try element(again, 0)] + again.dropFirst(2)), "every rewrite of the paragraph was rejected")
        d.send(["jsonrpc": "2.0", "id": applyEdit2["id"]!, "result": ["applied": false, "failureReason": "read-only buffer"]])
        let shown = d.waitFor { $0["method"] == "window/showMessage" && $0["params"]?["message"]?.stringValue?.contains("did not apply") == true }
        XCTAssertTrue(shown?["params"]?["message"]?.stringValue?.contains("read-only buffer") ?? false, "\(String(describing: shown))")

        // Stale at the choice: no applyEdit, a message saying the text changed.
        let again3 = d.call("textDocument/codeAction", ["textDocument": ["uri": .string(Self.uri)], "range": newRange]).result?.arrayValue ?? []
        d.notify("textDocument/didChange", ["textDocument": ["uri": .string(Self.uri), "version": 3],
                                            "contentChanges": [["range": ["start": ["line": 0, "character": 0], "end": ["line": 0, "character": 1]], "text": "#"]]])
        XCTAssertEqual(d.call("workspace/executeCommand", ["command": "parlance.rewrite", "arguments": try element(again3, 0)["command"]?["arguments"] ?? .null]).result, .null)
        let stale = d.waitFor { $0["method"] == "window/showMessage" && $0["params"]?["message"]?.stringValue?.contains("text changed") == true }
        XCTAssertEqual(stale?["params"]?["type"], 2, "no message saying the text changed")

        // The buffer belongs to the editor: document/change and document/close refuse it.
        let change = d.call("document/change", ["uri": .string(Self.uri), "text": "replaced"])
        XCTAssertEqual(change.errorCode, -32602)
        XCTAssertEqual(change["error"]?["data"]?["error"], "editorBuffer")
        XCTAssertEqual(d.call("document/close", ["uri": .string(Self.uri)]).errorCode, -32602)
        // Bad input: an unknown command and a malformed argument are -32602.
        XCTAssertEqual(d.call("workspace/executeCommand", ["command": "other.command"]).errorCode, -32602)
        XCTAssertEqual(d.call("workspace/executeCommand", ["command": "parlance.rewrite", "arguments": [1]]).errorCode, -32602)
        // Settings change the actions offered.
        d.notify("workspace/didChangeConfiguration", ["settings": ["parlance": ["tones": ["direct"]]]])
        let titles = d.call("textDocument/codeAction", ["textDocument": ["uri": .string(Self.uri)], "range": newRange]).result?.arrayValue?.compactMap { $0["title"]?.stringValue }
        XCTAssertEqual(titles, ["Rewrite: direct", "Shorter", "Clearer"])
        // The buffer is a document like any other: an analysis by its uri.
        let tags = d.call("analysis/tags", ["uri": .string(Self.uri)])
        XCTAssertNotNil(tags.result?["tags"], "\(tags)")
    }

    /// The array's element at `i`, or a failure (not a trap) when the daemon offered fewer.
    func element(_ a: [JSONValue], _ i: Int, file: StaticString = #filePath, line: UInt = #line) throws -> JSONValue {
        try XCTUnwrap(a.indices.contains(i) ? a[i] : nil, "no element \(i) in \(a)", file: file, line: line)
    }

    /// Resolves the actions in turn, answering each progress token the daemon asks for, until
    /// one comes back with an edit rather than a "rewriteRejected" error; that response and
    /// its token's request, nil when every one was rejected.
    func resolveUntilEdited(_ d: Daemon, _ actions: [JSONValue]) throws -> (resolved: JSONValue, create: JSONValue)? {
        for action in actions {
            let id = d.start("codeAction/resolve", action)
            let create = try XCTUnwrap(d.waitFor { $0["method"] == "window/workDoneProgress/create" })
            d.send(["jsonrpc": "2.0", "id": create["id"] ?? .null, "result": .null])
            let resolved = try XCTUnwrap(d.response(id))
            if resolved.result?["edit"] != nil { return (resolved, create) }
            XCTAssertEqual(resolved["error"]?["data"]?["error"], "rewriteRejected", "\(resolved)")
            _ = d.progress(token: create["params"]?["token"] ?? .null)
        }
        return nil
    }

    /// Runs the actions' rewrite commands in turn until one ends in `workspace/applyEdit`
    /// (returned) rather than a "could not rewrite" message; nil when every one did not.
    func rewriteUntilApplied(_ d: Daemon, _ actions: [JSONValue]) throws -> JSONValue? {
        for action in actions {
            let exec = d.call("workspace/executeCommand", ["command": "parlance.rewrite", "arguments": action["command"]!["arguments"]!])
            XCTAssertEqual(exec.result, .null, "\(exec)")
            let outcome = try XCTUnwrap(d.waitFor { $0["method"] == "workspace/applyEdit"
                || ($0["method"] == "window/showMessage" && $0["params"]?["message"]?.stringValue?.contains("could not rewrite") == true) })
            if outcome["method"] == "workspace/applyEdit" { return outcome }
        }
        return nil
    }
}
