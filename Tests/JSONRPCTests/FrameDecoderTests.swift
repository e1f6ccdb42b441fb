import JSONRPC
import XCTest

final class FrameDecoderTests: XCTestCase {
    func frames(_ chunks: [String], limit: Int = 1 << 20) -> [FrameEvent] {
        var d = FrameDecoder(maxMessageSize: limit)
        var out: [FrameEvent] = []
        for c in chunks {
            d.push(Array(c.utf8))
            while let e = d.next() { out.append(e) }
        }
        return out
    }

    func lsp(_ body: String) -> String { "Content-Length: \(body.utf8.count)\r\n\r\n\(body)" }

    func testLSPFrameWholeAndByteByByte() {
        let body = #"{"jsonrpc":"2.0","id":1,"method":"x"}"#
        XCTAssertEqual(frames([lsp(body)]), [.message(Array(body.utf8), .lsp)])
        XCTAssertEqual(frames(lsp(body).map { String($0) }), [.message(Array(body.utf8), .lsp)])
    }

    func testTwoMessagesInOneRead() {
        let a = #"{"id":1}"#, b = #"{"id":2}"#
        XCTAssertEqual(frames([lsp(a) + lsp(b)]), [.message(Array(a.utf8), .lsp), .message(Array(b.utf8), .lsp)])
    }

    func testContentTypeHeaderAndCaseInsensitiveName() {
        let body = "{}"
        XCTAssertEqual(frames(["content-length: 2\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}"]),
                       [.message(Array(body.utf8), .lsp)])
    }

    func testNDJSONDetectedFromFirstByte() {
        XCTAssertEqual(frames(["{\"a\":1}\n[1,2]\r\n"]), [.message(Array("{\"a\":1}".utf8), .ndjson), .message(Array("[1,2]".utf8), .ndjson)])
        XCTAssertEqual(frames(["{\"a\":", "1}\n"]), [.message(Array("{\"a\":1}".utf8), .ndjson)])
    }

    func testMixedFramingsInOneStream() {
        XCTAssertEqual(frames(["{\"n\":1}\n" + lsp("{\"n\":2}")]).count, 2)
    }

    func kinds(_ events: [FrameEvent]) -> [String] {
        events.map {
            switch $0 {
            case .message(let b, _): return "msg:" + String(decoding: b, as: UTF8.self)
            case .error(let e, _): return "err:" + e.kind.rawValue
            }
        }
    }

    func testMissingContentLengthThenRecovers() {
        XCTAssertEqual(kinds(frames(["Content-Type: x\r\n\r\n" + lsp("{}")])), ["err:missingContentLength", "msg:{}"])
    }

    func testNegativeAndNonNumericContentLength() {
        XCTAssertEqual(kinds(frames(["Content-Length: -5\r\n\r\n" + lsp("{}")])), ["err:invalidContentLength", "msg:{}"])
        XCTAssertEqual(kinds(frames(["Content-Length: abc\r\n\r\n" + lsp("{}")])), ["err:invalidContentLength", "msg:{}"])
    }

    func testGarbageHeaderLine() {
        XCTAssertEqual(kinds(frames(["hello world\r\n\r\n" + lsp("{}")])), ["err:badHeader", "msg:{}"])
    }

    func testOversizedLSPBodyIsSkippedWithoutBuffering() {
        let big = String(repeating: "x", count: 5000)
        XCTAssertEqual(kinds(frames([lsp(big), lsp("{}")], limit: 1000)), ["err:tooLarge", "msg:{}"])
        // Delivered in pieces, the skipped body must still be skipped exactly.
        let pieces = (lsp(big) + lsp("{}")).chunked(700)
        XCTAssertEqual(kinds(frames(pieces, limit: 1000)), ["err:tooLarge", "msg:{}"])
    }

    func testOversizedLengthWithoutBodyResynchronisesAtTheNextHeader() {
        // The declared body never comes: the next header line ends the skip.
        let lie = "Content-Length: 99999999999\r\n\r\n"
        XCTAssertEqual(kinds(frames([lie + lsp("{}")], limit: 1000)), ["err:tooLarge", "msg:{}"])
        for size in [1, 3, 7, 16] {
            XCTAssertEqual(kinds(frames((lie + lsp("{\"a\":1}")).chunked(size), limit: 1000)), ["err:tooLarge", "msg:{\"a\":1}"], "chunks of \(size)")
        }
        // Part of a body arrived, then a new message: the partial body is dropped.
        XCTAssertEqual(kinds(frames(["Content-Length: 5000\r\n\r\n{\"x\":\"yyy" + "\r\n" + lsp("{}")], limit: 1000)), ["err:tooLarge", "msg:{}"])
        // "content-length:" inside a JSON string is not at a line start, so it is skipped.
        let body = "{\"x\":\"" + String(repeating: "Content-Length: 2 ", count: 100) + "\"}"
        XCTAssertEqual(kinds(frames([lsp(body), lsp("{}")], limit: 1000)), ["err:tooLarge", "msg:{}"])
    }

