import JSONRPC
import ParlanceEngine
import ParlanceJSON
import ParlanceProtocol

/// What a handler gets besides its params: who asked, how to report progress, and the
/// services it may use. Created by the server for each request.
public struct RequestContext: Sendable {
    public let id: RequestID
    public private(set) var progress: ProgressReporter
    public let services: Services
    /// The open documents this request named, as they were when it arrived (nil: not
    /// claimed, read the store as it is now).
    public private(set) var documents: [String: OpenDocument]? = nil
    /// The model the request asked for (by name or by its routes), and the models it holds
    /// until it is answered.
    public private(set) var model = ModelChoice()
    public private(set) var modelUses = ModelUses()

    public init(id: RequestID, progress: ProgressReporter, services: Services) {
        self.id = id
        self.progress = progress
        self.services = services
    }

    /// This context with a snapshot of the documents `params` names (when it names any).
    /// Called in arrival order, before the request's work starts.
    public func claimDocuments(_ params: some Sendable) async -> RequestContext {
        guard let refs = params as? any DocumentReferencing else { return self }
        return await claimDocuments(refs.documentURIs)
    }

    public func claimDocuments(_ uris: [String]) async -> RequestContext {
        var c = self
        var docs = documents ?? [:]
        for uri in uris where docs[uri] == nil {
            if let d = await services.documents.get(uri) { docs[uri] = d }
        }
        c.documents = docs
        return c
    }

    /// The same request (and claims) reporting progress elsewhere (a part of its work).
    public func with(progress: ProgressReporter) -> RequestContext {
        var c = self
        c.progress = progress
        return c
    }

    /// An open document: the claimed snapshot when this request claimed documents.
    public func document(_ uri: String) async -> OpenDocument? {
        if let documents { return documents[uri] }
        return await services.documents.get(uri)
    }

    /// The same request choosing its model: `name` (params' `model`) or else `routes`.
    /// An unknown name is -32602 here, before any work.
    public func choosingModel(_ name: String?, routes: [String]) throws -> RequestContext {
        // A registered name, or a model on disk by its store name or path (added now).
        if let name { _ = try services.models.resolve(ModelChoice(name: name, routes: [])) }
        var c = self
        c.model = ModelChoice(name: name, routes: routes)
        return c
    }

    /// The registry name of the model this request uses.
    public func modelName() throws -> String { try services.models.resolve(model) }

    /// The request's model (or `name`, a session's), loading it when needed (progress
    /// phase `loading`) and held until the request is answered; a typed error when
    /// unavailable.
    public func engine(model name: String? = nil) async throws -> any LanguageModel {
        let name = try name ?? modelName()
        let engine = try await services.models.acquire(name, progress: progress)
        if !modelUses.add(name) { services.models.release(name) }
        return engine
    }

    /// Runs work that outlives the request's answer (an LSP rewrite answered at once, a
    /// prewarm) holding its own models, released when `body` returns.
    public func detached<T: Sendable>(_ body: @Sendable (RequestContext) async throws -> T) async rethrows -> T {
        var c = self
        c.modelUses = ModelUses()
        defer { c.modelUses.close(services.models) }
        return try await body(c)
    }
}

/// Sends `$/progress` for one work-done token (or nothing when the client gave none).
public struct ProgressReporter: Sendable {
    public let token: JSONValue?
    let send: @Sendable (JSONValue) -> Void

    public init(token: JSONValue?, send: @escaping @Sendable (JSONValue) -> Void) {
        self.token = token
        self.send = send
    }

    public static let none = ProgressReporter(token: nil, send: { _ in })
    public var isActive: Bool { token != nil }

    public func callAsFunction(_ value: Progress.Value) {
        guard let token else { return }
        send(["token": token, "value": value.json])
    }

    public func begin(_ title: String) { self(.init(kind: .begin, title: title, percentage: 0, cancellable: true)) }
    public func end(_ message: String) { self(.init(kind: .end, message: message)) }
}
