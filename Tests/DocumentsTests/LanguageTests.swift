import ParlanceDocuments
import XCTest

final class LanguageDetectorTests: XCTestCase {
    func testShortSamples() {
        let samples: [(String, String)] = [
            ("en", "The meeting is about the budget and we will decide what to do with the money."),
            ("fr", "Nous avons parlé de la réunion et il est très important que vous soyez là."),
            ("de", "Wir haben über das Treffen gesprochen und es ist sehr wichtig, dass du auch kommst."),
            ("it", "Abbiamo parlato della riunione e non è molto importante per noi che tu sia qui."),
            ("es", "Hablamos de la reunión y es muy importante que estés aquí con nosotros porque hay mucho que hacer."),
            ("pt", "Nós falamos sobre a reunião e é muito importante que você esteja aqui também, não é?"),
            ("nl", "We hebben het over de vergadering gehad en het is heel belangrijk dat je er ook bij bent."),
            ("sv", "Vi pratade om mötet och det är mycket viktigt att du också är här."),
            ("da", "Vi talte om mødet, og det er meget vigtigt, at du også er her, hvad siger du?"),
            ("nb", "Vi snakket om møtet, og det er veldig viktig at du også er her, hva sier du?"),
            ("tr", "Toplantı hakkında konuştuk ve bu çok önemli, çünkü senin de burada olman gerekiyor."),
            ("vi", "Chúng tôi đã nói về cuộc họp và điều này rất quan trọng với bạn."),
            ("ja", "今日は会議について話しました。とても大切です。"),
            ("ko", "우리는 회의에 대해 이야기했습니다. 매우 중요합니다."),
            ("zh-hans", "我们今天讨论了这个会议，这个问题很重要。"),
            ("zh-hant", "我們今天討論了這個會議，這個問題很重要。"),
            ("ru", "Мы говорили о встрече, и это очень важно."),
            ("uk", "Ми говорили про зустріч, і це дуже важливо для всіх."),
            ("ar", "تحدثنا عن الاجتماع وهذا مهم جدا."),
        ]
        for (code, text) in samples {
            let r = LanguageDetector.detect(text)
            XCTAssertEqual(r.code, code, text)
            XCTAssertGreaterThan(r.confidence, 0.3, text)
            XCTAssertLessThanOrEqual(r.confidence, 1.0, text)
        }
    }

    /// A short Norwegian text ties with Danish on shared function words ("vi", "til", "og",
    /// "ikke", "kan"): it is Bokmål, which Parlance writes, not English.
    func testNorwegianThatTiesWithDanishIsNorwegian() {
        for text in ["Hei alle sammen, vi flytter møtet til fredag klokka 14. Ta med tallene for mars, og si ifra hvis dere ikke kan komme.",
                     "Vi flytter møtet til fredag, og det er ikke bra."] {
            XCTAssertEqual(LanguageDetector.detect(text).code, "nb", text)
        }
        // A tie of other languages is still English, with low confidence.
        let r = LanguageDetector.detect("de la")
        XCTAssertEqual(r.code, "en")
        XCTAssertLessThan(r.confidence, 0.5)
    }

    func testShortOrAmbiguousTextIsLowConfidenceEnglish() {
        for text in ["", "ok", "12345 67", "Hmm.", "GGUF Q4_K_M"] {
            let r = LanguageDetector.detect(text)
            XCTAssertEqual(r.code, "en", text)
            XCTAssertLessThan(r.confidence, 0.5, text)
        }
    }

    func testEveryDetectedCodeResolves() {
        for text in ["Мы говорили о встрече", "Ми говорили про зустріч, і це", "تحدثنا عن الاجتماع", "می خواهم چیزی بگویم پس",
                     "Γεια σου κόσμε", "שלום עולם", "नमस्ते दुनिया", "สวัสดีชาวโลก", "我們討論了這個會議"] {
            XCTAssertNotNil(LanguageSupport.resolve(LanguageDetector.detect(text).code), text)
        }
    }
}

final class LanguageSupportTests: XCTestCase {
    func testSupportedList() {
        XCTAssertEqual(LanguageSupport.supported, [
            "en-us", "en-gb", "en-au", "fr-fr", "fr-ca", "de-de", "it-it", "pt-br", "es-es", "es-us", "es-419",
            "zh-hans", "ja-jp", "ko-kr", "nb-no",
        ])
        for tag in LanguageSupport.supported {
            XCTAssertEqual(LanguageSupport.resolve(tag), .init(language: tag))
            XCTAssertEqual(LanguageSupport.resolve(tag.uppercased().replacingOccurrences(of: "-", with: "_")), .init(language: tag))
        }
    }

