import Foundation
import JSONRPC
import ParlanceDocuments
import ParlanceEngine
@testable import ParlanceFeatures
import ParlanceJSON
import ParlanceProtocol
import XCTest

/// Where a model's languages come from: the config file's `languages` over the model file's
/// `general.languages` over the fixed table; and what a request gets from them.
final class ModelLanguagesTests: XCTestCase {
    func temporaryDirectory() throws -> String {
        let dir = NSTemporaryDirectory() + "parlance-languages-unit-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        addTeardownBlock { try? FileManager.default.removeItem(atPath: dir) }
        return dir
    }

    /// A minimal GGUF (version 3, no tensors): `general.architecture`, and `general.languages`
    /// as a string array when given.
    func gguf(languages: [String]?, at path: String) throws {
        var d = Data("GGUF".utf8)
        func le<T: FixedWidthInteger>(_ v: T) { withUnsafeBytes(of: v.littleEndian) { d.append(contentsOf: $0) } }
        func str(_ s: String) { le(UInt64(s.utf8.count)); d.append(contentsOf: Array(s.utf8)) }
        le(UInt32(3)); le(UInt64(0)); le(UInt64(languages == nil ? 2 : 3))
        str("general.architecture"); le(UInt32(8)); str("llama")
        // Another string array, not kept whole: only general.languages is.
        str("tokenizer.ggml.tokens"); le(UInt32(9)); le(UInt32(8)); le(UInt64(2)); str("a"); str("b")
        if let languages {
            str("general.languages"); le(UInt32(9)); le(UInt32(8)); le(UInt64(languages.count))
            for l in languages { str(l) }
        }
        d.append(Data(count: 4096))
        try d.write(to: URL(fileURLWithPath: path))
    }

    func testTheHeaderKeepsTheLanguagesArrayWhole() throws {
        let dir = try temporaryDirectory()
        try gguf(languages: ["en", "sv", "de"], at: dir + "/m.gguf")
        let info = try GGUFInspector.inspect(path: dir + "/m.gguf")
        XCTAssertEqual(info.languages, ["en", "sv", "de"])
        XCTAssertEqual(info.metadata["general.languages"], "[3 items]", "summarised beside the other arrays")
        XCTAssertEqual(info.metadata["tokenizer.ggml.tokens"], "[2 items]")
        XCTAssertNil(info.lists["tokenizer.ggml.tokens"], "vocabularies are not kept")
        try gguf(languages: nil, at: dir + "/bare.gguf")
        XCTAssertNil(try GGUFInspector.inspect(path: dir + "/bare.gguf").languages)
    }

    func testConfigOverFileOverTable() throws {
        let dir = try temporaryDirectory()
        try gguf(languages: ["en", "SV"], at: dir + "/carded.gguf")
        try gguf(languages: nil, at: dir + "/bare.gguf")
        try gguf(languages: ["English"], at: dir + "/misspelt.gguf")
        var configured = RegisteredModel(name: "configured", engine: EngineConfig(modelPath: dir + "/carded.gguf"), keepAlive: 0)
        configured.languages = ["fi", "en-gb"]
        let models = [
            RegisteredModel(name: "carded", engine: EngineConfig(modelPath: dir + "/carded.gguf"), keepAlive: 0),
            RegisteredModel(name: "bare", engine: EngineConfig(modelPath: dir + "/bare.gguf"), keepAlive: 0),
            RegisteredModel(name: "misspelt", engine: EngineConfig(modelPath: dir + "/misspelt.gguf"), keepAlive: 0),
            configured,
        ]
        let registry = ModelRegistry(settings: RegistrySettings(models: models))
        defer { registry.shutdown() }
        XCTAssertEqual(registry.languages("carded"), ModelLanguages(writesWell: ["en", "sv"], source: .gguf))
        XCTAssertEqual(registry.languages("configured"), ModelLanguages(writesWell: ["fi", "en-gb"], source: .config))
        XCTAssertEqual(registry.languages("bare"), ModelLanguages(writesWell: LanguageSupport.supported, source: .default))
        XCTAssertEqual(registry.languages("misspelt").source, .default, "a card with no valid tag says nothing")
        XCTAssertEqual(registry.languages("unknown").source, .default)
    }

