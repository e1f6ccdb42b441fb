import JSONRPC
import ParlanceJSON
import XCTest

final class MessageTests: XCTestCase {
    func decode(_ s: String) -> Result<Message, MessageDecodeFailure> { Message.decode(try! JSONParser.parse(s)) }

    func testErrorCodesArePinned() {
        XCTAssertEqual(ErrorCode.parseError.rawValue, -32700)
        XCTAssertEqual(ErrorCode.invalidRequest.rawValue, -32600)
        XCTAssertEqual(ErrorCode.methodNotFound.rawValue, -32601)
        XCTAssertEqual(ErrorCode.invalidParams.rawValue, -32602)
        XCTAssertEqual(ErrorCode.internalError.rawValue, -32603)
        XCTAssertEqual(ErrorCode.serverNotInitialized.rawValue, -32002)
        XCTAssertEqual(ErrorCode.requestCancelled.rawValue, -32800)
        XCTAssertEqual(ErrorCode.contentModified.rawValue, -32801)
        XCTAssertEqual(ErrorCode.requestFailed.rawValue, -32803)
    }

    func testRequestNotificationResponse() throws {
        XCTAssertEqual(try decode(#"{"jsonrpc":"2.0","id":3,"method":"m","params":{"a":1}}"#).get(),
                       .request(id: .int(3), method: "m", params: ["a": 1]))
        XCTAssertEqual(try decode(#"{"jsonrpc":"2.0","id":"x","method":"m"}"#).get(), .request(id: .string("x"), method: "m", params: nil))
        XCTAssertEqual(try decode(#"{"jsonrpc":"2.0","method":"n"}"#).get(), .notification(method: "n", params: nil))
        // `"params": null` (eglot's shutdown) is no params.
        XCTAssertEqual(try decode(#"{"jsonrpc":"2.0","id":2,"method":"shutdown","params":null}"#).get(), .request(id: .int(2), method: "shutdown", params: nil))
        XCTAssertEqual(try decode(#"{"jsonrpc":"2.0","id":1,"result":null}"#).get(), .response(id: .int(1), result: .null))
    }

    func failure(_ s: String) -> MessageDecodeFailure? {
        if case .failure(let f) = decode(s) { return f }
        return nil
    }

    func testInvalidRequestsKeepTheirIdWhenReadable() {
        let f = failure(#"{"id":7,"method":"m"}"#)
        XCTAssertEqual(f?.id, .int(7))
        XCTAssertEqual(f?.error.code, .invalidRequest)
        XCTAssertTrue(f?.error.message.contains("jsonrpc") ?? false)
        XCTAssertEqual(failure(#"{"jsonrpc":"1.0","id":1,"method":"m"}"#)?.error.code, .invalidRequest)
        XCTAssertEqual(failure(#"{"jsonrpc":"2.0","id":1,"method":5}"#)?.id, .int(1))
        XCTAssertEqual(failure(#"{"jsonrpc":"2.0","id":1,"method":"m","params":3}"#)?.error.code, .invalidRequest)
    }

    func testBadIdTypes() {
        for id in ["null", "{}", "[1]", "true", "1.5"] {
            let f = failure(#"{"jsonrpc":"2.0","id":\#(id),"method":"m"}"#)
            XCTAssertEqual(f?.error.code, .invalidRequest, "id \(id)")
            XCTAssertNil(f?.id, "id \(id)")
        }
    }

    func testNonObjectMessage() {
        XCTAssertEqual(failure("42")?.error.code, .invalidRequest)
        XCTAssertEqual(failure(#""hi""#)?.error.message.contains("object"), true)
    }

    func testEncodingShape() {
        let e = Message.errorResponse(id: nil, error: ResponseError(.parseError, "bad")).json.serialized()
        XCTAssertEqual(e, #"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"bad"}}"#)
    }
}
