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

    /// The loaded engine, waiting for a load in progress; a typed error when unavailable.
    public func engine() async throws -> Engine { try await services.models.engine() }
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
        guard let v = try? JSONValue(encoding: Progress.Params(token: token, value: value)) else { return }
        send(v)
    }

    public func begin(_ title: String) { self(.init(kind: .begin, title: title, percentage: 0, cancellable: true)) }
    public func end(_ message: String) { self(.init(kind: .end, message: message)) }
}
