import JSONRPC
import ParlanceJSON
import Synchronization
import XCTest

/// Requests the server sends to the client: each answer reaches its waiter, errors and
/// timeouts are typed, cancellation tells the client, stray answers are refused.
final class OutgoingTests: XCTestCase {
    final class Wire: Sendable {
        let sent = Mutex<[JSONValue]>([])
        let arrived = AsyncStream<JSONValue>.makeStream()
        func send(_ v: JSONValue) {
            sent.withLock { $0.append(v) }
            arrived.continuation.yield(v)
        }
    }

    func testAnswersReachTheirWaiters() async throws {
        let wire = Wire()
        let out = Outgoing(send: wire.send)
        async let first = out.request("workspace/applyEdit", ["edit": [:]])
        async let second = out.request("window/workDoneProgress/create", ["token": "t"])
        var it = wire.arrived.stream.makeAsyncIterator()
        var ids: [String: RequestID] = [:]
        for _ in 0..<2 {
            let next = await it.next()
            let m = try XCTUnwrap(next)
            ids[m["method"]!.stringValue!] = RequestID(m["id"]!)
        }
        // Answered in the other order; an unknown id is refused.
        XCTAssertTrue(out.receive(.response(id: ids["window/workDoneProgress/create"]!, result: .null)))
        XCTAssertFalse(out.receive(.response(id: .string("parlance-999"), result: .null)))
        XCTAssertTrue(out.receive(.errorResponse(id: ids["workspace/applyEdit"]!, error: ResponseError(.requestFailed, "no"))))
        let secondResult = try await second
        XCTAssertEqual(secondResult, .null)
        do {
            _ = try await first
            XCTFail("an error answer must throw")
        } catch let e as ResponseError {
            XCTAssertEqual(e.code, .requestFailed)
        }
        // Answered twice: the second is refused.
        XCTAssertFalse(out.receive(.response(id: ids["workspace/applyEdit"]!, result: .null)))
        XCTAssertEqual(out.pendingCount, 0)
    }

    /// A limit so short that the timer may fire before the waiter is registered still ends
    /// the request with its timeout (never a waiter left hanging): many at once, both orders.
    func testTimeoutsShorterThanTheRegistrationStillEndTheRequest() async throws {
        let wire = Wire()
        let out = Outgoing(send: { wire.send($0) })
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<200 {
                group.addTask {
                    do {
                        _ = try await out.request("tool/call", [:], timeout: .zero)
                        XCTFail("no answer: must time out")
                    } catch let f as Outgoing.Failure {
                        XCTAssertEqual(f, .timedOut(method: "tool/call", milliseconds: 0))
                    }
                }
            }
            try await group.waitForAll()
        }
        XCTAssertEqual(out.pendingCount, 0)
    }

    /// Every request sent and then abandoned at its timeout is followed by a cancel notice,
    /// sent before its waiter resumes (once resumed, the waiter forgets the request).
    func testEveryTimedOutRequestThatWasSentIsCancelled() async throws {
        let wire = Wire()
        let out = Outgoing(send: { wire.send($0) })
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<300 {
                group.addTask {
                    do {
                        _ = try await out.request("tool/call", [:], timeout: .milliseconds(2))
                        XCTFail("no answer: must time out")
                    } catch is Outgoing.Failure {}
                }
            }
            try await group.waitForAll()
        }
        let sent = wire.sent.withLock { $0 }
        let requested = Set(sent.filter { $0["method"] == "tool/call" }.compactMap { $0["id"] })
        let cancelled = Set(sent.filter { $0["method"] == "$/cancelRequest" }.compactMap { $0["params"]?["id"] })
        XCTAssertFalse(requested.isEmpty)
        XCTAssertEqual(requested.subtracting(cancelled).count, 0, "sent, timed out, never cancelled")
        XCTAssertEqual(cancelled, requested)
    }

    func testCancellationTellsTheClientAndTimeoutsAreTyped() async throws {
        let wire = Wire()
        let out = Outgoing(send: wire.send)
        let task = Task { try await out.request("workspace/applyEdit", [:]) }
        var it = wire.arrived.stream.makeAsyncIterator()
        let sentRequest = await it.next()
        let request = try XCTUnwrap(sentRequest)
        task.cancel()
        let sentCancel = await it.next()
        let cancel = try XCTUnwrap(sentCancel)
        XCTAssertEqual(cancel["method"], "$/cancelRequest")
        XCTAssertEqual(cancel["params"]?["id"], request["id"])
        do {
            _ = try await task.value
            XCTFail("cancelled")
        } catch is CancellationError {}
        XCTAssertFalse(out.receive(.response(id: RequestID(request["id"]!)!, result: .null)), "a late answer is refused")

        do {
            _ = try await out.request("workspace/applyEdit", [:], timeout: .milliseconds(1))
            XCTFail("no answer: must time out")
        } catch let f as Outgoing.Failure {
            XCTAssertEqual(f, .timedOut(method: "workspace/applyEdit", milliseconds: 1))
        }
        out.close()
        do {
            _ = try await out.request("workspace/applyEdit", [:])
            XCTFail("closed")
        } catch let f as Outgoing.Failure {
            XCTAssertEqual(f, .closed(method: "workspace/applyEdit"))
        }
    }
}
