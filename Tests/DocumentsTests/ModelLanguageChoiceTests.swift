import ParlanceDocuments
import XCTest

/// The output language a request gets from the languages its model writes well: the fixed
/// table when nothing says otherwise, the model's own list when its card or the config
/// gives one, and `keep` writing the language asked whatever the list.
final class ModelLanguageChoiceTests: XCTestCase {
    func resolve(_ tag: String, _ list: [String]?, keep: Bool = false) -> LanguageSupport.Resolution? {
        LanguageSupport.resolve(tag, writesWell: list, keep: keep)
    }

    func testWithoutAListTheFixedTableDecidesAsBefore() {
        for tag in ["sv-SE", "nn-NO", "en-NZ", "es-MX", "zh-TW", "fr", "en", "de-AT", "qq"] {
            XCTAssertEqual(resolve(tag, nil), LanguageSupport.resolve(tag), tag)
            XCTAssertEqual(resolve(tag, []), LanguageSupport.resolve(tag), "an empty list says nothing: \(tag)")
        }
        let sv = resolve("sv-SE", nil)
        XCTAssertEqual(sv?.language, "en-gb")
        XCTAssertEqual(sv?.fallbackFrom, "sv-se")
        XCTAssertNil(sv?.kept)
    }

    func testALanguageTheModelWritesIsWrittenAsAsked() {
        let list = ["en", "sv", "fr-ca"]
        XCTAssertEqual(resolve("sv-SE", list), .init(language: "sv-se"), "a bare language covers its regions")
        XCTAssertEqual(resolve("sv", list), .init(language: "sv"))
        XCTAssertEqual(resolve("en", list), .init(language: "en-us"), "the table's spelling of a language it has as asked")
        XCTAssertEqual(resolve("en-NZ", list), .init(language: "en-nz"), "the model writes English: no fallback to en-au")
        XCTAssertEqual(resolve("fr", list), .init(language: "fr-ca"), "a bare code means the variant the model writes")
        let fr = resolve("fr-FR", list)
        XCTAssertEqual(fr?.language, "fr-ca")
        XCTAssertEqual(fr?.fallbackFrom, "fr-fr", "another region of it falls back to the listed variant, visibly")
        XCTAssertEqual(resolve("fy", ["fy", "nl"]), .init(language: "fy"), "a language the table does not name, listed by the model")
    }

    func testALanguageTheModelDoesNotWriteFallsBackToOneItDoes() {
        // The table's choice when the model writes it (Swedish → British English) …
        let sv = resolve("sv-SE", ["en", "de"])
        XCTAssertEqual(sv?.language, "en-gb")
        XCTAssertEqual(sv?.fallbackFrom, "sv-se")
        XCTAssertEqual(sv?.reason, "Swedish (sv-se) is not among the languages this model writes well; using British English (en-gb)")
        // … else the model's first language, as the table writes it.
        let fr = resolve("fr", ["en"])
        XCTAssertEqual(fr?.language, "en-us")
        XCTAssertEqual(fr?.fallbackFrom, "fr")
        XCTAssertEqual(resolve("nn-NO", ["de", "en"])?.language, "de-de", "Bokmål is not the model's: its first language")
        XCTAssertNil(resolve("qq", ["en"]), "a tag that names no language is refused, list or not")
        XCTAssertNil(resolve("not a tag", ["en"]))
    }

    func testKeepWritesTheLanguageAskedAndSaysWhatTheFallbackWouldHaveBeen() {
        let table = resolve("sv-SE", nil, keep: true)
        XCTAssertEqual(table?.language, "sv-se")
        XCTAssertNil(table?.fallbackFrom, "nothing fell back")
        XCTAssertEqual(table?.kept?.fallbackWouldUse, "en-gb")
        let listed = resolve("fr", ["en"], keep: true)
        XCTAssertEqual(listed?.language, "fr-fr", "kept in the table's spelling of it")
        XCTAssertEqual(listed?.kept?.fallbackWouldUse, "en-us")
        XCTAssertEqual(resolve("nn", nil, keep: true)?.language, "nn", "Nynorsk kept, not Bokmål")
        // Keep changes nothing where nothing would fall back.
        XCTAssertEqual(resolve("sv", ["sv"], keep: true), .init(language: "sv"))
        XCTAssertEqual(resolve("de", nil, keep: true), .init(language: "de-de"))
        XCTAssertNil(resolve("qq", nil, keep: true), "keep does not make an unknown tag a language")
    }

    func testListsAreNormalizedAndBadTagsNamed() {
        let n = LanguageSupport.normalize(["SV", "en_GB", "sv", "English", "x"])
        XCTAssertEqual(n.tags, ["sv", "en-gb"])
        XCTAssertEqual(n.invalid, ["English", "x"])
    }

    func testNamesAsPromptsSayThem() {
        XCTAssertEqual(LanguageSupport.displayName("sv-se"), "Swedish")
        XCTAssertEqual(LanguageSupport.displayName("en-gb"), "British English")
        XCTAssertEqual(LanguageSupport.displayName("en-us"), "English")
        XCTAssertEqual(LanguageSupport.displayName("nb-no"), "Norwegian Bokmål")
        XCTAssertEqual(LanguageSupport.displayName("zh-hans"), "Simplified Chinese")
        XCTAssertEqual(LanguageSupport.displayName("fy"), "fy", "no name known: the tag")
    }
}