    func testTheConfigFileNamesItsLanguagesAndRefusesBadTags() throws {
        let dir = try temporaryDirectory()
        let good = dir + "/good.json", bad = dir + "/bad.json"
        try Data(#"{"models": {"nordic": {"path": "/m/nordic.gguf", "languages": ["SV", "nb_NO", "en"]}}}"#.utf8).write(to: URL(fileURLWithPath: good))
        let r = try RegistryBuilder().build(file: try ConfigFile.load(path: good), base: EngineConfig(modelPath: ""), explicit: [], fallback: "/d.gguf")
        XCTAssertEqual(r.models.first { $0.name == "nordic" }?.languages, ["sv", "nb-no", "en"])
        try Data(#"{"models": {"nordic": {"path": "/m/nordic.gguf", "languages": ["sv", "Swedish"]}}}"#.utf8).write(to: URL(fileURLWithPath: bad))
        XCTAssertThrowsError(try ConfigFile.load(path: bad)) { e in
            XCTAssertEqual("\(e)", "config file \(bad): models.nordic.languages: 'Swedish' is not a BCP-47 language tag (e.g. sv, en-gb)")
        }
    }

    func testFallbackIsReportedAndKeepSaysTheRisk() throws {
        let gguf = ModelLanguages(writesWell: ["en"], source: .gguf)
        let fell = try OutputLanguage.resolve("sv-SE", languages: gguf, fallback: nil)
        XCTAssertEqual(fell.language, "en-gb")
        XCTAssertEqual(fell.fallbackFrom, "sv-se")
        XCTAssertNil(fell.risk(source: .gguf), "a fallback is no risk: it is reported in fallbackFrom")
        XCTAssertEqual(try OutputLanguage.resolve("sv-SE", languages: gguf, fallback: .fallback), fell, "fallback is the default")
        let kept = try OutputLanguage.resolve("sv-SE", languages: gguf, fallback: .keep)
        XCTAssertEqual(kept.language, "sv-se")
        XCTAssertNil(kept.fallbackFrom)
        let risk = try XCTUnwrap(kept.risk(source: .gguf))
        XCTAssertEqual(risk.language, "sv-se")
        XCTAssertEqual(risk.fallbackWouldUse, "en-gb")
        XCTAssertEqual(risk.source, .gguf)
        XCTAssertEqual(risk.message, "Swedish (sv-se) is not among the languages the model file names; written as asked (languageFallback: keep) instead of en-gb, so the output may be poorer")
        XCTAssertNil(try OutputLanguage.resolve("en", languages: gguf, fallback: .keep).risk(source: .gguf), "nothing kept, no risk")
        // An unknown tag: -32010 unsupportedLanguageOrLocale with what is accepted.
        XCTAssertThrowsError(try OutputLanguage.resolve("qq", languages: ModelLanguages(writesWell: ["fy"], source: .config), fallback: .keep)) { e in
            let r = e as? ResponseError
            XCTAssertEqual(r?.code.rawValue, -32010)
            XCTAssertEqual(r?.data?["error"], "unsupportedLanguageOrLocale")
            XCTAssertEqual(r?.data?["supportedLanguages"]?.arrayValue?.last, "fy", "the model's own languages are accepted too")
            XCTAssertEqual(r?.data?["supportedLanguages"]?.arrayValue?.first, "en-us")
        }
    }

    func testProvenanceCarriesTheRisk() throws {
        var options = ResolvedOptions(nil)
        options.languageRisk = LanguageRisk(language: "sv", fallbackWouldUse: "en-gb", source: .default, message: "m")
        let p = options.provenance(LoopingModel())
        XCTAssertEqual(p.languageRisk?.language, "sv")
        let json = try JSONValue(encoding: p)
        XCTAssertEqual(json["languageRisk"]?["fallbackWouldUse"], "en-gb")
        XCTAssertNil(try JSONValue(encoding: ResolvedOptions(nil).provenance(LoopingModel()))["languageRisk"], "absent unless kept")
    }
}
