import ParlanceEngine
@testable import ParlanceFeatures
import XCTest

/// The pool's routing rule and its prefix index, without servers.
final class PoolRouterTests: XCTestCase {
    let policy = PoolPolicy()

    func candidate(_ i: Int, inFlight: Int = 0, capacity: Int = 2, cached: Int = 0, held: Int = 0, weight: Double = 1) -> PoolRouter.Candidate {
        .init(index: i, weight: weight, inFlight: inFlight, capacity: capacity, predictedCached: cached, heldBlocks: held)
    }

    func testTheEndpointHoldingThePrefixCostsLeast() {
        let pick = PoolRouter.choose([candidate(0), candidate(1, cached: 900), candidate(2)], promptTokens: 1000, policy: policy)
        XCTAssertEqual(pick, 1)
    }

    func testWeightMakesASlowEndpointDearer() {
        // Same uncached work, but endpoint 0 costs three times as much per token.
        XCTAssertEqual(PoolRouter.choose([candidate(0, weight: 3), candidate(1)], promptTokens: 500, policy: policy), 1)
    }

    func testLoadIsPricedBesideTheCache() {
        // Endpoint 1 holds a quarter of the prompt with one of its four places busy: 750 + 1000 × 1/4 = 1000,
        // against endpoint 0's 1000 uncached tokens at no load: a tie, broken by fewer calls in flight.
        XCTAssertEqual(PoolRouter.choose([candidate(0, capacity: 4), candidate(1, inFlight: 1, capacity: 4, cached: 250)], promptTokens: 1000, policy: policy), 0)
        // Holding more of the prompt (200 + 250), it wins despite the load.
        XCTAssertEqual(PoolRouter.choose([candidate(0, capacity: 4), candidate(1, inFlight: 1, capacity: 4, cached: 800)], promptTokens: 1000, policy: policy), 1)
    }

    func testLoadWinsOverAffinityWhenBadlyImbalanced() {
        // Endpoint 1 holds the whole prompt, but 7 of its 8 places are busy while endpoint 0 is idle:
        // its load 0.875 is at least 0.5 above 0 and 1.5 times it, so the idle endpoint serves.
        let busy = candidate(1, inFlight: 7, capacity: 8, cached: 990)
        XCTAssertEqual(PoolRouter.choose([candidate(0, capacity: 8), busy], promptTokens: 1000, policy: policy), 0)
        // Moderately busy (3 of 8, 0.375 above): affinity still wins.
        XCTAssertEqual(PoolRouter.choose([candidate(0, capacity: 8), candidate(1, inFlight: 3, capacity: 8, cached: 990)], promptTokens: 1000, policy: policy), 1)
    }

    func testTiesGoToFewerInFlightThenTheEmptiestCacheThenTheListedOrder() {
        XCTAssertEqual(PoolRouter.choose([candidate(0, held: 5), candidate(1, held: 2), candidate(2, held: 2)], promptTokens: 0, policy: policy), 1)
        XCTAssertEqual(PoolRouter.choose([candidate(0), candidate(1)], promptTokens: 0, policy: policy), 0)
        XCTAssertNil(PoolRouter.choose([], promptTokens: 100, policy: policy))
    }

    func testBlocksAreChainedSoOnlyAPrefixMatches() {
        let doc = String(repeating: "The harbour renovation cost 130 euros in week one. ", count: 20)
        let a = PrefixIndex.hashes([ChatMessage(.system, "Answer briefly."), ChatMessage(.user, doc + "Who paid?")], blockBytes: 128)
        let b = PrefixIndex.hashes([ChatMessage(.system, "Answer briefly."), ChatMessage(.user, doc + String(repeating: "When is the next review of the harbour? ", count: 8))], blockBytes: 128)
        let c = PrefixIndex.hashes([ChatMessage(.system, "Answer at length."), ChatMessage(.user, doc + "Who paid?")], blockBytes: 128)
        var index = PrefixIndex(maxBlocks: 1000)
        index.record(a.hashes)
        let shared = index.match(b.hashes).blocks
        XCTAssertGreaterThan(shared, 5, "the same document after the same system prompt matches")
        XCTAssertLessThan(shared, b.hashes.count, "the different question does not")
        XCTAssertEqual(index.match(c.hashes).blocks, 0, "the same text after a different first block is not a prefix")
        XCTAssertEqual(a.totalBytes, Array("system".utf8).count + 1 + Array("Answer briefly.".utf8).count + 1
            + Array("user".utf8).count + 1 + Array((doc + "Who paid?").utf8).count + 1)
    }

    func testForgettingDropsWhatWasUsedNoLaterThanTheEvictedEntry() {
        var index = PrefixIndex(maxBlocks: 1000)
        index.record([1, 2, 3])
        let old = index.match([1, 2, 3]).oldest
        index.record([7, 8])
        index.forget(usedBy: try! XCTUnwrap(old))
        XCTAssertEqual(index.match([1, 2, 3]).blocks, 0)
        XCTAssertEqual(index.match([7, 8]).blocks, 2)
    }

    func testTheIndexKeepsTheMostRecentlyUsedBlocksWithinItsBound() {
        var index = PrefixIndex(maxBlocks: 16)
        for i in 0..<40 { index.record([UInt64(i)]) }
        XCTAssertLessThanOrEqual(index.count, 16)
        XCTAssertEqual(index.match([39]).blocks, 1, "the newest block stays")
        XCTAssertEqual(index.match([0]).blocks, 0, "the oldest went")
    }
}