    func testNonObjectJSONLinesAndGarbageLinesDoNotSwallowTheNextMessage() {
        XCTAssertEqual(kinds(frames(["\"just a string\"\n" + lsp("{}")])), ["msg:\"just a string\"", "msg:{}"])
        XCTAssertEqual(kinds(frames(["42\n", "-1\n{}\n"])), ["msg:42", "msg:-1", "msg:{}"])
        XCTAssertEqual(kinds(frames(["hello there\n" + lsp("{}")])), ["err:badHeader", "msg:{}"])
        XCTAssertEqual(kinds(frames(["hello", " there\r\n", lsp("{}")])), ["err:badHeader", "msg:{}"])
    }

    /// A Content-Length too short for its body: the body's tail runs into the next header on
    /// one line; the decoder reports it and resumes at that header.
    func testShortContentLengthResumesAtTheNextHeaderOnTheSameLine() {
        let swallowed = "{\"a\":1,\r\n" + lsp("{\"m\":\"x\"}")
        let declared = 7 + 2 + 25  // the body, its line break, the next header and 3 bytes of its body
        let input = "Content-Length: \(declared)\r\n\r\n" + swallowed + lsp("{}")
        XCTAssertEqual(kinds(frames([input])), ["msg:" + String(swallowed.utf8.prefix(declared))!, "err:badHeader", "msg:{}"])
        for size in [1, 5, 13] { XCTAssertEqual(kinds(frames(input.chunked(size))).count, 3, "chunks of \(size)") }
        // The swallowed tail starts like a JSON line: it still resumes at the header after it.
        let digits = "{\"a\":\r\n" + lsp("{\"n\":12345}")
        let cut = 5 + 2 + 22 + 5  // up to the middle of 12345
        let tail = "Content-Length: \(cut)\r\n\r\n" + digits + lsp("{}")
        XCTAssertEqual(kinds(frames([tail])), ["msg:" + String(digits.utf8.prefix(cut))!, "err:badHeader", "msg:{}"])
        // …while a JSON line that merely mentions a header in a string is left alone.
        XCTAssertEqual(kinds(frames(["{\"t\":\"Content-Length: 5\"}\n{}\n"])), ["msg:{\"t\":\"Content-Length: 5\"}", "msg:{}"])
        // A header whose name is not a token is garbage too, even with a colon in it.
        XCTAssertEqual(kinds(frames(["x\"y\": z\r\n" + lsp("{}")])), ["err:badHeader", "msg:{}"])
    }

    func testOversizedNDJSONLine() {
        let big = "{\"x\":\"" + String(repeating: "y", count: 3000) + "\"}\n"
        XCTAssertEqual(kinds(frames([big + "{}\n"], limit: 1000)), ["err:tooLarge", "msg:{}"])
        XCTAssertEqual(kinds(frames((big + "{}\n").chunked(100), limit: 1000)), ["err:tooLarge", "msg:{}"])
    }

    func testTruncatedBodyReportedAtEnd() {
        var d = FrameDecoder()
        d.push(Array("Content-Length: 10\r\n\r\n{\"a\"".utf8))
        XCTAssertNil(d.next())
        guard case .error(let e, _)? = d.finish() else { return XCTFail("expected truncated") }
        XCTAssertEqual(e.kind, .truncated)
    }

    func testLastNDJSONLineWithoutNewline() {
        var d = FrameDecoder()
        d.push(Array("{\"a\":1}".utf8))
        XCTAssertNil(d.next())
        XCTAssertEqual(d.finish(), .message(Array("{\"a\":1}".utf8), .ndjson))
    }

    func testEncoderRoundTrip() {
        let body = Array("{\"é\":1}".utf8)
        var d = FrameDecoder()
        d.push(FrameEncoder.encode(body, .lsp) + FrameEncoder.encode(body, .ndjson))
        XCTAssertEqual(d.next(), .message(body, .lsp))
        XCTAssertEqual(d.next(), .message(body, .ndjson))
    }
}

extension String {
    func chunked(_ n: Int) -> [String] {
        var out: [String] = []
        var s = Substring(self)
        while !s.isEmpty {
            out.append(String(s.prefix(n)))
            s = s.dropFirst(n)
        }
        return out
    }
}
