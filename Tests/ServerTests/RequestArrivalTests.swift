import XCTest
@testable import ParlanceEngine

/// The engine's waiting line is in the order the client requests arrived: a later
/// generation of an earlier request (a second attempt) goes before the generations of
/// requests that arrived after it.
final class RequestArrivalTests: XCTestCase {
    func testALaterGenerationOfAnEarlierRequestWaitsOnlyBehindEarlierRequests() async throws {
        let path = try XCTUnwrap(ProcessInfo.processInfo.environment["PARLANCE_DEFAULT_MODEL"], "set by scripts/setup.sh")
        let engine = try Engine(config: EngineConfig(modelPath: path, contextSize: 512, threads: 1, parallel: 1, cachedSequences: 0))
        let first = ContinuousClock.now
        let second = first.advanced(by: .milliseconds(1))
        func request(_ text: String, tokens: Int) -> GenerationRequest {
            GenerationRequest(prompt: engine.tokenize(text), settings: .init(sampling: SamplingOptions(temperature: 0), maxTokens: tokens))
        }
        func queuedMs(_ events: AsyncThrowingStream<GenerationEvent, any Error>) async throws -> Double {
            for try await e in events { if case .done(let r) = e { return r.stats.queuedMs } }
            return -1
        }
        // The one slot is taken by request 1's first generation; request 2's waits; then
        // request 1 submits its second generation.
        let running = RequestArrival.$instant.withValue(first) { engine.generate(request("One, two, three,", tokens: 24)) }
        var iterator = running.makeAsyncIterator()
        while let e = try await iterator.next() { if case .text = e { break } }
        let later = RequestArrival.$instant.withValue(second) { engine.generate(request("Red, green,", tokens: 8)) }
        let again = RequestArrival.$instant.withValue(first) { engine.generate(request("Monday, Tuesday,", tokens: 8)) }
        while let _ = try await iterator.next() {}
        let (laterQueued, againQueued) = (try await queuedMs(later), try await queuedMs(again))
        // Submitted after it, request 1's second generation is admitted first: it waits less.
        XCTAssertGreaterThan(laterQueued, againQueued)
        XCTAssertGreaterThan(againQueued, 0)
    }
}
