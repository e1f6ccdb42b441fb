import JSONRPC
import ParlanceJSON
import ParlanceProtocol

/// The OpenRPC document, generated from the registration list and the Swift types.
/// `parlance --print-spec` writes it; `rpc.discover` answers it; a test fails when the
/// committed `protocol/parlance.openrpc.json` differs.
public enum Spec {
    public static func openRPC(_ router: Router) -> JSONValue {
        var methods: [JSONValue] = []
        for name in router.order {
            guard let r = router.routes[name] else { continue }
            var m = JSONObject()
            m["name"] = .string(r.name)
            m["summary"] = .string(r.summary)
            m["paramStructure"] = "by-name"
            m["params"] = .array(params(of: r.paramsSchema))
            m["result"] = ["name": .string("result"), "schema": r.resultSchema]
            if r.acceptsUnknownParams { m["x-acceptsUnknownParams"] = true }
            let errors = r.errors.map { e -> JSONValue in ["code": .int(e.code), "message": .string(e.name), "data": e.data] }
            if !errors.isEmpty { m["errors"] = .array(errors) }
            if let ex = r.example {
                m["examples"] = [["name": "example", "params": .array(example(ex.params)), "result": ["name": "result", "value": ex.result]]]
            }
            methods.append(.object(m))
        }
        for n in router.notifications {
            methods.append([
                "name": .string(n.name), "summary": .string(n.summary), "paramStructure": "by-name",
                "params": .array(params(of: n.paramsSchema)), "x-notification": true, "x-direction": .string(n.direction.rawValue),
            ])
        }
        for c in router.clientMethods {
            methods.append([
                "name": .string(c.name), "summary": .string(c.summary), "paramStructure": "by-name",
                "params": .array(params(of: c.paramsSchema)), "result": ["name": "result", "schema": c.resultSchema],
                "x-direction": "serverToClient",
            ])
        }
        var errors = JSONObject()
        for e in ProtocolError.standard {
            errors[e.name] = ["code": .int(e.code), "message": .string(e.meaning)]
        }
        for e in ProtocolError.all {
            errors[e.name] = ["code": .int(e.code), "message": .string(e.meaning), "data": e.data]
        }
        return [
            "openrpc": "1.2.6",
            "info": [
                "title": "Parlance",
                "version": .string(Server.protocolVersion),
                "description": "A local language-model daemon: JSON-RPC 2.0 over stdio (LSP Content-Length framing or NDJSON). See protocol/README.md.",
            ],
            "methods": .array(methods),
            "components": ["errors": .object(errors)],
        ]
    }

    static func params(of schema: JSONValue) -> [JSONValue] {
        guard let props = schema["properties"]?.objectValue else { return [] }
        let required = Set(schema["required"]?.arrayValue?.compactMap(\.stringValue) ?? [])
        return props.map { name, s in
            var p = JSONObject()
            p["name"] = .string(name)
            if let d = s["description"] { p["description"] = d }
            p["required"] = .bool(required.contains(name))
            p["schema"] = s
            return .object(p)
        }
    }

    static func example(_ params: JSONValue) -> [JSONValue] {
        guard let o = params.objectValue else { return [] }
        return o.map { k, v in ["name": .string(k), "value": v] }
    }
}