    func testBareCodesGetDefaultRegions() {
        let expected = ["en": "en-us", "fr": "fr-fr", "de": "de-de", "it": "it-it", "es": "es-es", "pt": "pt-br",
                        "ja": "ja-jp", "ko": "ko-kr", "zh": "zh-hans", "EN": "en-us", " Ja ": "ja-jp"]
        for (tag, lang) in expected { XCTAssertEqual(LanguageSupport.resolve(tag), .init(language: lang), tag) }
        XCTAssertEqual(LanguageSupport.resolve("zh-Hans-CN"), .init(language: "zh-hans"))
        XCTAssertEqual(LanguageSupport.resolve("zh_CN"), .init(language: "zh-hans"))
        XCTAssertEqual(LanguageSupport.resolve("en-Latn-US"), .init(language: "en-us"))
        XCTAssertEqual(LanguageSupport.resolve("en-US-u-ca-gregory"), .init(language: "en-us"))
    }

    func assertFallback(_ tag: String, to language: String, from: String, file: StaticString = #filePath, line: UInt = #line) {
        guard let r = LanguageSupport.resolve(tag) else { return XCTFail("\(tag) not recognised", file: file, line: line) }
        XCTAssertEqual(r.language, language, tag, file: file, line: line)
        XCTAssertEqual(r.fallbackFrom, from, tag, file: file, line: line)
        XCTAssertFalse((r.reason ?? "").isEmpty, "fallback without a reason: \(tag)", file: file, line: line)
    }

    func testSeedFallbacks() {
        assertFallback("pt-PT", to: "pt-br", from: "pt-pt")
        assertFallback("zh-Hant", to: "zh-hans", from: "zh-hant")
        assertFallback("zh-TW", to: "zh-hans", from: "zh-tw")
        assertFallback("zh_HK", to: "zh-hans", from: "zh-hk")
        assertFallback("zh-Hant-TW", to: "zh-hans", from: "zh-hant-tw")
        // Bokmål is supported; Nynorsk and generic Norwegian fall back to it, reported.
        XCTAssertEqual(LanguageSupport.resolve("nb"), .init(language: "nb-no"))
        XCTAssertEqual(LanguageSupport.resolve("nb-NO"), .init(language: "nb-no"))
        for tag in ["nn", "no", "nn_NO", "no-NO"] {
            assertFallback(tag, to: "nb-no", from: tag.lowercased().replacingOccurrences(of: "_", with: "-"))
        }
        XCTAssertTrue(LanguageSupport.resolve("nn")?.reason?.contains("Bokmål") ?? false)
        for tag in ["sv", "sv-SE", "da", "da-DK", "nl", "nl-NL", "tr", "tr-TR", "vi", "vi-VN"] {
            assertFallback(tag, to: "en-gb", from: tag.lowercased())
        }
        for tag in ["ru", "ar", "hi", "pl", "uk", "el", "he", "th", "fa", "id", "fi", "cs", "ro", "hu", "fil"] {
            assertFallback(tag, to: "en-gb", from: tag)
        }
    }

    func testRegionalVariantsFallBackVisibly() {
        assertFallback("fr-BE", to: "fr-fr", from: "fr-be")
        assertFallback("de-AT", to: "de-de", from: "de-at")
        assertFallback("es-MX", to: "es-419", from: "es-mx")
        assertFallback("es-AD", to: "es-es", from: "es-ad")
        assertFallback("en-IE", to: "en-gb", from: "en-ie")
        assertFallback("en-NZ", to: "en-au", from: "en-nz")
        assertFallback("en-CA", to: "en-us", from: "en-ca")
        assertFallback("ja-US", to: "ja-jp", from: "ja-us")
    }

    func testGarbageIsNil() {
        for tag in ["", " ", "x", "english", "123", "e1", "en--us", "en-", "-en", "qq", "zz-ZZ", "en us", "🙂", "en-toolongsubtag"] {
            XCTAssertNil(LanguageSupport.resolve(tag), tag)
        }
    }
}
